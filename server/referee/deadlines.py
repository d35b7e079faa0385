"""The seats' clocks and what the policies (`Policy`, all configurable) cost a seat:

- late: when a seat's thinking time in a turn exceeds its allowance (turn budget plus bank;
  the referee waits `lag_ms` more before acting on it), its turn ends (`end_turn` applied for
  it, marked `auto` in the replay; `expire` says so as data, `tick` as messages) and both
  seats get an `event` of kind `timeout`. A
  message that arrives after the allowance but before the referee acted on it is refused
  whole, with a `result` whose error is `timeout`. After `max_late` late turns in one game
  the seat loses (reason `timeout`); with `late=forfeit` the first late turn loses.
- illegal actions: each gets a `result` with error `illegal_action` (and the rule it
  breaks) or `bad_action` (not an action of this game), then a new `your_turn`: the turn
  goes on, so the seat may retry until its deadline. The `max_illegal`-th one in a game
  loses the game (reason `illegal_actions`). A refused action leaves the state unchanged
  (actions of the same plan before it stand).
- disconnect: the seat may reconnect with the same token within `disconnect_grace_ms`
  (its clock keeps running meanwhile; it is then sent `game_start` and, on move, `your_turn`
  again, and the opponent gets `event`s of kind `disconnect` (`gone` says it as data,
  `disconnect` as messages) and `reconnect` (`back`, `reconnect`)); after that
  it loses (reason `disconnect`). The actions held for it (turn events, messages.py) are
  dropped when it goes: it hears of those after it is back.
"""

from __future__ import annotations

from maag.protocol import ErrorCode, Notice, Opening, Played, Refusal
from maag.server.referee.codes import now_ms, us_of
from maag.server.referee.messages import Out
from maag.server.referee.outcome import Ending, Reason
from maag.server.referee.policy import LatePolicy

__all__ = ["Deadlines"]


class Deadlines(Ending):
    """A `GameSession`'s clocks, deadlines and sanctions (a base class of it)."""

    t0: float | None
    turn_no: int

    @property
    def _t0(self) -> float:
        return self.t0 if self.t0 is not None else 0.0

    def next_deadline(self) -> float | None:
        """The earliest time (clock seconds) at which `tick` has something to do, or None."""
        if self.outcome is not None or self.t0 is None:
            return None
        s0, s1 = self.seats
        if self.tc.turn_ms is None and s0.disconnected_at is None and s1.disconnected_at is None:
            return None  # (no clock and both seats here: after every act of a game without a clock)
        times = []
        if not self.tc.unlimited:
            s = self.seats[self.to_move]
            if s.prompt_at is not None:
                times.append(s.prompt_at + (s.clock.available_ms() + self.tc.lag_ms) / 1000.0)
        for seat in self.seats:
            if seat.disconnected_at is not None:
                times.append(seat.disconnected_at + self.policy.disconnect_grace_ms / 1000.0)
        return min(times) if times else None

    def expire(self, now: float) -> tuple[int, Played] | None:
        """Act on deadlines that have passed at `now`: late turns, expired grace periods.
        What happened as data: a late turn's seat and what the clock did (`Played`: the
        seats are told of it, the seat sent no `result`), or None (nothing to tell: nothing
        was due, or the game ended, its `game_over` sent once stored)."""
        if self.outcome is not None or self.t0 is None:
            return None
        grace = self.policy.disconnect_grace_ms / 1000
        for i, s in enumerate(self.seats):
            if s.disconnected_at is not None and now >= s.disconnected_at + grace:
                self._finish(1 - i, Reason.DISCONNECT)
                return None
        seat = self.to_move
        s = self.seats[seat]
        if self.tc.unlimited or s.prompt_at is None:
            return None
        if now_ms(now - s.prompt_at) >= s.clock.available_ms() + self.tc.lag_ms:
            self._charge(seat, now, self.tc.lag_ms)
            return seat, self._late(seat, now)
        return None

    def tick(self, now: float) -> list[Out]:
        """`expire`, and the messages it says to send (for callers without a connection)."""
        due = self.expire(now)
        return [] if due is None else self.messages_of(*due, result=False)

    def gone(self, seat: int, now: float, fault: tuple[str, str] | None = None,
             final: bool = False) -> Notice | None:
        """The seat's connection is gone; it has the grace period to come back, unless
        `final` (it cannot: a hosted process that ended). `fault`: (verdict, detail) when
        the server knows why (a protocol error, a crash, the memory limit). What happened
        as data: the other seat's `disconnect` event (a `Notice`), or None (nothing to
        tell: the game was over or ends now, its `game_over` sent once stored)."""
        s = self.seats[seat]
        if self.outcome is not None or s.disconnected_at is not None:
            return None
        s.disconnected_at = now
        s.held = []  # (what its connection would have been told: gone with it)
        if fault is not None:
            self.faults[seat] = fault
        if self.policy.disconnect_grace_ms <= 0 or final:
            self._finish(1 - seat, Reason.DISCONNECT)
            return None
        return Notice(1 - seat, seat, "disconnect", self._take_held(1 - seat))

    def disconnect(self, seat: int, now: float, fault: tuple[str, str] | None = None,
                   final: bool = False) -> list[Out]:
        """`gone`, and the messages it says to send (for callers without a connection)."""
        n = self.gone(seat, now, fault, final)
        return [] if n is None else [*self._turn_events(n.to, n.held), Out(n.to, self._event(n.seat, n.kind))]

    def back(self, seat: int, now: float) -> Opening | None:
        """The seat is back: it is told the game again (and the other seat of it, a
        `reconnect` event after the actions held for it), and its turn if it is on move; as
        data, None if there is nothing to tell (the game over, the seat not gone)."""
        s = self.seats[seat]
        if self.outcome is not None or s.disconnected_at is None:
            return None
        s.disconnected_at = None
        s.held = []  # (held while it was away: it hears of the actions after its game_start)
        self.faults[seat] = None
        notice = Notice(1 - seat, seat, "reconnect", self._take_held(1 - seat))
        return self._opening((seat,), notice, seat if self.to_move == seat and self.t0 is not None else -1)

    def reconnect(self, seat: int, now: float) -> list[Out]:
        """`back`, and the messages it says to send (for callers without a connection)."""
        o = self.back(seat, now)
        return [] if o is None else self.opening_messages(o)

    def _charge(self, seat: int, now: float, transport_ms: float) -> float:
        s = self.seats[seat]
        if s.prompt_at is None:
            return 0.0
        think = s.clock.charge(now_ms(now - s.prompt_at), transport_ms)
        s.prompt_at = now
        return think

    def _too_late(self, seat: int, now: float) -> Played:
        """A message that came after the seat's time ran out: refused whole, the turn ended."""
        return self._late(seat, now, Refusal(ErrorCode.TIMEOUT, "the turn's time ran out before this message "
                                             "arrived; the turn was ended"))

    def _illegal(self, seat: int, code: ErrorCode, text: str, codes: list[int]) -> Played:
        """An illegal or malformed action after `codes` were applied."""
        s = self.seats[seat]
        s.illegal += 1
        if self.policy.max_illegal is not None and s.illegal >= self.policy.max_illegal:
            self._finish(1 - seat, Reason.ILLEGAL)
        return self._after(seat, codes, Refusal(code, text))

    def _late(self, seat: int, now: float, refused: Refusal | None = None) -> Played:
        """Seat `seat`'s turn ended by the clock: both seats hear of it (after the actions
        held for each), and the turn passes, or the game is lost on time."""
        s = self.seats[seat]
        s.late_turns += 1
        late = (self._take_held(0), self._take_held(1))
        if self.policy.late == LatePolicy.FORFEIT or (
                self.policy.max_late is not None and s.late_turns >= self.policy.max_late):
            self._finish(1 - seat, Reason.TIMEOUT)
            return self._after(seat, (), refused, late)
        end = self._end_turn_code()  # legal in any live state (mg_game.h)
        self.state.apply(end)
        self.log.append({"seat": seat, "action": self._dict(end),
                         "t_ms": us_of(now_ms(now - self._t0)) / 1000.0, "auto": True,
                         "hash": self.state.hash()})
        if self.state.is_terminal:
            self._finish(self.state.winner, None)
        else:
            self._close_turn(seat)
        return self._after(seat, (), refused, late)

    def _end_turn_code(self) -> int:
        vt = self.game.vt
        return next(c for c in self.state.legal_codes() if vt.is_end_turn(c))

    def _close_turn(self, seat: int) -> None:
        s = self.seats[seat]
        if s.turn_search is not None:
            s.search.append((s.turn_search[0], s.turn_search[1]))
            s.turn_search = None
        s.clock.end_turn()
        s.prompt_at = None
        self.turn_no += 1
