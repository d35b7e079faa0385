"""What a seat sends in a game, handed to it: the one way every act, turn and resignation
takes, however the connection read it (by its bytes, `Connection.plain`, or by the general
reader; transport.py makes a `maag.protocol.Play` of either), to its game's session
(`GameSession.act` or `resign`, once), and what it did (`maag.protocol.Played`, data)
written to the seats by each seat's connection's `Writer` (templates on msgpack;
`Teller.tell`, telling.py, which writes a late turn the clock ended too). A seat
linked to a game hosted by another referee of the fleet has its message forwarded there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from maag.protocol import Error, ErrorCode, LocalProtocolError, Play, Result
from maag.server.net.games import Games, LiveGame
from maag.server.net.telling import Teller, refusal_logged

if TYPE_CHECKING:
    from maag.server.net.transport import Client

__all__ = ["Acts"]


class Acts:
    """The plays of one referee's seats, handed to its games (see the module)."""

    def __init__(self, games: Games, teller: Teller) -> None:
        self.games, self.teller = games, teller
        self.seating, self.stats = games.seating, games.stats  # (read every act)
        # The play `plain_play` made last and the seat entry it found: `act`, handed that very
        # play next, does not look the seat up again.
        self._found: tuple[Play | None, tuple[LiveGame, list[int]] | None] = (None, None)

    def plain_play(self, c: Client, game_id: str, keys: list[bytes]) -> Play | None:
        """The play of a plain act or turn `c` sent (`Connection.plain`: its action maps'
        bytes `keys`), its actions found among its game's; None when the general reader is to
        read it (a seat not held here: a linked one is forwarded as its message; a map that
        is none of the game's actions: the general reader says what it is)."""
        entry = self.seating.seats(c, game_id)
        if entry is None:
            return None
        codes = entry[0].session.codes_of(keys)
        if codes is None:
            return None
        # (tuple.__new__: a NamedTuple's own constructor is Python code, and this runs every act)
        p = tuple.__new__(Play, (game_id, codes, None, None, False, None))
        self._found = (p, entry)
        return p

    def act(self, c: Client, p: Play, now: float) -> None:
        """A seat's act, turn or resignation, however it was read: the one way a play reaches
        its game (the session's `act` or `resign`), and what it did is written to the seats."""
        found, entry = self._found
        if found is p:
            self._found = (None, None)
        else:
            entry = self.seating.seats(c, p.game_id)
        if entry is None:
            link = self.seating.link(c, p.game_id)
            if link is not None and p.message is not None:  # a seat in a game hosted by another referee
                link.forward(p.message)
                return
            self._game_error(c, p, ErrorCode.UNKNOWN_GAME, f"no game {p.game_id!r} of yours is running")
            return
        game, seats = entry
        s = game.session
        if p.seat is not None:
            if p.seat - 1 not in seats:
                self._game_error(c, p, ErrorCode.WRONG_SEAT, f"you do not hold seat {p.seat} here")
                return
            seat = p.seat - 1
        elif len(seats) == 1:
            seat = seats[0]
        else:
            seat = s.to_move
        if game.ending:
            self._game_error(c, p, ErrorCode.UNKNOWN_GAME, "the game is over")
            return
        if p.resign:
            refused = s.resign(seat, now)
            if refused is not None and not c.closed:  # (the game over: the seat is told why)
                try:
                    c.out.append(c.writer.error(p.game_id, refused))
                    self.stats["messages_out"] += 1
                    refusal_logged(c, p.game_id, "error", refused)
                except LocalProtocolError as e:
                    c.not_sent(e)
                c.flush()
            self.games.after(game)
            return
        played = s.act(seat, p.actions, now, c.rtt_ms(), p.info)
        self.stats["actions"] += len(p.actions)
        self.teller.tell(game, seat, played)
        self.games.after(game)

    def _game_error(self, c: Client, p: Play, code: ErrorCode, text: str) -> None:
        self.stats["errors_sent"] += 1
        if p.resign:
            c.queue(Error(code=code.value, message=text, game_id=p.game_id))
        else:
            c.queue(Result(game_id=p.game_id, accepted=0, error=code.value, message=text))
        c.flush()

