"""The MCTS kernel's plans pinned at a fixed seed and iteration count: a change to the
kernel's tree (its memory layout, its allocation, the order of its reads) must leave every
plan, node count, evaluation count and root value exactly as they were. The pins were
written by the kernel before the tree was changed (issue 20); a change that must alter them
says why in its commit and regenerates them:

    python tests/engine/test_mcts_pins.py --write

Runs under the sanitizers too (tests/engine/test_sanitizer.py runs this folder)."""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any

import pytest
from maag.engine import Game, State
from maag.engine.search import search

PINS = Path(__file__).with_name("mcts_pins.json")
ITERATIONS = 3000

# case -> (game, game config, kernel parameters). The paper's settings, the non-exploring
# and bridge-burning / collapsing variants, the horizon at the root, robust choice, no
# transposition table, whole-list rollouts (random policy), longer rollouts.
CASES: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {
    "heroes-paper": ("heroes", {"map": "a", "draws": "seeded"}, {}),
    "heroes-c0-greedy": ("heroes", {"map": "a", "draws": "seeded"}, {"c": 0.0, "policy": "greedy"}),
    "heroes-bridge": ("heroes", {"map": "a", "draws": "seeded"}, {"bridge_burning": True}),
    "heroes-collapse": ("heroes", {"map": "a", "draws": "seeded"}, {"collapse_k": 20}),
    "heroes-horizon-robust": ("heroes", {"map": "a", "draws": "seeded"},
                              {"horizon_root": True, "rollout_turns": 2, "robust": True}),
    "heroes-no-tt-random": ("heroes", {"map": "a", "draws": "seeded"},
                            {"transpositions": False, "policy": "random"}),
    "heroes-small-map": ("heroes", {"map": "a-small", "draws": "random"}, {"early_end": True}),
    "cards": ("cards", {}, {}),
    "conquest": ("conquest", {}, {}),
    "nim": ("nim", {}, {"rollout_turns": 3}),
}
STATES = 3  # positions per case


def positions(game: Game, count: int, seed: int) -> list[State]:
    """Positions after seeded random play (each state's own random stream seeded too)."""
    rng = random.Random(seed)
    out: list[State] = []
    while len(out) < count:
        st = game.new_state(rng.randrange(2**62))
        st.seed_rng(rng.randrange(2**62))
        for _ in range(rng.randrange(4, 60)):
            if st.is_terminal:
                break
            codes = st.legal_codes()
            st.apply(rng.choice([c for c in codes if c != 0] or codes))
        if not st.is_terminal:
            out.append(st)
    return out


def fingerprint(case: str) -> list[dict[str, Any]]:
    """What the kernel did in each position of `case`: the plan's codes, nodes, evaluations,
    the root value (exact, as its hex), the stop reason."""
    name, config, params = CASES[case]
    game = Game(name, config)
    out = []
    for i, st in enumerate(positions(game, STATES, seed=2020 + len(case))):
        r = search(st, "mcts", params, iterations=ITERATIONS, seed=100 + i)
        out.append({"plan": [a.code for a in r.plan], "nodes": r.stats.nodes,
                    "evaluations": r.stats.evaluations, "value": float(r.stats.value).hex(),
                    "stop": r.stats.stop})
    return out


def digest(fp: list[dict[str, Any]]) -> str:
    return hashlib.sha256(json.dumps(fp, sort_keys=True).encode()).hexdigest()[:16]


@pytest.mark.parametrize("case", sorted(CASES))
def test_mcts_plans_are_pinned(case: str) -> None:
    pins = json.loads(PINS.read_text())
    fp = fingerprint(case)
    assert all(f["stop"] == "iterations" for f in fp), fp
    assert all(f["plan"] for f in fp)
    assert fp[0]["nodes"] > 20  # a tree, not a handful of nodes
    want = pins[case]
    assert [f["plan"] for f in fp] == want["plans"], f"{case}: the plans changed"
    assert [(f["nodes"], f["evaluations"]) for f in fp] == [tuple(x) for x in want["counts"]], \
        f"{case}: node or evaluation counts changed"
    assert digest(fp) == want["digest"], f"{case}: root values changed"


def write() -> None:
    pins = {}
    for case in sorted(CASES):
        fp = fingerprint(case)
        pins[case] = {"plans": [f["plan"] for f in fp],
                      "counts": [[f["nodes"], f["evaluations"]] for f in fp], "digest": digest(fp)}
    lines = [f"{json.dumps(k)}: {json.dumps(v)}" for k, v in pins.items()]
    PINS.write_text("{\n" + ",\n".join(lines) + "\n}\n")


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        write()
    else:
        sys.exit("usage: python tests/engine/test_mcts_pins.py --write")
