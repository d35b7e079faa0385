"""The transport-free referee: one `GameSession` per game owns the engine state and the RNG
beside it, the seats' clocks and the policies, takes what a seat sends (one action, a whole
turn plan or part of one, a resignation) and returns what each seat must be told, as
`Out(seat, message)` values. No sockets, no tasks, no clock reads except through the
injected `clock` function: the server does I/O and timing, this module decides.

What each seat is told (message dicts in the wire schema of docs/protocol.md):

- `game_start` to both seats; `your_turn` to the seat to move, with its observation (the
  engine's observation state: no opponent hand, no deck order, no deck seeds, never the RNG),
  its clock, and the legal actions when the seat asked for them.
- After each `act` or `turn` from the seat to move: a `result` to that seat (how many of its
  actions were applied, and the error code that stopped the rest, if any), a new
  `your_turn` if its turn goes on, and one `event` per applied action to the opponent,
  carrying only what became visible: the action, with a swapped card's identity removed
  (it goes back into the hidden deck). Cards drawn at
  the end of a turn show up only in the drawing seat's next observation; the opponent's
  observation shows only the new hand and deck sizes.
- A refused action leaves the state unchanged (actions of the same plan before it stand).
- Seats are 0 and 1 in this module's API and 1 and 2 on the wire (as in observations).
- `game_over` only through `game_over_messages`, which the server calls once the result
  and replay are stored.

Policies (the `Policy` dataclass, all configurable):

- late: when a seat's thinking time in a turn exceeds its allowance (turn budget plus bank;
  the referee waits `lag_ms` more before acting on it), its turn ends (`end_turn` applied for
  it, marked `auto` in the replay) and both seats get an `event` of kind `timeout`. A
  message that arrives after the allowance but before the referee acted on it is refused
  whole, with a `result` whose error is `timeout`. After `max_late` late turns in one game
  the seat loses (reason `timeout`); with `late=forfeit` the first late turn loses.
- illegal actions: each gets a `result` with error `illegal_action` (and the rule it
  breaks) or `bad_action` (not an action of this game), then a new `your_turn`: the turn
  goes on, so the seat may retry until its deadline. The `max_illegal`-th one in a game
  loses the game (reason `illegal_actions`).
- disconnect: the seat may reconnect with the same token within `disconnect_grace_ms`
  (its clock keeps running meanwhile; it is then sent `game_start` and, on move, `your_turn`
  again, and the opponent gets `event`s of kind `disconnect` and `reconnect`); after that
  it loses (reason `disconnect`).
- resignation: at any time, by either seat; the other seat wins (reason `resign`).

Verdicts: a game lost other than on the board (or by resignation) carries a verdict saying
why, from a fixed list (`VERDICTS`): `time`, `illegal`, `disconnect`, and what the server
learns of the seat's connection or process (`fault`): `protocol` (a fatal protocol error),
`crash` and `memory` (a hosted bot's process ended by a signal, an exit code or its memory
limit), `startup` (it never said hello). A fault given with `final=True` (a hosted process,
which cannot come back) ends the game at once instead of after the grace period.
"""

from __future__ import annotations

import enum
import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from math import isfinite
from typing import Any, NamedTuple

import msgpack
from maag.engine import Action, Game, GameOverError, IllegalActionError
from maag.protocol import (
    Error,
    ErrorCode,
    GameEvent,
    GameOver,
    GameStart,
    Message,
    Packed,
    Replies,
    Result,
    YourTurn,
    is_action,
)
from maag.server.referee.clock import SeatClock, TimeControl
from maag.server.referee.policy import LatePolicy, Policy

__all__ = ["GameSession", "Policy", "LatePolicy", "Out", "Outcome", "Reason", "derive_seed",
           "REPLAY_VERSION", "VERDICTS", "YourTurnValues"]

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


YourTurnValues = tuple[bytes, int, int, "bytes | None", Any]
"""A `your_turn`'s observation (msgpack), time_left_ms, bank_ms, legal list (msgpack; None
if the seat did not ask for it) and groups (None if not asked for or the game has none)."""


class Out(NamedTuple):
    """A message for one seat (a tuple: made for every message the referee sends)."""

    seat: int
    msg: Message


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


def derive_seed(base: int, index: int) -> int:
    """The seed of game `index` of a reproducible run seeded with `base` (splitmix64)."""
    z = (base + (index + 1) * 0x9E3779B97F4A7C15) & (2**64 - 1)
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & (2**64 - 1)
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & (2**64 - 1)
    return (z ^ (z >> 31)) & (2**63 - 1)


UNLIMITED_MS = 2**31 - 1
"""time_left_ms sent when the time control is unlimited."""


_ACTION_DICTS: dict[str, dict[int, dict[str, Any]]] = {}
_MAX_ACTION_CODES = 1 << 16  # action maps a bot sent in other forms, remembered per game


def _action_dicts(game: str) -> dict[int, dict[str, Any]]:
    return _ACTION_DICTS.setdefault(game, {})


_PUBLIC_MSGPACK: dict[str, dict[int, bytes]] = {}  # per game and code: GameSession.public_msgpack


def _public_msgpack(game: str) -> dict[int, bytes]:
    return _PUBLIC_MSGPACK.setdefault(game, {})


_ACTION_JSON: dict[str, dict[int, str]] = {}  # per game and code: the action map's JSON (the log's)


def _action_json(game: str) -> dict[int, str]:
    return _ACTION_JSON.setdefault(game, {})


def _entry_json(entry: dict[str, Any]) -> str:
    """A log entry as `log_json` writes it (and json.dumps of the log would)."""
    return json.dumps(entry, separators=(",", ":"))


def _now_ms(t: float) -> float:
    return t * 1000.0


@dataclass(slots=True)
class _Seat:
    name: str
    clock: SeatClock
    prompt_at: float | None = None      # when the referee last prompted this seat (s)
    disconnected_at: float | None = None
    illegal: int = 0
    late_turns: int = 0
    want_legal: bool = False
    want_groups: bool = False
    turn_search: list[float] | None = None  # iterations, time_ms the seat reported this turn
    search: list[tuple[float, float]] = field(default_factory=list)  # per reported turn


class GameSession:
    """One game between two seats. Every method returns the messages to send, in order."""

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
        self._dicts = _action_dicts(self.game.name)
        self._other_forms: dict[bytes, int] = {}  # an action map's bytes -> code, when not the game's
        # One per session (sessions run in threads), small (the default buffer is 256 KiB).
        self._pack_key = msgpack.Packer(use_bin_type=True, buf_size=1024).pack
        self._public_packed = _public_msgpack(self.game.name)
        self._action_text = _action_json(self.game.name)
        if len(names) != 2 or len(want_legal) != 2 or len(want_groups) != 2:
            raise ValueError("a game has two seats")
        self.seats = [_Seat(str(n), SeatClock(self.tc), want_legal=bool(w), want_groups=bool(g))
                      for n, w, g in zip(names, want_legal, want_groups, strict=True)]
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

    # -- queries ------------------------------------------------------------------------
    @property
    def finished(self) -> bool:
        return self.outcome is not None

    @property
    def to_move(self) -> int:
        return self.state.current_player

    def next_deadline(self) -> float | None:
        """The earliest time (clock seconds) at which `tick` has something to do, or None."""
        if self.outcome is not None or self.t0 is None:
            return None
        times = []
        if not self.tc.unlimited:
            s = self.seats[self.to_move]
            if s.prompt_at is not None:
                times.append(s.prompt_at + (s.clock.available_ms() + self.tc.lag_ms) / 1000.0)
        for seat in self.seats:
            if seat.disconnected_at is not None:
                times.append(seat.disconnected_at + self.policy.disconnect_grace_ms / 1000.0)
        return min(times) if times else None

    # -- driving ------------------------------------------------------------------------
    def start(self, now: float | None = None) -> list[Out]:
        """`game_start` for both seats, then `your_turn` for the seat to move."""
        self.t0 = self._clock() if now is None else now
        outs = [Out(i, self._game_start(i)) for i in (0, 1)]
        if self.state.is_terminal:
            self._finish(self.state.winner, None)
            return outs
        return outs + self._prompt_turn()

    def submit(self, seat: int, actions: Sequence[dict[str, Any] | Action | int], now: float,
               transport_ms: float = 0.0, info: dict[str, Any] | None = None) -> list[Out]:
        """Actions from `seat` (one `act`, or a `turn` plan, whole or partial) received at
        `now`; `transport_ms` is the server's measure of this exchange's transport time;
        `info` what the seat said its search did (the message's `info`: its `iterations` and
        `time_ms` are added up per turn, see `search_report`). An action is a map, an
        Action or a code."""
        codes: list[int] = []
        outs = self._play(seat, actions, now, transport_ms, info, codes)
        if outs is not None:
            return outs
        return [self._result(seat, len(codes))] + self._events(seat, codes) + self._prompt_turn()

    def play_codes(self, seat: int, codes: Sequence[int], now: float,
                   transport_ms: float = 0.0) -> list[Out] | None:
        """`submit` of action codes without its messages when nothing unusual happens (the
        server's fast path): None when every action was applied and the game goes on. The
        caller then tells the seats what `submit` would have: `seat` a `result` accepting
        them all, the other seat an action `event` per code (`public_msgpack`), and the seat
        now to move its `your_turn` (`prompt`, which must come next). Otherwise `submit`'s
        messages, all of them."""
        state = self.state
        if len(codes) != 1 or self.outcome is not None or self.t0 is None or seat != state.current_player:
            return self._play(seat, codes, now, transport_ms, None, [])
        # One action from the seat to move (an act: most messages), `_play`'s steps written
        # out for it.
        think = self._charge(seat, now, transport_ms)
        if self.seats[seat].clock.late:
            return self._too_late(seat, now)
        code = codes[0]
        try:
            state.apply_code(code)
        except (IllegalActionError, GameOverError) as e:
            return self._illegal(seat, ErrorCode.ILLEGAL_ACTION, f"action 0: {e}", [])
        turn_over = self.game.vt.is_end_turn(code)
        self._log_entry(seat, code, round(_now_ms(now - self.t0), 3), round(think, 3), None,
                        state.hash() if turn_over else None)
        if state.is_terminal:
            self._finish(state.winner, None)
            return [self._result(seat, 1)] + self._events(seat, codes)
        if turn_over:
            self._close_turn(seat)
        return None

    def prompt(self) -> tuple[int, YourTurnValues]:
        """After `play_codes` returned None: the seat to move and its `your_turn`'s values;
        its thinking time starts now."""
        seat = self.state.current_player
        values = self.your_turn_values(seat)
        self.seats[seat].prompt_at = self._clock()
        return seat, values

    def prompt_frame(self, replies: Replies) -> tuple[int, bytes]:
        """`prompt` in the msgpack framing: the seat to move and its whole `your_turn` frame,
        from `replies`' templates and the game's C (`State.prompt_msgpack`)."""
        seat = self.state.current_player
        s = self.seats[seat]
        left, bank = self._time_left(s)
        head, mid, tail = replies.your_turn_parts(left, bank, s.want_legal, self._groups(seat, s))
        frame = self.state.prompt_msgpack(seat, head, mid, tail, s.want_legal)
        s.prompt_at = self._clock()
        return seat, frame

    def _log_entry(self, seat: int, code: int, t_ms: float, think_ms: float | None,
                   info: dict[str, Any] | None, h: int | None) -> None:
        """Log action `code` of `seat` at `t_ms`, with the seat's thinking time for
        the first action of a message, its `info` if any and the state's hash after an
        end_turn; and the entry's JSON (`log_json`), written out: without json.dumps's walk,
        the action's map encoded once per game and code, the figures a float's and an int's
        repr as json writes them (a float that is not finite is left to json.dumps)."""
        d = self._dicts.get(code) or self._dict(code)
        entry: dict[str, Any] = {"seat": seat, "action": d, "t_ms": t_ms}
        if think_ms is not None:
            entry["think_ms"] = think_ms
        if info:
            entry["info"] = info
        if h is not None:
            entry["hash"] = h
        log, text = self.log, self._log_text
        log.append(entry)
        if len(text) != len(log) - 1 or not isfinite(t_ms + (think_ms or 0.0)):
            return  # (encoded later by `log_json`)
        a = self._action_text.get(code)
        if a is None:
            a = self._action_text[code] = json.dumps(d, separators=(",", ":"))
        out = f'{{"seat":{seat},"action":{a},"t_ms":{t_ms!r}'
        if think_ms is not None:
            out += f',"think_ms":{think_ms!r}'
        if info:
            out += ',"info":' + json.dumps(info, separators=(",", ":"))
        text.append(out + (f',"hash":{h}}}' if h is not None else "}"))

    def log_json(self, start: int = 0) -> str:
        """The log's entries from `start` on as a JSON array, as
        `json.dumps(self.log[start:], separators=(",", ":"))` writes it; each entry is encoded
        once, whichever of the action log and the stored replay asks first."""
        log, text = self.log, self._log_text
        if len(text) < len(log):
            text.extend(_entry_json(e) for e in log[len(text):])
        return "[" + ",".join(text[start:len(log)]) + "]"

    def public_msgpack(self, code: int) -> bytes:
        """The msgpack bytes of what the other seat sees of action `code` (its `event`'s
        action; made once per game and code)."""
        b = self._public_packed.get(code)
        if b is None:
            b = self._public_packed[code] = self._pack_key(self._public(self._dict(code)))
        return b

    def plain_messages(self, seat: int, codes: Sequence[int], prompted: int,
                       values: YourTurnValues) -> list[Out]:
        """The messages `submit` would have returned where `play_codes` returned None (and
        `prompt` gave `prompted`, `values`): for seats the fast path cannot write to."""
        return ([self._result(seat, len(codes))] + self._events(seat, codes)
                + [Out(prompted, self._your_turn_message(values))])

    def _play(self, seat: int, actions: Sequence[dict[str, Any] | Action | int], now: float,
              transport_ms: float, info: dict[str, Any] | None, codes: list[int]) -> list[Out] | None:
        """`submit`'s work: the actions applied (their codes appended to `codes`) and logged,
        the clocks charged; the messages to send when something unusual happened, None when
        every action was applied and the game goes on (the caller says so to the seats)."""
        refusal = self._refuse(seat)
        if refusal:
            return refusal
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
        turn_over = False
        state, is_end_turn = self.state, self.game.vt.is_end_turn
        t_ms = round(_now_ms(now - self._t0), 3)
        for i, raw in enumerate(actions):
            if turn_over:
                # The plan went on past its end_turn: the rest is not this seat's to play.
                return ([self._result(seat, len(codes), ErrorCode.NOT_YOUR_TURN,
                                      f"actions {i}.. of the plan came after end_turn: ignored")]
                        + self._events(seat, codes) + self._prompt_turn())
            try:
                code = raw if type(raw) is int else self._code(raw)
            except ValueError as e:
                return self._illegal(seat, ErrorCode.BAD_ACTION, f"action {i}: {e}", codes)
            try:
                state.apply_code(code)
            except (IllegalActionError, GameOverError) as e:
                return self._illegal(seat, ErrorCode.ILLEGAL_ACTION, f"action {i}: {e}", codes)
            codes.append(code)
            turn_over = bool(is_end_turn(code))
            self._log_entry(seat, code, t_ms, round(think, 3) if i == 0 else None,
                            info if i == 0 else None, state.hash() if turn_over else None)
            if state.is_terminal:
                self._finish(self.state.winner, None)
                return [self._result(seat, len(codes))] + self._events(seat, codes)
            if turn_over:
                self._close_turn(seat)
        # Either the turn goes on (the seat is asked for the rest) or it passed to the other
        # seat: both get a prompt for whoever is to move now (the caller's).
        return None

    def resign(self, seat: int, now: float) -> list[Out]:
        """`seat` resigns (at any time); the other seat wins."""
        if self.outcome is not None:
            return [Out(seat, _error(ErrorCode.UNKNOWN_GAME, "the game is over", self.game_id))]
        self._finish(1 - seat, Reason.RESIGN)
        return []

    def tick(self, now: float) -> list[Out]:
        """Act on deadlines that have passed at `now`: late turns, expired grace periods."""
        if self.outcome is not None or self.t0 is None:
            return []
        grace = self.policy.disconnect_grace_ms / 1000
        for i, s in enumerate(self.seats):
            if s.disconnected_at is not None and now >= s.disconnected_at + grace:
                self._finish(1 - i, Reason.DISCONNECT)
                return []
        seat = self.to_move
        s = self.seats[seat]
        if self.tc.unlimited or s.prompt_at is None:
            return []
        if _now_ms(now - s.prompt_at) >= s.clock.available_ms() + self.tc.lag_ms:
            self._charge(seat, now, self.tc.lag_ms)
            return self._late(seat, now)
        return []

    def disconnect(self, seat: int, now: float, fault: tuple[str, str] | None = None,
                   final: bool = False) -> list[Out]:
        """The seat's connection is gone; it has the grace period to come back, unless
        `final` (it cannot: a hosted process that ended). `fault`: (verdict, detail) when
        the server knows why (a protocol error, a crash, the memory limit)."""
        s = self.seats[seat]
        if self.outcome is not None or s.disconnected_at is not None:
            return []
        s.disconnected_at = now
        if fault is not None:
            self.faults[seat] = fault
        if self.policy.disconnect_grace_ms <= 0 or final:
            self._finish(1 - seat, Reason.DISCONNECT)
            return []
        return [Out(1 - seat, self._event(seat, "disconnect"))]

    def reconnect(self, seat: int, now: float) -> list[Out]:
        """The seat is back: it is told the game again, and its turn if it is on move."""
        s = self.seats[seat]
        if self.outcome is not None or s.disconnected_at is None:
            return []
        s.disconnected_at = None
        self.faults[seat] = None
        outs = [Out(seat, self._game_start(seat)),
                Out(1 - seat, self._event(seat, "reconnect"))]
        if self.to_move == seat and self.t0 is not None:
            outs.append(Out(seat, self._your_turn(seat)))
        return outs

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

    def game_over_messages(self, replay_id: int | str | None) -> list[Out]:
        """`game_over` for both seats; call once the result and replay are stored."""
        o = self.outcome
        if o is None:
            raise RuntimeError("the game is not over")
        winner = o.winner + 1 if o.winner in (0, 1) else None  # type: ignore[operator]
        msg = GameOver.built(game_id=self.game_id, winner=winner, reason=o.reason.value,
                       replay_id=None if replay_id is None else str(replay_id))
        return [Out(0, msg), Out(1, msg)]

    # -- the replay ---------------------------------------------------------------------
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

    # -- internals ----------------------------------------------------------------------
    @property
    def _t0(self) -> float:
        return self.t0 if self.t0 is not None else 0.0

    def _refuse(self, seat: int) -> list[Out] | None:
        if self.outcome is not None:
            return [self._result(seat, 0, ErrorCode.UNKNOWN_GAME, "the game is over")]
        if self.t0 is None:
            return [self._result(seat, 0, ErrorCode.NOT_YOUR_TURN, "the game has not started")]
        if seat != self.to_move:
            return [self._result(seat, 0, ErrorCode.NOT_YOUR_TURN, "it is the other seat's turn")]
        return None

    def codes_of(self, keys: Sequence[bytes]) -> list[int] | None:
        """The codes of actions given by their maps' msgpack bytes (`Connection.plain`'s), what
        `_code` finds for the maps a message with these bytes holds; None if one of them is
        no map a message may hold in its smallest form, or no action of this game (`submit`
        then reads the message, and says what is wrong)."""
        code_of = self.game.code_of_msgpack
        out = []
        for k in keys:
            c = code_of(k)
            if c is None:
                c = self._other_forms.get(k)
            if c is None:
                c = self._new_code(k)
                if c is None:
                    return None
            out.append(c)
        return out

    def _new_code(self, key: bytes) -> int | None:
        """`codes_of` for a map the game has not packed yet (bots that send whole turns ask
        for no legal list, which would have packed theirs): parsed as `_code` parses it."""
        try:
            raw = msgpack.unpackb(key, raw=False, strict_map_key=True, use_list=True)
            if not is_action(raw) or self._pack_key(raw) != key:
                return None
            return self._code(raw)
        except Exception:  # (not an action: the general path says why)
            return None

    def _code(self, raw: dict[str, Any] | Action) -> int:
        """The code of an action of a message (ValueError if it is none)."""
        if isinstance(raw, Action):
            return raw.code
        if not isinstance(raw, dict):
            raise ValueError("an action must be a map with a 'type' field")
        # Bots send back the maps of the legal list as they got them: packing one (in C) and
        # looking its bytes up replaces the game's parser (in Python) for almost every action.
        try:
            key = self._pack_key(raw)
        except (TypeError, ValueError, OverflowError):  # (not JSON data: the parser says why)
            return self.game.action(raw).code
        code = self.game.code_of_msgpack(key)
        if code is None:
            code = self._other_forms.get(key)
            if code is None:
                code = self.game.action(raw).code
                # Its packed map is known from now on (its code's first packing), and the
                # form the bot used too if it is another (the parser is a function of the map).
                if self.game.action_msgpack(code) != key and len(self._other_forms) < _MAX_ACTION_CODES:
                    self._other_forms[key] = code
        return code

    def _charge(self, seat: int, now: float, transport_ms: float) -> float:
        s = self.seats[seat]
        if s.prompt_at is None:
            return 0.0
        think = s.clock.charge(_now_ms(now - s.prompt_at), transport_ms)
        s.prompt_at = now
        return think

    def _result(self, seat: int, accepted: int, code: ErrorCode | None = None,
                text: str | None = None) -> Out:
        if code is None:
            return Out(seat, Result.built(game_id=self.game_id, accepted=accepted))
        return Out(seat, Result.built(game_id=self.game_id, accepted=accepted, error=code.value,
                                message=text or ""))

    def _too_late(self, seat: int, now: float) -> list[Out]:
        """A message that came after the seat's time ran out: refused whole, the turn ended."""
        return [self._result(seat, 0, ErrorCode.TIMEOUT, "the turn's time ran out before this message "
                             "arrived; the turn was ended")] + self._late(seat, now)

    def _illegal(self, seat: int, code: ErrorCode, text: str, codes: list[int]) -> list[Out]:
        """An illegal or malformed action after `codes` were applied."""
        s = self.seats[seat]
        s.illegal += 1
        outs = [self._result(seat, len(codes), code, text)] + self._events(seat, codes)
        if self.policy.max_illegal is not None and s.illegal >= self.policy.max_illegal:
            self._finish(1 - seat, Reason.ILLEGAL)
            return outs
        return outs + self._prompt_turn()

    def _late(self, seat: int, now: float) -> list[Out]:
        s = self.seats[seat]
        s.late_turns += 1
        outs = [Out(seat, self._event(seat, "timeout")), Out(1 - seat, self._event(seat, "timeout"))]
        if self.policy.late == LatePolicy.FORFEIT or (
                self.policy.max_late is not None and s.late_turns >= self.policy.max_late):
            self._finish(1 - seat, Reason.TIMEOUT)
            return outs
        end = self._end_turn_code()  # legal in any live state (mg_game.h)
        self.state.apply(end)
        self.log.append({"seat": seat, "action": self._dict(end),
                         "t_ms": round(_now_ms(now - self._t0), 3), "auto": True, "hash": self.state.hash()})
        if self.state.is_terminal:
            self._finish(self.state.winner, None)
            return outs
        self._close_turn(seat)
        return outs + self._prompt_turn()

    def _end_turn_code(self) -> int:
        vt = self.game.vt
        return next(c for c in self.state.legal_codes() if vt.is_end_turn(c))

    def _dict(self, code: int) -> dict[str, Any]:
        """The readable form of an action code (cached per game: the same objects are
        shared by messages and the log, and never modified)."""
        d = self._dicts.get(code)
        if d is None:
            d = self._dicts[code] = self.game.action(code).to_dict()
        return d

    def _events(self, seat: int, codes: Sequence[int]) -> list[Out]:
        """The other seat's `event`s of the actions `codes` that `seat` played."""
        other, public, dict_of = 1 - seat, self._public, self._dict
        return [Out(other, self._event(seat, "action", public(dict_of(c)))) for c in codes]

    def _event(self, seat: int, kind: str, action: dict[str, Any] | None = None) -> GameEvent:
        return GameEvent.built(game_id=self.game_id, seat=seat + 1, kind=kind, action=action)

    def _close_turn(self, seat: int) -> None:
        s = self.seats[seat]
        if s.turn_search is not None:
            s.search.append((s.turn_search[0], s.turn_search[1]))
            s.turn_search = None
        s.clock.end_turn()
        s.prompt_at = None
        self.turn_no += 1

    def _prompt_turn(self) -> list[Out]:
        seat = self.to_move
        msg = self._your_turn(seat)
        self.seats[seat].prompt_at = self._clock()
        return [Out(seat, msg)]

    def _your_turn(self, seat: int) -> YourTurn:
        return self._your_turn_message(self.your_turn_values(seat))

    def your_turn_values(self, seat: int) -> YourTurnValues:
        """What a `your_turn` for `seat` would hold now."""
        s = self.seats[seat]
        left, bank = self._time_left(s)
        legal = self.state.legal_msgpack() if s.want_legal else None
        groups = self._groups(seat, s)
        # Both already msgpack: the observation written by the game's C, the legal list from
        # each action's bytes (the framing copies them; see maag.protocol.Packed).
        return self.state.observation_msgpack(seat), left, bank, legal, groups

    def _time_left(self, s: _Seat) -> tuple[int, int]:
        """A your_turn's time_left_ms and bank_ms for seat `s`."""
        if self.tc.turn_ms is None:
            return UNLIMITED_MS, 0
        return (int(max(0.0, min(self.tc.turn_ms - s.clock.used_ms, s.clock.available_ms()))),
                int(max(0.0, min(s.clock.bank_ms, s.clock.available_ms()))))

    def _groups(self, seat: int, s: _Seat) -> Any:
        """A your_turn's groups for `seat` (seat `s`): None unless asked for and the game has them."""
        if not s.want_groups:
            return None
        grouper = self.game.spec.groups
        # Read from the seat's observation, so that they can tell nothing it may not see.
        return None if grouper is None else grouper(self.state.observation(seat))

    def _your_turn_message(self, values: YourTurnValues) -> YourTurn:
        obs, left, bank, legal, groups = values
        return YourTurn.built(game_id=self.game_id, observation=Packed(obs), time_left_ms=left, bank_ms=bank,
                              legal=None if legal is None else Packed(legal), groups=groups)

    def _game_start(self, seat: int) -> GameStart:
        return GameStart.built(game_id=self.game_id, game=self.game.name, seat=seat + 1,
                               config=self.game.config, time_control=self.tc.to_wire(),
                               opponent=self.seats[1 - seat].name)

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


def _error(code: ErrorCode, message: str, game_id: str | None) -> Error:
    return Error(code=code.value, message=message, game_id=game_id)
