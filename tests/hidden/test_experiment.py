"""`maag experiment hidden`: honest entrants get their seat's Observation, cheating twins the
true state; presets, statistics and the --json output (tiny iteration budgets, small map)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from maag.bots import AgentError
from maag.engine import Game, Observation
from maag.lab.hidden import CHEAT, Entrant, HiddenConfig, play_game, preset_pairs, run_pairs


def test_presets() -> None:
    cost = preset_pairs("cost", "mcts:rollout_turns=2,c=0.5", k=4)
    assert cost == [("mcts:rollout_turns=2,c=0.5", "cheat:mcts:rollout_turns=2,c=0.5"),
                    ("pimc:inner=mcts,k=4,rollout_turns=2,c=0.5",
                     "cheat:pimc:inner=mcts,k=4,rollout_turns=2,c=0.5"),
                    ("ismcts:rollout_turns=2,c=0.5", "cheat:ismcts:rollout_turns=2,c=0.5")]
    assert preset_pairs("baseline", "oep", k=8) == [("pimc:inner=oep,k=8", "oep"), ("ismcts", "oep")]
    assert preset_pairs("k", "mcts", ks=(2, 3)) == [("pimc:inner=mcts,k=2", "mcts"),
                                                    ("pimc:inner=mcts,k=3", "mcts")]
    with pytest.raises(ValueError):
        preset_pairs("nope", "mcts")
    from maag.lab import cli_experiment as cmd_experiment
    from maag.lab import hidden as experiment_hidden

    assert cmd_experiment.PRESETS == experiment_hidden.PRESETS
    for a, b in cost:
        Entrant(a), Entrant(b)  # every preset entrant is a valid spec
    with pytest.raises(AgentError):
        Entrant("cheat:nope")


def test_honest_entrants_get_observations_and_twins_the_truth() -> None:
    game = Game("heroes", {"map": "a-tiny", "draws": "random"})
    state = game.new_state(seed=4)
    honest, cheat = Entrant("mcts"), Entrant(CHEAT + "mcts")
    assert not honest.cheats and cheat.cheats and cheat.twin is not None
    seen: dict[str, Any] = {}
    real_plan = honest.agent.plan
    real_root = cheat.agent._plan_root

    def spy_plan(view: Any, *a: Any, **kw: Any) -> Any:
        seen["honest"] = view
        return real_plan(view, *a, **kw)

    def spy_root(root: Any, *a: Any, **kw: Any) -> Any:
        seen["cheat"] = root
        return real_root(root, *a, **kw)

    honest.agent.plan = spy_plan  # type: ignore[method-assign]
    cheat.agent._plan_root = spy_root  # type: ignore[method-assign]
    honest.plan(state, state.current_player, None, 50, 1)
    cheat.plan(state, state.current_player, None, 50, 1)
    assert isinstance(seen["honest"], Observation) and seen["honest"].seat == state.current_player
    assert seen["cheat"] is state


def test_peeking_twins_see_hands_and_secrets_not_the_draws() -> None:
    """peek:SPEC searches the true state with both decks in a new order: hands, secrets and
    board are the truth, each deck the same cards; an observation or a game without ordered
    decks is refused."""
    import random

    from maag.bots.cheating import PeekingAgent, shuffle_decks
    from maag.lab.hidden import PEEK

    state = Game("cards", {}).new_state(seed=11)
    truth = state.to_json()
    orders = set()
    for s in range(6):
        view = shuffle_decks(state, random.Random(s)).to_json()
        for p, q in zip(view["players"], truth["players"], strict=True):
            assert sorted(p["deck"]) == sorted(q["deck"])
            assert {k: v for k, v in p.items() if k != "deck"} == {k: v for k, v in q.items() if k != "deck"}
        orders.add(tuple(view["players"][0]["deck"]))
    assert len(orders) > 1 and state.to_json() == truth  # new orders; the state itself untouched
    peek = Entrant(PEEK + "mcts")
    assert peek.cheats and isinstance(peek.twin, PeekingAgent)
    plan = peek.plan(state, state.current_player, None, 200, 3)
    s = state.clone()
    for a in plan:
        s.apply(a)  # legal in the true game
    with pytest.raises(ValueError, match="full state"):
        peek.twin.plan(Observation.of(state, 0), iterations=10)
    with pytest.raises(ValueError, match="no decks"):
        shuffle_decks(Game("heroes", {"map": "a-tiny"}).new_state(1), random.Random(0))
    with pytest.raises(ValueError, match="no decks"):
        run_pairs([(PEEK + "mcts", "mcts")], 2, HiddenConfig(turn_ms=None, iterations=10,
                                                            game_config={"map": "a-tiny", "draws": "random"}))


def test_games_and_statistics() -> None:
    cfg = HiddenConfig(turn_ms=None, iterations=100, game_config={"map": "a-tiny", "draws": "random"})
    rec = play_game(0, 0, ("ismcts", "cheat:mcts"), 1, 77, cfg)
    assert rec.turns > 0 and not rec.forfeit and rec.winner in (0, 1, None)
    assert rec.iterations[0] == rec.iterations[1] == 100
    again = play_game(0, 0, ("ismcts", "cheat:mcts"), 1, 77, cfg)
    assert (again.winner, again.turns) == (rec.winner, rec.turns)  # iteration budgets: reproducible
    res = run_pairs([("pimc:k=2", "random"), ("random", "cheat:random")], 3, cfg, seed=3)
    assert [len(r.games) for r in res] == [4, 4]  # rounded up to even, both seats
    for r in res:
        assert sorted(g.a_seat for g in r.games) == [0, 0, 1, 1]
        seeds = [g.seed for g in r.games]
        assert seeds[0] == seeds[1] and seeds[2] == seeds[3]
        d = r.as_dict()
        assert d["games"] == 4 and 0 <= d["p_value"] <= 1
        assert d["score_ci95"][0] <= d["score"] <= d["score_ci95"][1]


def test_command_line_json() -> None:
    maag = [sys.executable, "-m", "maag.server", "experiment", "hidden"]
    r = subprocess.run([*maag, "--pair", "ismcts", "cheat:ismcts", "--preset", "k", "--best", "greedy-action",
                        "--ks", "2", "--games", "2", "--iterations", "60", "--turn-ms", "0", "--map",
                        "a-tiny", "--jobs", "2", "--json"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    summary = lines[-1]
    assert summary["experiment"] == "hidden" and summary["config"]["game_config"]["draws"] == "random"
    assert [(p["a"], p["b"]) for p in summary["pairs"]] == [("pimc:inner=greedy-action,k=2", "greedy-action"),
                                                           ("ismcts", "cheat:ismcts")]
    assert sum(1 for x in lines[:-1] if x["event"] == "game") == 4
    bad = subprocess.run([*maag, "--pair", "cheat:x", "y", "--games", "2"], capture_output=True, text=True,
                         timeout=120)
    assert bad.returncode == 2 and "unknown agent" in bad.stderr


def test_cards_turns_are_planned_again_after_each_action() -> None:
    """Cards has chance inside a turn (draws, random targets): as the bot runner does through
    the referee, the agent plans again after each action, from a fresh observation."""
    cfg = HiddenConfig(turn_ms=None, iterations=60, game="cards", game_config={})
    calls: list[tuple[int, int]] = []
    real = Entrant.plan

    def spy(self: Entrant, state: Any, seat: int, *a: Any, **kw: Any) -> Any:
        calls.append((seat, state.current_player))
        return real(self, state, seat, *a, **kw)

    Entrant.plan = spy  # type: ignore[method-assign]
    try:
        rec = play_game(0, 0, ("ismcts", "cheat:mcts"), 0, 5, cfg)
    finally:
        Entrant.plan = real  # type: ignore[method-assign]
    assert not rec.forfeit and rec.winner in (0, 1, None) and rec.turns > 4
    assert all(seat == player for seat, player in calls)
    assert len(calls) > rec.turns  # several plans in some turns: one per action
    again = play_game(0, 0, ("ismcts", "cheat:mcts"), 0, 5, cfg)
    assert (again.winner, again.turns) == (rec.winner, rec.turns)


def test_command_line_other_games() -> None:
    maag = [sys.executable, "-m", "maag.server", "experiment", "hidden"]
    r = subprocess.run([*maag, "--game", "cards", "-o", "deck1=X", "--pair", "ismcts", "cheat:ismcts",
                        "--games", "2", "--iterations", "40", "--turn-ms", "0", "--json"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout.splitlines()[-1])
    assert summary["config"]["game"] == "cards" and summary["config"]["game_config"] == {"deck1": "X"}
    assert summary["pairs"][0]["games"] == 2 and summary["pairs"][0]["forfeits"] == 0
    for args, reason in ((["--game", "cards", "-o", "deck1=Q"], "deck1 must be one of"),
                         (["--game", "cards", "--map", "a"], "heroes options"),
                         (["--game", "cardz"], "unknown game 'cardz'"),
                         (["--game", "cards", "-o", "deck1"], "KEY=VALUE")):
        bad = subprocess.run([*maag, *args, "--pair", "mcts", "mcts"], capture_output=True, text=True,
                             timeout=120)
        assert bad.returncode == 2 and reason in bad.stderr, bad.stderr


def test_data_file_resumes_and_adds_games(tmp_path: Any) -> None:
    """--data: every finished game is a line; a rerun counts them and plays only the rest, a
    larger --games adds games on the same deals, and games of another setting are not mixed in."""
    from maag.lab.hidden import deal_seeds, recorded

    data = tmp_path / "runs" / "hidden.jsonl"
    cfg = HiddenConfig(turn_ms=None, iterations=20, game="cards", game_config={})
    pairs = [("mcts", "random"), ("rap", "random")]
    played: list[int] = []
    first = run_pairs(pairs, 2, cfg, seed=9, data=data, on_game=lambda r, d, t: played.append(t))
    assert played == [4, 4, 4, 4] and [len(r.games) for r in first] == [2, 2]
    with open(data, "a") as f:
        f.write('{"a": "mcts", "b": "rand')  # a run killed while writing its line
    played.clear()
    again = run_pairs(pairs, 4, cfg, seed=9, data=data, on_game=lambda r, d, t: played.append(t))
    assert played == [4, 4, 4, 4]  # only the new deal, from both seats, for both pairings
    for before, after in zip(first, again, strict=True):
        def key(g: Any) -> tuple[Any, ...]:
            return g.index, g.a_seat, g.seed, g.winner, g.turns, g.forfeit

        assert len(after.games) == 4 and [key(g) for g in after.games[:2]] == [key(g) for g in before.games]
        assert [g.seed for g in after.games] == [s for s in deal_seeds(9, 2) for _ in (0, 1)]
    assert len(recorded(data, pairs, cfg)) == 8
    other = HiddenConfig(turn_ms=None, iterations=21, game="cards", game_config={})
    assert recorded(data, pairs, other) == [] and recorded(data, [("mcts", "x")], cfg) == []
    played.clear()
    run_pairs(pairs, 4, cfg, seed=9, data=data, on_game=lambda r, d, t: played.append(t))
    assert played == []  # everything is there: nothing to play


def test_agreement_with_the_informed_decision() -> None:
    """maag experiment agreement: positions from real games, the reference decided by the
    cheating twin, each entrant scored by how often its first action is the reference's; a
    search that does not depend on its seed or on hidden cards agrees every time."""
    from maag.lab.agreement import collect_positions, run_agreement

    nim = Game("nim", {})
    # greedy turn searches nim's whole turn and breaks ties by rating: the same plan from any seed
    res = run_agreement(nim, ["cheat:greedy-turn", "greedy-turn", "random"], positions=5,
                        reference="greedy-turn", ref_iterations=100, iterations=100, seed=3)
    assert [(r.spec, r.positions) for r in res] == [("cheat:greedy-turn", 5), ("greedy-turn", 5),
                                                    ("random", 5)]
    assert res[0].agree == res[1].agree == 5 and 0 <= res[2].agree <= 5
    d = res[2].as_dict()
    assert d["ci95"][0] <= d["share"] <= d["ci95"][1]
    cards = Game("cards", {})
    states = collect_positions(cards, 4, seed=2, iterations=50)
    assert len(states) == 4 and all(len(s.legal_codes()) >= 2 and not s.is_terminal for s in states)
    res = run_agreement(cards, ["mcts", "peek:mcts"], positions=3, ref_iterations=200, iterations=100, seed=2,
                        jobs=2)
    assert [r.positions for r in res] == [3, 3]
    maag = [sys.executable, "-m", "maag.server", "experiment", "agreement"]
    r = subprocess.run([*maag, "--game", "nim", "--reference", "greedy-turn", "greedy-turn", "--positions",
                        "3", "--iterations", "100", "--ref-iterations", "100", "--json"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["agents"][0]["agree"] == 3 and out["reference"] == "cheat:greedy-turn"
    bad = subprocess.run([*maag, "nope", "--positions", "2"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "unknown agent" in bad.stderr
