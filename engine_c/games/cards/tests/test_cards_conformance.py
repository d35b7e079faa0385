"""The card game's conformance replayer (conformance.py) on the public traces
(../shared/conformance/cards-public.jsonl, or $MAAG_SHARED/conformance/...; that every step
of them matches is tests/engine/test_conformance.py's): a corrupted step reported, a wrong
health, a wrong legal-action count, an outcome of a random step that the engine cannot
produce. Records built by hand from engine positions check what the README's "How to
compare" asks of the replayer beyond the public steps: loaded minions keep the relative
order of the trace's `eid`, and the step that ends the game is compared on `over` and
`winner` only."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cards_position import minion, player, position
from maag.engine import State, registry
from maag.engine.conformance import read_records
from maag.engine.games.cards.conformance import trace_view


@pytest.fixture(scope="module")
def records(public_trace: Callable[[str], Path]) -> list[dict[str, Any]]:
    return read_records(public_trace("cards"))


def test_a_corrupted_step_is_reported(records: list[dict[str, Any]]) -> None:
    check = registry.get("cards").conformance
    assert check is not None
    attack = next(r for r in records if r["action"]["type"] == "ATTACK" and not r["next"]["over"])
    bad = json.loads(json.dumps(attack))
    bad["next"]["players"][bad["state"]["active"] ^ 1]["hero"]["hp"] += 1
    assert any("hero.hp" in line for line in check(bad))
    bad = json.loads(json.dumps(attack))
    bad["n_legal"] += 1
    assert any("n_legal" in line for line in check(bad))


def test_an_unreachable_random_outcome_is_reported(records: list[dict[str, Any]]) -> None:
    check = registry.get("cards").conformance
    assert check is not None
    missiles = next(r for r in records if r["action"].get("card") == "M01" and r["random"]
                    and not r["next"]["over"])
    assert check(missiles) == []
    bad = json.loads(json.dumps(missiles))
    enemy = bad["next"]["players"][bad["state"]["active"] ^ 1]
    enemy["hero"]["hp"] -= 10  # more damage than three missiles can deal
    assert check(bad)


def test_random_steps_are_about_a_third_of_the_trace(records: list[dict[str, Any]]) -> None:
    # the replayer must exercise chance: draws on END_TURN and the random picks
    assert sum(r["random"] for r in records) > 500
    assert {r["action"].get("card") for r in records if r["random"]} >= {"M01", "P10", "N13"}


# ---- records built by hand ------------------------------------------------------------------

EXPLOSION = {"type": "PLAY", "hand_index": 0, "card": "M03", "target": None}  # Arcane Explosion


def _record(st: State, nxt: dict[str, Any]) -> dict[str, Any]:
    """A trace record of Arcane Explosion, played from hand slot 0 at `st`."""
    return {"game": 0, "step": 0, "n_legal": len(st.legal_codes()), "state": trace_view(st.to_json()),
            "action": EXPLOSION, "next": nxt, "random": False}


def _golem_and_abomination(golem_eid: int, abomination_eid: int, enemy_hp: int = 30) -> State:
    board = [minion("N17", eid=golem_eid, hp=1), minion("N27", eid=abomination_eid, hp=1)]
    return position(player(hand=["M03"]), p2=player("paladin", hp=enemy_hp, board=board))


def _played(st: State) -> dict[str, Any]:
    after = st.clone()
    after.apply({"type": "play", "hand_index": 0, "card": "M03", "target": None})
    return trace_view(after.to_json())


@pytest.mark.parametrize("golem_first", [True, False])
def test_loaded_minions_keep_the_order_of_the_traces_eids(golem_first: bool) -> None:
    # The golem's and the Abomination's deaths resolve in the order of their eids: the
    # Damaged Golem dies of the Abomination's damage only when the golem's eid is lower.
    # The trace's eids are not the engine's; only their order may count.
    check = registry.get("cards").conformance
    assert check is not None
    st = _golem_and_abomination(5, 6) if golem_first else _golem_and_abomination(6, 5)
    nxt = _played(st)
    assert [m["card"] for m in nxt["players"][1]["board"]] == ([] if golem_first else ["T_GOLEM"])
    rec = _record(st, nxt)
    low, high = 40, 900
    order = (low, high) if golem_first else (high, low)
    for m, eid in zip(rec["state"]["players"][1]["board"], order, strict=True):
        m["eid"] = eid
    assert check(rec) == []
    for m, eid in zip(rec["state"]["players"][1]["board"], reversed(order), strict=True):
        m["eid"] = eid  # the other order: the recorded outcome is not the engine's any more
    assert any(line.strip().startswith("players[1].board") for line in check(rec))


def test_the_step_that_ends_the_game_is_compared_on_over_and_winner_only() -> None:
    # The Abomination's deathrattle kills the enemy hero. The reference stops at that
    # moment: the dead minions stay on the board, the golem's deathrattle does not resolve,
    # and the rest of the state keeps its values (the card is still in hand, no mana spent).
    check = registry.get("cards").conformance
    assert check is not None
    st = _golem_and_abomination(6, 5, enemy_hp=2)
    ours = _played(st)
    assert ours["over"] and ours["winner"] == 0
    stopped = json.loads(json.dumps(trace_view(st.to_json())))
    stopped.update(over=True, winner=0)
    stopped["players"][1]["hero"]["hp"] = 0
    for m in stopped["players"][1]["board"]:
        m["hp"] = 0
    assert stopped != ours
    assert check(_record(st, stopped)) == []
    assert check(_record(st, ours)) == []
    wrong = json.loads(json.dumps(stopped))
    wrong["winner"] = 1
    assert any("winner" in line for line in check(_record(st, wrong)))
    unfinished = json.loads(json.dumps(ours))
    unfinished.update(over=False, winner=None)
    assert any("over" in line for line in check(_record(st, unfinished)))
