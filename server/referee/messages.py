"""What the referee tells each seat (the messages of docs/protocol.md), as data: what an act
or turn did (`_told`, `_after`: a `maag.protocol.Played`), a start or a seat back
(`_opening`: an `Opening`); the seats' connections' `Writer`s write it, and `messages_of`,
`opening_messages` turn it into `Out(seat, message)` values for callers without a
connection:

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
- To an opponent whose hello asked for `events` "turn" (`Seat.turn_events`), those actions
  are held (`Seat.held`, their codes) and told in one `turn_events` (the same public action
  maps, in order) when it is next told anything else: before its `your_turn` (the turn
  passed to it), its `game_over`, or an `event` of another kind (timeout, disconnect,
  reconnect); a turn of more than MAX_TURN_ACTIONS actions in several. What is held for a
  seat whose connection went is dropped (it would not have been sent): a seat that comes
  back hears of the actions after it did, as with `event`s.
- Seats are 0 and 1 in the referee's API and 1 and 2 on the wire (as in observations).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from maag.engine import State
from maag.protocol import (
    MAX_TURN_ACTIONS,
    ErrorCode,
    GameEvent,
    GameStart,
    Message,
    Notice,
    Opening,
    Packed,
    Played,
    Refusal,
    Result,
    TurnEvents,
    YourTurn,
)
from maag.server.referee.clock import Seat, TimeControl
from maag.server.referee.codes import ActionLog

__all__ = ["Messages", "Out", "YourTurnValues", "UNLIMITED_MS"]

YourTurnValues = tuple[bytes, int, int, "bytes | None", Any]
"""A `your_turn`'s observation (msgpack), time_left_ms, bank_ms, legal list (msgpack; None
if the seat did not ask for it) and groups (None if not asked for or the game has none)."""

UNLIMITED_MS = 2**31 - 1
"""time_left_ms sent when the time control is unlimited."""


class Out(NamedTuple):
    """A message for one seat (a tuple: made for every message the referee sends)."""

    seat: int
    msg: Message


_new = tuple.__new__


class Messages(ActionLog):
    """The messages a `GameSession` writes (a base class of it, over its attributes)."""

    game_id: str
    tc: TimeControl
    seats: list[Seat]
    state: State
    _clock: Callable[[], float]

    @property
    def to_move(self) -> int:
        return self.state.current_player

    def _told(self, seat: int, codes: Sequence[int], to: int = -1) -> Played:
        """After `seat` played `codes` (every one applied, the game going on): the seat to
        move (`to`, if the caller knows it) is prompted (its thinking time starts now), and
        how the other seat hears of the actions now: one `event` each, or (asked for once a
        turn) nothing until the turn passes to it, then one `turn_events` of those held (or
        as soon as MAX_TURN_ACTIONS are held)."""
        if to < 0:
            to = self.state.current_player
        s = self.seats[to]
        left, bank = (UNLIMITED_MS, 0) if self.tc.turn_ms is None else self._time_left(s)
        groups = self._groups(to, s) if s.want_groups else None
        s.prompt_at = self._clock()
        other = self.seats[1 - seat]
        # (tuple.__new__: a NamedTuple's own constructor is Python code, and this runs every act)
        if not other.turn_events:
            return _new(Played, (len(codes), codes, (), to, left, bank, s.want_legal, groups, (), None, None,
                                 False))
        held = other.held
        held.extend(codes)
        if to != 1 - seat and len(held) < MAX_TURN_ACTIONS:
            return _new(Played, (len(codes), (), (), to, left, bank, s.want_legal, groups, (), None, None,
                                 False))
        other.held = []
        return _new(Played, (len(codes), (), held, to, left, bank, s.want_legal, groups, (), None, None,
                             False))

    def _after(self, seat: int, codes: Sequence[int], refused: Refusal | None = None,
               late: tuple[Sequence[int], Sequence[int]] | None = None) -> Played:
        """What a play that did something unusual did (refused, late, an illegal action, the
        game's end): `seat`'s `codes` applied, told to the other seat as `_told` tells them;
        then, the game going on, the seat to move prompted after the actions held for it."""
        other = self.seats[1 - seat]
        live: Sequence[int] = codes
        held: Sequence[int] = ()
        if other.turn_events:
            live = ()
            other.held.extend(codes)
            if len(other.held) >= MAX_TURN_ACTIONS:
                held, other.held = other.held, []
        if self.outcome is not None:
            return Played(len(codes), live, held, -1, 0, 0, False, None, (), refused, late, True)
        to = self.state.current_player
        s = self.seats[to]
        left, bank = self._time_left(s)
        released: Sequence[int] = ()
        if s.held:  # (the seat prompted hears of what was held for it first)
            if to == 1 - seat:
                held = [*held, *s.held]
            else:
                released = s.held
            s.held = []
        p = Played(len(codes), live, held, to, left, bank, s.want_legal, self._groups(to, s), released,
                   refused, late, False)
        self._prompted(to)
        return p

    def _refused(self, seat: int, code: ErrorCode, text: str) -> Played:
        """A play refused whole, nothing else happening (the seat is told why)."""
        return Played(0, (), (), -1, 0, 0, False, None, (), Refusal(code, text), None,
                      self.outcome is not None)

    def _prompted(self, seat: int) -> None:
        """Seat `seat` is sent a `your_turn`: its thinking time starts now."""
        self.seats[seat].prompt_at = self._clock()

    def messages_of(self, seat: int, p: Played, result: bool = True) -> list[Out]:
        """The messages of what `seat`'s play did (`p`), in the order a connection's `Writer`
        writes them (for callers without a connection, e.g. `submit`): `seat`'s `result`
        (unless not `result`: a late turn the clock ended), the other seat's `event`s and
        `turn_events`, the `timeout` events of a late play, the prompted seat's `your_turn`."""
        other, public, dict_of = 1 - seat, self._public, self._dict
        outs = [self._result(seat, p.accepted, *(p.refused or (None, None)))] if result else []
        outs += [Out(other, self._event(seat, "action", public(dict_of(c)))) for c in p.live]
        outs += self._turn_events(other, p.held)
        if p.late is not None:
            for to in (seat, other):
                outs += self._turn_events(to, p.late[to])
                outs.append(Out(to, self._event(seat, "timeout")))
        if p.prompted >= 0:
            obs = self.state.observation_msgpack(p.prompted)
            legal = self.state.legal_msgpack() if p.legal else None
            outs += self._turn_events(p.prompted, p.released)
            values = (obs, p.time_left_ms, p.bank_ms, legal, p.groups)
            outs.append(Out(p.prompted, self._your_turn_message(values)))
        return outs

    def _result(self, seat: int, accepted: int, code: ErrorCode | None = None,
                text: str | None = None) -> Out:
        if code is None:
            return Out(seat, Result.built(game_id=self.game_id, accepted=accepted))
        return Out(seat, Result.built(game_id=self.game_id, accepted=accepted, error=code.value,
                                message=text or ""))

    def _take_held(self, to: int) -> list[int]:
        """The actions held for seat `to`, to be told now (none held from then on)."""
        s = self.seats[to]
        held, s.held = s.held, []
        return held

    def _turn_events(self, to: int, codes: Sequence[int]) -> list[Out]:
        """Seat `to`'s `turn_events` of the other seat's actions `codes` (none for none)."""
        public, dict_of, n = self._public, self._dict, MAX_TURN_ACTIONS
        return [Out(to, TurnEvents.built(game_id=self.game_id, seat=2 - to,
                                         actions=[public(dict_of(c)) for c in codes[i:i + n]]))
                for i in range(0, len(codes), n)]


    def _event(self, seat: int, kind: str, action: dict[str, Any] | None = None) -> GameEvent:
        return GameEvent.built(game_id=self.game_id, seat=seat + 1, kind=kind, action=action)

    def _opening(self, seats: tuple[int, ...], notice: Notice | None, to: int,
                 released: Sequence[int] = ()) -> Opening:
        """The game told to `seats` anew, `notice` to the other seat, seat `to` (-1: none)
        prompted with what its `your_turn` holds now, after `released`."""
        names = (self.seats[0].name, self.seats[1].name)
        tc = self.tc.to_wire()
        if to < 0:
            return Opening(seats, self.game.name, self.game.config, tc, names, notice, -1, 0, 0, False, None,
                           ())
        s = self.seats[to]
        left, bank = self._time_left(s)
        return Opening(seats, self.game.name, self.game.config, tc, names, notice, to, left, bank,
                       s.want_legal, self._groups(to, s), released)

    def opening_messages(self, o: Opening) -> list[Out]:
        """The messages of `o` (for callers without a connection), in the order the seats'
        `Writer`s write them: `game_start`s, the notice (after the actions held for its
        seat), the prompted seat's `your_turn` (after those held for it)."""
        outs = [Out(i, GameStart.built(game_id=self.game_id, game=o.game, seat=i + 1, config=o.config,
                                       time_control=o.time_control, opponent=o.names[1 - i]))
                for i in o.seats]
        n = o.notice
        if n is not None:
            outs += self._turn_events(n.to, n.held)
            outs.append(Out(n.to, self._event(n.seat, n.kind)))
        if o.prompted >= 0:
            p = o.prompted
            legal = self.state.legal_msgpack() if o.legal else None
            outs += self._turn_events(p, o.released)
            values = (self.state.observation_msgpack(p), o.time_left_ms, o.bank_ms, legal, o.groups)
            outs.append(Out(p, self._your_turn_message(values)))
        return outs

    def _time_left(self, s: Seat) -> tuple[int, int]:
        """A your_turn's time_left_ms and bank_ms for seat `s`."""
        if self.tc.turn_ms is None:
            return UNLIMITED_MS, 0
        return (int(max(0.0, min(self.tc.turn_ms - s.clock.used_ms, s.clock.available_ms()))),
                int(max(0.0, min(s.clock.bank_ms, s.clock.available_ms()))))

    def _groups(self, seat: int, s: Seat) -> Any:
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
