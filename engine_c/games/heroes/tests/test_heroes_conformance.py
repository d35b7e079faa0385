"""Heroes' conformance replayer (conformance.py) on records of the public traces
(../shared/conformance/heroes-public.jsonl, or $MAAG_SHARED/conformance/...; that every step
of them matches is tests/engine/test_conformance.py's): a corrupted trace must be reported.
The recorded states also serve as realistic positions for the enumeration/validation
agreement and for the heuristic, rating and pruner oracles."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import heroes_oracle as oracle
import pytest
from heroes_position import game
from maag.engine import Action
from maag.engine.conformance import read_records, run
from test_heroes_properties import CHECK, code_space


@pytest.fixture(scope="module")
def records(public_trace: Callable[[str], Path]) -> list[dict[str, Any]]:
    return read_records(public_trace("heroes"))


def _write(tmp_path: Path, recs: list[dict[str, Any]], name: str = "heroes-trace.jsonl") -> str:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    return str(path)


def test_corrupted_records_are_reported(records: list[dict[str, Any]], tmp_path: Path) -> None:
    recs = [json.loads(json.dumps(r)) for r in records[:4]]
    out = io.StringIO()
    assert run(_write(tmp_path, recs), out=out) == 0, out.getvalue()
    assert out.getvalue().splitlines()[-1] == "conformance: 4/4 steps match"

    recs[1]["next"]["board"][0]["hp"] -= 1                  # an effect
    recs[2]["n_legal"] += 1                                 # the legal-action count
    recs[3]["next"]["deck_seed"]["1"] += 1                  # a seed
    out = io.StringIO()
    assert run(_write(tmp_path, recs), out=out) == 1
    text = out.getvalue()
    assert text.splitlines()[-1] == "conformance: 1/4 steps match"
    assert "game 0 step 1" in text and "hp" in text
    assert "n_legal: expected" in text and "deck_seed" in text


def test_an_illegal_recorded_action_is_reported(records: list[dict[str, Any]], tmp_path: Path) -> None:
    rec = json.loads(json.dumps(records[0]))
    rec["action"] = {"type": "attack", "from": [0, 0], "to": [1, 0]}
    out = io.StringIO()
    assert run(_write(tmp_path, [rec]), out=out) == 1
    assert "rejected" in out.getvalue() and "0/1 steps match" in out.getvalue()


def test_recorded_actions_are_in_the_legal_list(records: list[dict[str, Any]]) -> None:
    """Every recorded action except end_turn is in the engine's enumeration (with the
    effect as its type: the reference's cleric 'heal' onto an enemy KO'd unit is a move)."""
    relabelled = 0
    for rec in records:
        s = game(rec["map"]).state_from_json(rec["state"], rng_seed=0)
        action = {k: v for k, v in rec["action"].items() if k != "engine_label"}
        code = s.game.action(action).code
        if action["type"] != "end_turn":
            assert code in s.legal_codes(), (rec["game"], rec["step"])
        relabelled += rec["action"].get("engine_label") == "heal"
    assert relabelled == 25  # the README's count for the public set


def test_check_agrees_with_the_enumeration_on_recorded_states(records: list[dict[str, Any]]) -> None:
    for rec in records[::25]:
        s = game(rec["map"]).state_from_json(rec["state"], rng_seed=0)
        buf = s.cdata
        accepted = {c for c in code_space(rec["map"]) if CHECK(buf, c) == 0}
        assert accepted == set(s.legal_codes()), (rec["game"], rec["step"])


def test_heuristic_rating_and_pruner_on_recorded_states(records: list[dict[str, Any]]) -> None:
    for rec in records[::10]:
        s = game(rec["map"]).state_from_json(rec["state"], rng_seed=0)
        j = s.to_json()
        assert (s.evaluate(0), s.evaluate(1)) == (oracle.evaluate(j, 0), oracle.evaluate(j, 1))
        acts: list[Action] = s.legal_actions()
        dicts = [a.to_dict() for a in acts]
        for a, d in zip(acts, dicts, strict=True):
            assert s.rate(a) == oracle.rate(j, d), (rec["game"], rec["step"], d)
        assert [a.to_dict() for a in s.prune(acts)] == oracle.prune(j, dicts), (rec["game"], rec["step"])
