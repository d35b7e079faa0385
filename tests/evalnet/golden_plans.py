"""The plans of every evaluating kernel at fixed seeds and iteration budgets, recorded before
the evaluation hook (eval=neat) was added; test_eval_hook.py checks the default path (the
game's own evaluate) still gives exactly these. Regenerate only on purpose:
    python tests/evalnet/golden_plans.py > tests/evalnet/golden_plans.json
"""

from __future__ import annotations

import json
from typing import Any

from maag.engine import Game
from maag.engine.search import search

# (kernel, params, iterations): every kernel that calls the evaluation.
CASES: list[tuple[str, dict[str, Any], int]] = [
    ("greedy-action", {}, 0),
    ("greedy-turn", {}, 300),
    ("mcts", {}, 300),
    ("mcts", {"c": 0.0, "policy": "greedy", "robust": True}, 300),
    ("mcts", {"bridge_burning": True}, 300),
    ("mcts", {"rollout_turns": 0}, 300),
    ("oep", {}, 10),
    ("ucb", {}, 100),
    ("uct", {}, 100),
]
GAMES: list[tuple[str, dict[str, Any]]] = [
    ("heroes", {"map": "a-tiny", "draws": "seeded"}),
    ("heroes", {"map": "a", "draws": "seeded"}),
    ("cards", {}),
    ("nim", {}),
]


def plans() -> list[dict[str, Any]]:
    out = []
    for name, cfg in GAMES:
        game = Game(name, cfg)
        for pos_seed in (1, 2):
            st = game.new_state(seed=pos_seed)
            for _ in range(3 * pos_seed):  # a few random actions into the game
                if st.is_terminal:
                    break
                st.apply(st.legal_codes()[(7 * pos_seed) % len(st.legal_codes())])
            if st.is_terminal:
                continue
            for kernel, params, iters in CASES:
                r = search(st, kernel, params, iterations=iters, seed=11)
                out.append({"game": name, "config": cfg, "position": pos_seed, "kernel": kernel,
                            "params": params, "iterations": iters,
                            "plan": [a.code for a in r.plan], "value": r.stats.value})
    return out


if __name__ == "__main__":
    print(json.dumps(plans(), indent=0))
