"""`maag bench engine`: single-thread throughput of the C rules core.

Measures, with the timed loops in C (mg_kernels.c) so Python overhead is not counted:
uniform-random playouts to the end of the game from an initial state (games/s and
actions/s), legal-action enumeration on a fixed set of mid-game states (calls/s), and
memcpy-clone plus apply of one random legal action on those states (pairs/s). Each figure
is the median of several runs. `--game` picks the game (heroes: map `a` with the
reference's seeded draws, compared with the Java reference; cards: the fixed decks M
against P, compared with the issue's targets)."""

from __future__ import annotations

import random
import statistics
from dataclasses import dataclass
from typing import Any

from maag.engine import Game, State
from maag.engine.kernels import time_clone_apply, time_legal, time_playouts

# The Java reference clone on this kind of machine (issue 2): one thread, medians of 5x10 s.
REFERENCE = {
    "playout_actions_per_s": 296_600.0,
    "playout_games_per_s": 496.0,
    "legal_actions_per_s": 603_000.0,
    "clone_apply_per_s": 869_000.0,
}


def midgame_states(game: Game, count: int = 20, seed: int = 2015) -> list[State]:
    """A fixed set of mid-game states: random play (seeded draws) for 20..120 actions. A
    game that ends before (nim's random games are over in a dozen actions) gets states from
    the second half of its random games instead; ValueError if it has none to search."""
    rng = random.Random(seed)
    states: list[State] = []
    for _ in range(20 * count):  # (the states every earlier figure was measured on)
        if len(states) == count:
            return states
        st = game.new_state(rng.randrange(2**62))
        st.seed_rng(rng.randrange(2**62))
        for _ in range(rng.randrange(20, 120)):
            if st.is_terminal:
                break
            codes = st.legal_codes()
            st.apply(rng.choice([c for c in codes if c != 0] or codes))
        if not st.is_terminal and st.legal_codes() != [0]:
            states.append(st)
    for _ in range(20 * count):  # a short game: a state from the second half of one
        if len(states) == count:
            return states
        st = game.new_state(rng.randrange(2**62))
        st.seed_rng(rng.randrange(2**62))
        seen: list[State] = []
        while not st.is_terminal:
            codes = st.legal_codes()
            if codes != [0]:
                seen.append(st.clone())
            st.apply(rng.choice([c for c in codes if c != 0] or codes))
        if seen:
            states.append(seen[rng.randrange(len(seen) // 2, len(seen))])
    if len(states) < count:
        raise ValueError(f"{game.name}: no mid-game state with a choice to search in "
                         f"{40 * count} random games")
    return states


# What each game is measured on, and what its figures are compared with.
SETUPS: dict[str, dict[str, Any]] = {"heroes": {"map": "a", "draws": "seeded"},
                                     "cards": {"deck1": "M", "deck2": "P"}}
# The card game's targets (issue 11): 1,000,000 random-playout actions and 10,000,000
# clone+apply a second on one thread (Brimstone, a C++ engine built for search, claims up
# to 400,000 state clones a second).
TARGETS = {"cards": {"playout_actions_per_s": 1_000_000.0, "clone_apply_per_s": 10_000_000.0}}


@dataclass
class EngineBench:
    playout_games_per_s: float
    playout_actions_per_s: float
    legal_actions_per_s: float
    clone_apply_per_s: float
    runs: int
    seconds: float
    game: str = "heroes"

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = dict(self.__dict__)
        if self.game == "heroes":
            d["ratio_to_reference"] = {k: round(d[k] / v, 2) for k, v in REFERENCE.items()}
        for k, v in TARGETS.get(self.game, {}).items():
            d.setdefault("ratio_to_target", {})[k] = round(d[k] / v, 2)
        return d

    def comparison(self) -> tuple[str, dict[str, float]]:
        """The column the figures are compared with: the Java reference, or the targets."""
        if self.game == "heroes":
            return "Java reference", REFERENCE
        return "target", TARGETS.get(self.game, {})


def run(runs: int = 5, seconds: float = 2.0, progress: Any = None, game_name: str = "heroes") -> EngineBench:
    game = Game(game_name, SETUPS.get(game_name, {}))
    start = game.new_state(seed=1)
    states = midgame_states(game)
    games, actions, legal, clone = [], [], [], []
    for i in range(runs):
        n_games, n_actions, elapsed = time_playouts(start, seconds, i + 1)
        games.append(n_games / elapsed)
        actions.append(n_actions / elapsed)
        calls, elapsed = time_legal(states, seconds)
        legal.append(calls / elapsed)
        pairs, elapsed = time_clone_apply(states, seconds, i + 1)
        clone.append(pairs / elapsed)
        if progress:
            progress(i + 1)
    med = statistics.median
    return EngineBench(med(games), med(actions), med(legal), med(clone), runs, seconds, game_name)
