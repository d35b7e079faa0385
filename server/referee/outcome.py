"""The end of a game: why it ended (`Reason`), its `Outcome`, the `game_over` messages, and
the replay with the seats' clock and search reports.

Verdicts: a game lost other than on the board (or by resignation) carries a verdict saying
why, from a fixed list (`VERDICTS`): `time`, `illegal`, `disconnect`, and what the server
learns of the seat's connection or process (`fault`): `protocol` (a fatal protocol error),
`crash` and `memory` (a hosted bot's process ended by a signal, an exit code or its memory
limit), `startup` (it never said hello). A fault given with `final=True` (a hosted process,
which cannot come back) ends the game at once instead of after the grace period.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from maag.protocol import Ended, GameOver
from maag.server.referee.messages import Messages, Out
from maag.server.referee.policy import Policy

__all__ = ["Ending", "Outcome", "Reason", "REPLAY_VERSION", "VERDICTS"]

REPLAY_VERSION = 1


class Reason(str, enum.Enum):
    """Why a game ended."""

    RULES = "rules"                      # the rules declared a winner
    TURN_LIMIT = "turn_limit"            # the rules declared a draw at the turn limit
    RESIGN = "resign"
    TIMEOUT = "timeout"                  # lost on time (late policy)
    ILLEGAL = "illegal_actions"          # too many illegal or malformed actions
    DISCONNECT = "disconnect"            # did not come back within the grace period
    ABORTED = "aborted"                  # the referee stopped the game (shutdown); no winner


VERDICTS = ("time", "memory", "crash", "illegal", "protocol", "disconnect", "startup")
"""Why a game was lost when it was not lost on the board nor resigned."""


@dataclass(frozen=True, slots=True)
class Outcome:
    winner: int | None
    """0 or 1, -1 for a draw, None for an aborted game."""
    reason: Reason
    plies: int
    verdict: dict[str, Any] | None = None
    """For a forfeit: {"seat": 1 or 2, "kind": one of VERDICTS, "detail": text}."""

    @property
    def result_text(self) -> str:
        return {0: "1-0", 1: "0-1", -1: "1/2-1/2"}.get(self.winner, "*")  # type: ignore[arg-type]


class Ending(Messages):
    """How a `GameSession` ends and reports its game (a base class of it)."""

    policy: Policy
    outcome: Outcome | None
    faults: list[tuple[str, str] | None]
    seed: int
    start_state: dict[str, Any] | None
    tags: dict[str, Any]

    @property
    def finished(self) -> bool:
        return self.outcome is not None

    def game_over(self, replay_id: int | str | None) -> Ended:
        """The game's end as both seats are told it (`game_over`, each after the actions held
        for it, told now: none held from then on), as data; call once the result and replay
        are stored (`replay_id`: None if they are not)."""
        o = self.outcome
        if o is None:
            raise RuntimeError("the game is not over")
        winner = o.winner + 1 if o.winner in (0, 1) else None  # type: ignore[operator]
        return Ended(winner, o.reason.value, None if replay_id is None else str(replay_id),
                     (self._take_held(0), self._take_held(1)))

    def game_over_messages(self, replay_id: int | str | None) -> list[Out]:
        """`game_over`'s messages (for callers without a connection), in the order the
        seats' `Writer`s write them: each seat's `turn_events`, then its `game_over`."""
        e = self.game_over(replay_id)
        msg = GameOver.built(game_id=self.game_id, winner=e.winner, reason=e.reason, replay_id=e.replay_id)
        return [*self._turn_events(0, e.held[0]), Out(0, msg), *self._turn_events(1, e.held[1]), Out(1, msg)]

    def replay(self) -> dict[str, Any]:
        """Everything needed to re-simulate this game exactly (see server/replay.py)."""
        o = self.outcome
        tags = {"Game": self.game.name, "Seat1": self.seats[0].name, "Seat2": self.seats[1].name,
                "TimeControl": str(self.tc), "GameId": str(self.game_id), **self.tags}
        if o is not None:
            tags["Result"] = o.result_text
            tags["Reason"] = o.reason.value
        return {
            "version": REPLAY_VERSION,
            "game": self.game.name,
            "config": self.game.config,
            "seed": self.seed,
            "start_state": self.start_state,
            "time_control": self.tc.to_dict(),
            "policy": self.policy.to_dict(),
            "tags": tags,
            "actions": self.log,
            "result": None if o is None else {"winner": o.winner, "reason": o.reason.value, "plies": o.plies,
                                              "verdict": o.verdict},
            "final_hash": self.state.hash(),
            "clock": self.clock_report(),
            "search": self.search_report(),
        }

    def search_report(self) -> list[dict[str, Any] | None]:
        """Per seat, what its bot said its search did (`info.iterations` and `info.time_ms`
        of its messages, added up per turn): turns reported, mean iterations and mean search
        time per turn, or None for a seat that reported nothing. The current turn counts
        once it is over (or the game is)."""
        out: list[dict[str, Any] | None] = []
        for s in self.seats:
            turns = list(s.search)
            if s.turn_search is not None and self.outcome is not None:
                turns.append((s.turn_search[0], s.turn_search[1]))
            if not turns:
                out.append(None)
                continue
            out.append({"turns": len(turns),
                        "iterations_per_turn": round(sum(t[0] for t in turns) / len(turns), 1),
                        "time_ms_per_turn": round(sum(t[1] for t in turns) / len(turns), 3)})
        return out

    def clock_report(self) -> dict[str, list[Any]]:
        """Per seat: thinking time and transport time charged in total (ms), late turns,
        illegal actions."""
        return {"think_ms": [round(s.clock.think_total_ms, 3) for s in self.seats],
                "transport_ms": [round(s.clock.transport_total_ms, 3) for s in self.seats],
                "late_turns": [s.late_turns for s in self.seats],
                "illegal": [s.illegal for s in self.seats]}

    def finish_replayed(self) -> None:
        """A game rebuilt from its log (resume.py) whose last logged action ended it: its
        outcome, by the rules."""
        self._finish(self.state.winner, None)

    def _finish(self, winner: int | None, reason: Reason | None) -> None:
        if reason is None:
            reason = Reason.TURN_LIMIT if winner == -1 else Reason.RULES
        verdict = None
        if winner in (0, 1) and reason in (Reason.TIMEOUT, Reason.ILLEGAL, Reason.DISCONNECT):
            loser = 1 - winner  # type: ignore[operator]
            gone = self.faults[loser] or ("disconnect", "its connection closed and it did not come back")
            kind, detail = {Reason.TIMEOUT: ("time", "over its time allowance"),
                            Reason.ILLEGAL: ("illegal", f"{self.policy.max_illegal} illegal or malformed "
                                                        "actions")}.get(reason, gone)
            verdict = {"seat": loser + 1, "kind": kind, "detail": detail}
        self.outcome = Outcome(winner, reason, len(self.log), verdict)
        for s in self.seats:
            s.prompt_at = None
