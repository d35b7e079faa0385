"""The transport-free referee: one `GameSession` per game owns the engine state and the RNG
beside it, the seats' clocks and the policies, takes what a seat sends (one action, a whole
turn plan or part of one, a resignation) and returns what happened: an act or turn as a
`maag.protocol.Played` value, data and no message (how many actions were applied, the
refusal and why, a late message, the seat prompted, what the other seat hears now, the
game over), a resignation as None or its `Refusal`, a late turn the clock ended as
`expire`'s `Played`, the game's end as `game_over`'s `maag.protocol.Ended`, a seat gone
as `gone`'s `Notice`, the start and a seat back as `begin`'s and `back`'s `Opening` (and
`submit`, `tick`, `game_over_messages`, `disconnect`, `start`, `reconnect` give the data's
messages, `Out(seat, message)` values, for callers without a connection). It writes no
bytes (the server's connections do), has no sockets or tasks, reads no clock except
through the injected `clock` function: the server does I/O and timing, this module decides.

This module drives a game (start, the actions a seat sends, resignation, abort); its base
classes, one per module, do the rest: codes.py the action codes and the log, messages.py
what each seat is told, outcome.py the end of a game, its verdicts and replay, deadlines.py
the clocks, deadlines and the policies' sanctions (each module's docstring says its rules).
Resignation: at any time, by either seat; the other seat wins (reason `resign`).
`game_over` is sent only through `game_over` (or `game_over_messages`), which the server
calls once the result and replay are stored.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from typing import Any

import msgpack
from maag.engine import Action, Game, GameOverError, IllegalActionError, State
from maag.protocol import ErrorCode, Opening, Played, Refusal
from maag.server.referee.clock import Seat, SeatClock, TimeControl
from maag.server.referee.codes import action_dicts, action_jsons, now_ms, public_msgpacks, us_of
from maag.server.referee.deadlines import Deadlines
from maag.server.referee.messages import Out, YourTurnValues
from maag.server.referee.outcome import REPLAY_VERSION, VERDICTS, Outcome, Reason
from maag.server.referee.policy import LatePolicy, Policy

# What `State.step` says of an act (its flags).
_END_TURN, _TERMINAL = State.STEP_END_TURN, State.STEP_TERMINAL
_CURRENT_1, _NOT_TO_MOVE = State.STEP_CURRENT_1, State.STEP_NOT_TO_MOVE

# GameSession's public face: the types its methods take and return, where they are made.
__all__ = ["GameSession", "Policy", "LatePolicy", "Out", "Outcome", "Reason",
           "REPLAY_VERSION", "VERDICTS", "YourTurnValues"]


class GameSession(Deadlines):
    """One game between two seats. Every method returns what happened (data, or the
    messages to send, in order; see the module)."""

    def __init__(
        self,
        game_id: str,
        game: Game | str,
        names: Sequence[str],
        *,
        config: dict[str, Any] | None = None,
        tc: TimeControl | None = None,
        policy: Policy | None = None,
        seed: int | None = None,
        start_state: dict[str, Any] | None = None,
        want_legal: Sequence[bool] = (False, False),
        want_groups: Sequence[bool] = (False, False),
        turn_events: Sequence[bool] = (False, False),
        tags: dict[str, Any] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.game = game if isinstance(game, Game) else Game(game, config)
        self.game_id = str(game_id)
        self.tc = tc or TimeControl()
        self.policy = policy or Policy()
        self.seed = int.from_bytes(os.urandom(8), "little") & (2**63 - 1) if seed is None else seed
        self.start_state = start_state
        if start_state is not None:
            self.state = self.game.state_from_json(start_state, rng_seed=self.seed)
        else:
            self.state = self.game.new_state(self.seed)
        self._public = self.game.spec.public_action  # what the opponent sees of an action
        self._dicts = action_dicts(self.game.name)
        self._other_forms: dict[bytes, int] = {}  # an action map's bytes -> code, when not the game's
        # One per session (sessions run in threads), small (the default buffer is 256 KiB).
        self._pack_key = msgpack.Packer(use_bin_type=True, buf_size=1024).pack
        self._public_packed = public_msgpacks(self.game.name)
        self._action_text = action_jsons(self.game.name)
        if len(names) != 2 or len(want_legal) != 2 or len(want_groups) != 2 or len(turn_events) != 2:
            raise ValueError("a game has two seats")
        self.seats = [Seat(str(n), SeatClock(self.tc), want_legal=bool(w), want_groups=bool(g),
                           turn_events=bool(t))
                      for n, w, g, t in zip(names, want_legal, want_groups, turn_events, strict=True)]
        self.tags: dict[str, Any] = dict(tags or {})
        self._clock = clock
        self.t0: float | None = None
        self.log: list[dict[str, Any]] = []
        # The log's entries as JSON, written once (`log_json`): the action log (issue 44) and the
        # stored replay both need them, and encoding them took most of the storage thread.
        self._log_text: list[str] = []
        self.outcome: Outcome | None = None
        self.turn_no = 1
        self.faults: list[tuple[str, str] | None] = [None, None]
        """Per seat, what the server knows went wrong with its connection or process."""

    # -- driving ------------------------------------------------------------------------
    def begin(self, now: float | None = None) -> Opening:
        """The game starts: `game_start` for both seats, then `your_turn` for the seat to
        move (none if the start state is over), as data."""
        self.t0 = self._clock() if now is None else now
        if self.state.is_terminal:
            self._finish(self.state.winner, None)
            return self._opening((0, 1), None, -1)
        seat = self.to_move
        o = self._opening((0, 1), None, seat, self._take_held(seat))
        self._prompted(seat)
        return o

    def start(self, now: float | None = None) -> list[Out]:
        """`begin`, and the messages it says to send (for callers without a connection)."""
        return self.opening_messages(self.begin(now))

    def act(self, seat: int, actions: Sequence[dict[str, Any] | Action | int], now: float,
            transport_ms: float = 0.0, info: dict[str, Any] | None = None) -> Played:
        """Actions from `seat` (one `act`, or a `turn` plan, whole or partial) received at
        `now`; `transport_ms` is the server's measure of this exchange's transport time;
        `info` what the seat said its search did (the message's `info`: its `iterations` and
        `time_ms` are added up per turn, see `search_report`). An action is a code (as the
        plain reader finds them), a map or an Action. What happened, as a `Played`: the
        server's connections write it (`messages_of` gives it as messages)."""
        state = self.state
        if (len(actions) != 1 or info is not None or type(code := actions[0]) is not int
                or self.outcome is not None or self.t0 is None):
            return self._play(seat, actions, now, transport_ms, info)
        # One action code (a plain act: most messages), `_play`'s steps written out for it,
        # the engine asked once (`State.step`: applied, the turn ended, the game over, who is
        # to move, in one C call).
        me = self.seats[seat]  # (`_charge`, written out)
        clock = me.clock
        think = 0.0
        clocked = self.tc.turn_ms is not None  # (never late without a turn budget)
        if clocked:  # a late message is refused before anything is applied: the clock first
            if seat != state.current_player:
                return self._play(seat, actions, now, transport_ms, info)
            if me.prompt_at is not None:
                think = clock.charge((now - me.prompt_at) * 1000.0, transport_ms)
                me.prompt_at = now
            if clock.late:
                return self._too_late(seat, now)
        try:
            flags = state.step(seat, code)
        except (IllegalActionError, GameOverError) as e:
            if not clocked:
                self._charge(seat, now, transport_ms)
            return self._illegal(seat, ErrorCode.ILLEGAL_ACTION, f"action 0: {e}", [])
        if not clocked:  # (charged after the step: nothing read the clock before it)
            if flags & _NOT_TO_MOVE:
                return self._play(seat, actions, now, transport_ms, info)  # (refused: not its turn)
            if me.prompt_at is not None:
                think = clock.charge((now - me.prompt_at) * 1000.0, transport_ms)
                me.prompt_at = now
        turn_over = flags & _END_TURN
        self._log_entry(seat, code, us_of(now_ms(now - self.t0)), us_of(think), None,
                        state.hash() if turn_over else None)
        if flags & _TERMINAL:
            self._finish(state.winner, None)
            return self._after(seat, (code,))
        if turn_over:
            self._close_turn(seat)
        return self._told(seat, (code,), 1 if flags & _CURRENT_1 else 0)

    def submit(self, seat: int, actions: Sequence[dict[str, Any] | Action | int], now: float,
               transport_ms: float = 0.0, info: dict[str, Any] | None = None) -> list[Out]:
        """`act`, and the messages it says to send (for callers without a connection)."""
        return self.messages_of(seat, self.act(seat, actions, now, transport_ms, info))

    def _play(self, seat: int, actions: Sequence[dict[str, Any] | Action | int], now: float,
              transport_ms: float, info: dict[str, Any] | None) -> Played:
        """`act`'s work for any play: the actions applied and logged, the clocks charged, and
        what happened."""
        if self.outcome is not None:
            return self._refused(seat, ErrorCode.UNKNOWN_GAME, "the game is over")
        if self.t0 is None:
            return self._refused(seat, ErrorCode.NOT_YOUR_TURN, "the game has not started")
        if seat != self.to_move:
            return self._refused(seat, ErrorCode.NOT_YOUR_TURN, "it is the other seat's turn")
        me = self.seats[seat]
        think = self._charge(seat, now, transport_ms)
        if me.clock.late:
            return self._too_late(seat, now)
        reported = _search_numbers(info)
        if reported is not None:
            if me.turn_search is None:
                me.turn_search = [0.0, 0.0]
            me.turn_search[0] += reported[0]
            me.turn_search[1] += reported[1]
        state = self.state
        t_us = us_of(now_ms(now - self._t0))
        # The plan's codes, up to the first map that is no action of the game (`bad`), then
        # applied in one call: up to its end_turn or the game's end, or up to an illegal one.
        codes: list[int] = []
        bad: tuple[int, str] | None = None
        for i, raw in enumerate(actions):
            if type(raw) is int:
                codes.append(raw)
                continue
            try:
                codes.append(self._code(raw))
            except ValueError as e:
                bad = (i, str(e))
                break
        applied, flags, status = state.step_plan(seat, codes)
        done = codes if applied == len(codes) else codes[:applied]
        if done:
            self._log_plan(seat, done, t_us, us_of(think), info,
                           state.hash() if flags & _END_TURN else None)
        if flags & _TERMINAL:
            self._finish(state.winner, None)
            return self._after(seat, done)
        if flags & _END_TURN:
            self._close_turn(seat)
        if status:
            try:
                state.check(status)
            except (IllegalActionError, GameOverError) as e:
                return self._illegal(seat, ErrorCode.ILLEGAL_ACTION, f"action {applied}: {e}", done)
        if applied < len(codes) or (bad is not None and flags & _END_TURN):
            # The plan went on past its end_turn (a malformed map after it included): the rest
            # is not this seat's to play.
            why = "end_turn" if flags & _END_TURN else "the turn passed"
            return self._after(seat, done, Refusal(
                ErrorCode.NOT_YOUR_TURN, f"actions {applied}.. of the plan came after {why}: ignored"))
        if bad is not None:
            return self._illegal(seat, ErrorCode.BAD_ACTION, f"action {bad[0]}: {bad[1]}", done)
        # Either the turn goes on (the seat is asked for the rest) or it passed to the other
        # seat: both prompt whoever is to move now (as the last step's flags say, if any).
        return self._told(seat, done, (1 if flags & _CURRENT_1 else 0) if done else -1)

    def resign(self, seat: int, now: float) -> Refusal | None:
        """`seat` resigns (at any time); the other seat wins. What happened as data: None
        (resigned: nothing to tell until `game_over`), or why not (the seat is sent an
        `error` of it)."""
        if self.outcome is not None:
            return Refusal(ErrorCode.UNKNOWN_GAME, "the game is over")
        self._finish(1 - seat, Reason.RESIGN)
        return None

    def abort(self, why: str = "aborted") -> None:
        """Stop the game without a winner (server shutdown)."""
        if self.outcome is None:
            self._finish(None, Reason.ABORTED)
            self.tags["Abort"] = why

    def set_want_legal(self, seat: int, want: bool) -> None:
        """Whether `your_turn` for `seat` lists the legal actions (from its `hello`)."""
        self.seats[seat].want_legal = want

    def set_want_groups(self, seat: int, want: bool) -> None:
        """Whether `your_turn` for `seat` carries the game's grouped legal actions."""
        self.seats[seat].want_groups = want

    def set_turn_events(self, seat: int, want: bool) -> None:
        """Whether `seat` hears the other seat's actions once its turn ends, in one
        `turn_events` (its hello's `events` "turn"), or one `event` each as they come."""
        self.seats[seat].turn_events = want

def _search_numbers(info: dict[str, Any] | None) -> tuple[float, float] | None:
    """(iterations, time_ms) of a message's info, or None unless it reports iterations."""
    if not info:
        return None
    its, ms = info.get("iterations"), info.get("time_ms", 0.0)
    if not isinstance(its, (int, float)) or isinstance(its, bool) or its < 0:
        return None
    if not isinstance(ms, (int, float)) or isinstance(ms, bool) or ms < 0:
        ms = 0.0
    return float(its), float(ms)

