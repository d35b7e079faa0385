"""An example maag bot in Python, built on the maag.clients SDK.

In nim (multi-action Nim: take from up to `ap_per_turn` different piles a turn, whoever
takes the last object wins) it plays by Moore's rule for Nim-k: a position is lost for the
player to move when, for every binary digit, the number of piles with that digit set is a
multiple of k+1. So each turn it
  1. takes everything if it can (every non-empty pile in one turn),
  2. else looks for a turn of one or two takes that leaves the opponent such a lost
     position,
  3. else, in a lost position itself, passes (ends the turn at once: a pass is legal),
  4. else takes one object from the largest pile, if that does not let the opponent clear
     the board, and ends the turn.
In any other game it plays random legal actions (the referee lists them: want_legal).

The referee starts it in its package folder with the connect address in $MAAG_CONNECT
(HOST:PORT, unix:PATH, or fd:N, an inherited socket in a sandbox) and its token in
$MAAG_TOKEN; $MAAG_GAME names the game. Nothing else is needed: no network of its own, no
writes outside $HOME (or $TMPDIR).
"""

from __future__ import annotations

import itertools
import os
import random
import sys
from collections.abc import Sequence
from typing import Any

from maag.clients import Bot, Limit, Observation, TurnResult, run_bot_blocking

END = {"type": "end_turn"}
Take = tuple[int, int]  # (pile, count)


def moore_lost(piles: Sequence[int], k: int) -> bool:
    """Is this nim position lost for the player to move, when a turn may take from up to k
    piles? (Moore's Nim-k; the passes this game also allows are left aside.)"""
    for bit in range(max(piles, default=0).bit_length()):
        if sum((p >> bit) & 1 for p in piles) % (k + 1):
            return False
    return True


def clearable(piles: Sequence[int], k: int) -> bool:
    """Can the player to move take every remaining object in one turn?"""
    return 0 < sum(1 for p in piles if p) <= k


def after(piles: Sequence[int], takes: Sequence[Take]) -> list[int]:
    out = list(piles)
    for pile, count in takes:
        out[pile] -= count
    return out


def plan_nim(state: Any) -> list[Take] | None:
    """The takes of this turn (then end_turn), or None to end the turn at once."""
    piles: list[int] = list(state["piles"])
    k = int(state.get("ap_per_turn", state["ap"]))
    ap = int(state["ap"])
    taken: list[bool] = list(state.get("taken") or [False] * len(piles))
    free = [i for i, p in enumerate(piles) if p and not taken[i]]
    # 1. everything left can be taken this turn: win now
    if all(not p or i in free for i, p in enumerate(piles)) and 0 < len(free) <= ap:
        return [(i, piles[i]) for i in free]
    # 2. a turn of one or two takes that leaves a lost position
    singles = [(i, c) for i in free for c in range(1, piles[i] + 1)]
    turns: list[list[Take]] = [[t] for t in singles]
    if ap >= 2:
        turns += [[a, b] for a, b in itertools.combinations(singles, 2) if a[0] != b[0]]
    random.shuffle(turns)  # no fixed preference among equally good turns
    for turn in turns:
        rest = after(piles, turn)
        if any(rest) and moore_lost(rest, k):
            return turn
    # 3. already lost for the mover: pass, and the opponent moves in it instead
    if moore_lost(piles, k):
        return None
    # 4. a small take that does not let the opponent clear the board, or pass
    for i in sorted(free, key=lambda i: -piles[i]):
        if not clearable(after(piles, [(i, 1)]), k):
            return [(i, 1)]
    return None


class ExampleBot(Bot):
    name = "python-example"
    want_legal = True  # the referee lists the legal actions in every your_turn
    # the games it offers: the one the referee names, else every game (it plays any of them)
    games = tuple(filter(None, [os.environ.get("MAAG_GAME")])) or ("nim", "heroes", "cards", "conquest")

    def choose_turn(self, observation: Observation, limit: Limit) -> TurnResult:
        legal = observation.legal or (END,)
        if observation.game.game == "nim" and not observation.data.get("misere"):
            takes = plan_nim(observation.data)
            actions: list[dict[str, Any]] = [{"type": "take", "pile": p, "count": c} for p, c in takes or []]
            if not actions or actions[0] in legal:  # the plan is made from the rules; check its start
                return TurnResult([*actions, END], info={"takes": len(actions)})
        # any other game: a random legal action (the bot is then asked again for the next one)
        return TurnResult([random.choice(legal)])


def main() -> int:
    address, token = os.environ.get("MAAG_CONNECT"), os.environ.get("MAAG_TOKEN")
    if not address or not token:
        print("bot.py: set MAAG_CONNECT (HOST:PORT, unix:PATH or fd:N) and MAAG_TOKEN", file=sys.stderr)
        return 2
    stats = run_bot_blocking(ExampleBot, address, token=token)
    scores = [g.score for g in stats.games if g.score is not None]
    print(f"python-example: {len(stats.games)} game(s), score {sum(scores):g}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
