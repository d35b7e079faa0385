"""A game taken over from a referee that died, rebuilt by exact replay of its logged actions
from its seed (`rebuild`), and played on as a `ResumedSession`: its clocks stand still until
each seat is back, and a seat that does not come back within the grace period ends the game
aborted (the referee failed it, not the bot), never lost by disconnection.

What the log cannot give back is the turn in progress when the referee died: the actions of
it that were accepted but not yet logged are gone, so the seat to move is asked for its turn
again (`your_turn`, with the rebuilt observation) and its thinking time in that turn starts
from zero. Each seat's clock is rebuilt from the log's thinking times (its bank, its turns);
the transport times and the count of illegal actions are not logged and start from zero.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from maag.protocol import Opening, Played
from maag.server.referee.clock import TimeControl
from maag.server.referee.replay import ReplayError
from maag.server.referee.session import GameSession, LatePolicy, Policy

__all__ = ["ResumedSession", "rebuild"]


class ResumedSession(GameSession):
    """A GameSession rebuilt after a takeover (see the module)."""

    absent: list[bool]
    """Per seat: not back since the takeover (its clock stands still)."""

    def back(self, seat: int, now: float) -> Opening | None:
        o = super().back(seat, now)
        if o is not None and self.absent[seat]:
            self.absent[seat] = False
            if self.to_move == seat and self.outcome is None:
                self.seats[seat].prompt_at = now  # its clock runs again from its new prompt
        return o

    def expire(self, now: float) -> tuple[int, Played] | None:
        grace = self.policy.disconnect_grace_ms / 1000
        for i, s in enumerate(self.seats):
            if self.absent[i] and s.disconnected_at is not None and now >= s.disconnected_at + grace:
                self.abort(f"seat {i + 1} did not come back after its referee was taken over")
                return None
        return super().expire(now)

    def _prompted(self, seat: int) -> None:
        super()._prompted(seat)
        if self.absent[seat]:
            self.seats[seat].prompt_at = None  # paused until the seat is back


def rebuild(game_id: str, names: Sequence[str], resume: dict[str, Any], actions: list[dict[str, Any]],
            now: float | None = None, wait_ms: float | None = None) -> ResumedSession:
    """The session of game `game_id` after its logged `actions`, from `resume` (the header
    of its replay: game, config, seed, start_state, time_control, policy, tags). Both seats
    are absent until they reconnect, for at most `wait_ms` (default: the game's grace period)
    before the game is aborted. Raises ReplayError if the log does not replay (a state hash
    differs, an action is refused)."""
    now = time.monotonic() if now is None else now
    tc = {k: v for k, v in resume["time_control"].items() if k != "text"}
    pol = dict(resume["policy"])
    s = ResumedSession(game_id, resume["game"], names, config=resume["config"],
                       tc=TimeControl(**tc), policy=Policy(**{**pol, "late": LatePolicy(pol["late"])}),
                       seed=int(resume["seed"]), start_state=resume.get("start_state"),
                       tags={k: v for k, v in resume.get("tags", {}).items()
                             if k not in ("Game", "Seat1", "Seat2", "TimeControl", "GameId")})
    s.absent = [True, True]
    for i, entry in enumerate(actions):
        seat = int(entry["seat"])
        if s.state.is_terminal or seat != s.to_move:
            raise ReplayError(i, f"seat {seat} acts out of turn in the log")
        try:
            s.state.apply(s.game.action(entry["action"]))
        except Exception as e:
            raise ReplayError(i, f"action {entry['action']} refused: {e}") from None
        clock = s.seats[seat].clock
        clock.charge(float(entry.get("think_ms", 0.0)), 0.0)
        if entry.get("auto"):
            s.seats[seat].late_turns += 1
        s.log.append(entry)
        if "hash" in entry:
            if s.state.hash() != entry["hash"]:
                raise ReplayError(i, "state hash differs from the logged one")
            clock.end_turn()
            s.turn_no += 1
    last_ms = float(actions[-1]["t_ms"]) if actions else 0.0
    s.t0 = now - last_ms / 1000.0  # the log's clock stamps go on from its last one
    grace = s.policy.disconnect_grace_ms
    for seat in s.seats:  # gone since then as far as the grace period counts: `wait_ms` is left
        seat.disconnected_at = now - (grace - (grace if wait_ms is None else wait_ms)) / 1000
    if s.state.is_terminal:
        s.finish_replayed()
    return s
