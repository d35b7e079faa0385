"""What a game's session says happened, written to its seats: a start or a seat back (an
`Opening`: `open`), a play or a late turn the clock ended (a `Played`: `tell`), an event that
carries no action (a seat gone: a `Notice`, `notify`) and the game's end (`game_over`, an
`Ended`: `end`), each seat's frames written by its connection's `Writer`, one write per
connection. The games (games.py) and the acts (acts.py) are handed one `Teller` by the
composition root (server.py).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from maag.protocol import LocalProtocolError, Notice, Opening, Played, Refusal, Writer
from maag.server.net.model import GameRequest
from maag.server.referee.session import GameSession

if TYPE_CHECKING:
    from maag.server.net.transport import Client

__all__ = ["Table", "Teller", "refusal_logged"]

LOG = logging.getLogger("maag.server.net.server")

_Part = tuple[int, str, Callable[[Writer], list[bytes]]]
"""What `Teller._write` writes to a seat: the seat, what it is (logged), its frames' writer."""


class Table(Protocol):
    """What a game written to is, to the teller (games.py's `LiveGame`)."""

    @property
    def session(self) -> GameSession: ...

    @property
    def clients(self) -> list[Client | None]: ...

    @property
    def request(self) -> GameRequest | None: ...


class Teller:
    """The writer of what the games' sessions say to their seats (see the module);
    `stats["messages_out"]` counts the frames written."""

    def __init__(self, stats: dict[str, int]) -> None:
        self.stats = stats

    def open(self, game: Table, o: Opening | None) -> None:
        """Write `o` (the game told to seats anew: `game_start`s, a reconnection's event
        after the actions held for its seat, the prompted seat's `your_turn` after those held
        for it; None: nothing) by the seats' connections' `Writer`s, in that order."""
        if o is None:
            return
        s = game.session
        gid = s.game_id
        parts: list[_Part] = [(i, "game_start", lambda w, i=i: [w.game_start(gid, i, o)])  # type: ignore[misc]
                              for i in o.seats]
        if o.notice is not None:
            parts.append(self._notice(game, o.notice))
        to = o.prompted
        if to >= 0:
            hook = game.request.on_prompt if game.request is not None else None
            if hook is not None and not s.finished:
                try:
                    hook(to)
                except Exception:
                    LOG.exception("game %s: the host's turn hook failed", gid)
            parts.append((to, "your_turn", lambda w: [*w.turn_events(gid, 2 - to, o.released, s), w.your_turn(
                gid, s.state, to, o.time_left_ms, o.bank_ms, o.legal, o.groups)]))
        self._write(game, parts)

    def _write(self, game: Table, parts: list[_Part]) -> None:
        """Each part's frames written by its seat's connection's `Writer` (none to a seat
        gone), in order, logged at debug level as `Client.queue` logs what it sends; one
        write per connection."""
        touched: list[Client] = []
        for i, what, write in parts:
            c = game.clients[i]
            if c is None or c.closed:
                continue
            try:
                frames = write(c.writer)
            except LocalProtocolError as e:
                c.not_sent(e, what)
                continue
            c.out += frames
            self.stats["messages_out"] += len(frames)
            LOG.debug("%d >> %s %s", c.id, game.session.game_id, what)
            if c not in touched:
                touched.append(c)
        for c in touched:
            c.flush()

    @staticmethod
    def _notice(game: Table, n: Notice) -> _Part:
        gid = game.session.game_id
        return (n.to, f"event {n.kind} of seat {n.seat + 1}", lambda w: [
            *w.turn_events(gid, 2 - n.to, n.held, game.session), w.event(gid, n.seat + 1, n.kind)])

    def tell(self, game: Table, seat: int, p: Played, result: bool = True) -> None:
        """Write what `seat`'s play did (`Played`: an act or turn, or a late turn the clock
        ended, then no `result`), each seat's frames by its connection's `Writer`, in the
        order `messages_of` gives: the seat's `result`, the other seat's `event`s or
        `turn_events`, a late play's `timeout` events, the prompted seat's `your_turn`; one
        write per connection."""
        s = game.session
        gid = s.game_id
        clients = game.clients
        me, other = clients[seat], clients[1 - seat]
        # (the tuple's fields read once: this runs every act)
        accepted, live, held, to, left, bank, legal, groups, released, refused, late, _ = p
        if to >= 0:
            req = game.request
            if req is not None and req.on_prompt is not None:  # (as `open` does for every your_turn)
                try:
                    req.on_prompt(to)
                except Exception:
                    LOG.exception("game %s: the host's turn hook failed", gid)
        sent = 0
        if refused is not None and me is not None and LOG.isEnabledFor(logging.DEBUG):
            refusal_logged(me, gid, "result", refused)
        if to == seat and me is not other and late is None and not released:
            # The seat's turn goes on (most plays): its result and its your_turn in one piece.
            to = -1
            if me is not None and not me.closed:
                try:
                    me.out.append(me.writer.reply(gid, accepted, refused, s.state, seat, left, bank, legal,
                                                  groups))
                    sent += 2
                except LocalProtocolError as e:
                    me.not_sent(e)
        elif result and me is not None and not me.closed:
            try:
                me.out.append(me.writer.result(gid, accepted, refused))
                sent += 1
            except LocalProtocolError as e:
                me.not_sent(e)
        if other is not None and (live or held) and not other.closed:
            try:
                w = other.writer
                frames = w.events(gid, seat + 1, live, s) if live else []
                if held:
                    frames += w.turn_events(gid, seat + 1, held, s)
                other.out += frames
                sent += len(frames)
            except LocalProtocolError as e:
                other.not_sent(e)
        if late is not None:  # (rare)
            for i in (seat, 1 - seat):
                c = clients[i]
                if c is not None and not c.closed:
                    try:
                        frames = c.writer.turn_events(gid, 2 - i, late[i], s)
                        frames.append(c.writer.event(gid, seat + 1, "timeout"))
                        LOG.debug("%d >> %s event timeout of seat %d", c.id, gid, seat + 1)
                        c.out += frames
                        sent += len(frames)
                    except LocalProtocolError as e:
                        c.not_sent(e)
        if to >= 0:
            c = clients[to]
            if c is not None and not c.closed:
                try:
                    if released:  # (rare: the actions held for it, told before its turn)
                        frames = c.writer.turn_events(gid, 2 - to, released, s)
                        c.out += frames
                        sent += len(frames)
                    c.out.append(c.writer.your_turn(gid, s.state, to, left, bank, legal, groups))
                    sent += 1
                except LocalProtocolError as e:
                    c.not_sent(e)
        self.stats["messages_out"] += sent
        if me is not None and me.out:
            me.flush()
        if other is not None and other is not me and other.out:  # (mid-turn, a seat hearing turns: nothing)
            other.flush()

    def notify(self, game: Table, n: Notice | None) -> None:
        """Write `n` (an event of a kind that carries no action, after the actions held for
        the seat told; None: nothing) by the seat's connection's `Writer`."""
        if n is not None:
            self._write(game, [self._notice(game, n)])

    def end(self, game: Table, replay_id: str | None) -> None:
        """`game_over` to both seats, each after the actions held for it (the session's
        `game_over`, data), written by each seat's connection's `Writer`."""
        s = game.session
        e = s.game_over(replay_id)
        self._write(game, [(i, f"game_over {e}", lambda w, i=i: [  # type: ignore[misc]
            *w.turn_events(s.game_id, 2 - i, e.held[i], s), w.game_over(s.game_id, e)]) for i in (0, 1)])


def refusal_logged(c: Client, game_id: str, kind: str, refused: Refusal) -> None:
    """A refusal written to `c`, logged at debug level as `Client.queue` logs what it sends
    (a play's frames are written by its `Writer`, not queued)."""
    LOG.debug("%d >> %s %s %s: %s", c.id, game_id, kind, refused.code.value, refused.detail)
