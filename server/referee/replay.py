"""Replays: re-simulate a stored game exactly, checking every step, and rebuild the state at
any position (to inspect it, or to start a game or an analysis from there).

A replay (made by `GameSession.replay`) holds the game, its configuration, the seed of the
deal and of the RNG beside the state (or a start state and the RNG seed), the action log
with clock stamps (`t_ms` since the start, `think_ms`), a state hash after every end of
turn, the final hash, the result and header tags. Because the engine is deterministic given
the seed, replaying the actions from the seed reproduces every draw; each stored hash is
compared on the way, and the end must give the stored result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from maag.engine import EngineError, Game, State

__all__ = ["ReplayError", "ReplayCheck", "resimulate", "state_at", "initial_state"]


class ReplayError(Exception):
    """A replay does not re-simulate: `ply` is the 0-based index of the failing action
    (or the number of actions, for a wrong ending)."""

    def __init__(self, ply: int, message: str) -> None:
        super().__init__(f"ply {ply}: {message}")
        self.ply = ply


@dataclass(slots=True)
class ReplayCheck:
    """What a successful re-simulation found."""

    plies: int
    hashes_checked: int
    winner: int | None
    reason: str | None
    final: State = field(repr=False)


def initial_state(replay: dict[str, Any]) -> State:
    """The position before the first action, with the game's RNG seeded as it was."""
    game = Game(replay["game"], replay["config"])
    if replay.get("start_state") is not None:
        return game.state_from_json(replay["start_state"], rng_seed=int(replay["seed"]))
    return game.new_state(int(replay["seed"]))


def state_at(replay: dict[str, Any], ply: int) -> State:
    """The state after the first `ply` actions (0: the initial state; negative counts
    from the end). Raises ReplayError if the replay does not re-simulate up to there."""
    actions = replay["actions"]
    if ply < 0:
        ply += len(actions) + 1
    if not 0 <= ply <= len(actions):
        raise ValueError(f"position {ply} is outside 0..{len(actions)}")
    st = initial_state(replay)
    for i in range(ply):
        _step(st, actions[i], i)
    return st


def resimulate(replay: dict[str, Any]) -> ReplayCheck:
    """Replay every action, checking legality and each stored hash, then the final hash and
    the stored result. Raises ReplayError at the first disagreement."""
    st = initial_state(replay)
    actions = replay["actions"]
    hashes = 0
    for i, entry in enumerate(actions):
        hashes += _step(st, entry, i)
    n = len(actions)
    if "final_hash" in replay and st.hash() != replay["final_hash"]:
        raise ReplayError(n, "final state hash differs from the stored one")
    res = replay.get("result")
    winner, reason = (None, None) if res is None else (res["winner"], res["reason"])
    if res is not None:
        if reason in ("rules", "turn_limit"):
            if not st.is_terminal:
                raise ReplayError(n, f"stored result says {reason} by the rules, but the game is not over")
            if st.winner != winner:
                raise ReplayError(n, f"stored winner {winner} but the rules give {st.winner}")
        elif st.is_terminal:
            raise ReplayError(n, f"stored reason {reason!r}, but the rules ended the game "
                                 f"(winner {st.winner})")
        if res.get("plies", n) != n:
            raise ReplayError(n, f"stored result counts {res['plies']} plies, the log has {n}")
    return ReplayCheck(n, hashes, winner, reason, st)


def _step(st: State, entry: dict[str, Any], i: int) -> int:
    if st.is_terminal:
        raise ReplayError(i, "an action after the end of the game")
    seat = entry["seat"]
    if seat != st.current_player:
        raise ReplayError(i, f"seat {seat} acts but seat {st.current_player} is to move")
    try:
        st.apply(st.game.action(entry["action"]))
    except (EngineError, ValueError) as e:
        raise ReplayError(i, f"action {entry['action']} refused: {e}") from None
    if "hash" in entry:
        if st.hash() != entry["hash"]:
            raise ReplayError(i, "state hash differs from the stored one (a different draw or effect)")
        return 1
    return 0
