"""The fast path: a plain `act` or `turn` from its frame's bytes to its replies' bytes, for
the commonest input of a referee (issue 42).

A bot's message takes it when nothing about it is unusual: a msgpack frame holding exactly
an act or a turn (`Connection.plain`), of a game running with this connection in one of
its seats, every action map one of the game's packed maps (so its code is one dictionary
lookup). The session then plays the codes (`GameSession.play_codes`: the same work as
`submit`, without its messages), and when every action was applied and the game goes on,
the replies are written from the game's templates (`maag.protocol.Replies`, one set per
protocol version a seat's connection speaks): the mover's `result`, the other seat's
`event`s (a prefix per seat and each action's public map, packed once) or, for a seat that
asked to hear them once a turn, nothing until the turn passes to it and then its
`turn_events` (`GameSession.tell_codes` says which), the `your_turn` of the seat to move
(its observation and legal list written by the game's C). Everything else goes the general
way, in order: a message the fast path does not take, and all after it in the same input,
through `Connection.next_event` and
`RefereeServer.on_message`; the general messages of an illegal action, a late message or
the game's end (`Games.dispatch`), and every message to a seat that speaks JSON or cannot
be sent to now. What the seats receive, what is stored and what the watchers, the action
log, the timers and the host's hooks see is the general path's, byte for byte
(tests/server/test_fast_path.py); with the suite's message checks on, every frame written
here is compared with the general encoding of the message it stands for.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from maag.protocol import MAX_TURN_ACTIONS, ErrorCode, Replies, check_built_messages

if TYPE_CHECKING:
    from maag.server.net.games import LiveGame
    from maag.server.net.seating import Seating
    from maag.server.net.transport import Client, Host

__all__ = ["take"]

LOG = logging.getLogger("maag.server.net.server")


def take(seating: Seating[LiveGame], c: Client, data: bytes, now: float) -> int:
    """Play the plain acts and turns at the front of `data`, new input of `c` received at
    `now` (its seats: `seating`'s, handed in by server.py); how many bytes they took (the rest
    is the general reader's). -1: the peer went over the message rate (it is told; its
    connection ends)."""
    if LOG.isEnabledFor(logging.DEBUG):  # (the general path logs every message)
        return 0
    server = c.server
    conn = c.conn
    pos, n = 0, len(data)
    while pos < n and not c.closed:
        p = conn.plain(data, pos)
        if p is None:
            break
        gid, keys, end = p
        entry = seating.seats(c, gid)
        if entry is None or len(entry[1]) != 1 or entry[0].ending:
            break  # (a linked seat, both seats on one connection, a game ending: the general path)
        game = entry[0]
        codes = game.session.codes_of(keys)
        if codes is None:
            break
        pos = end
        if not c.rate.take(now):
            server.violation(c, ErrorCode.RATE_LIMITED,
                             f"more than {server.config.max_rate} messages per second")
            return -1
        server.stats["messages_in"] += 1
        _play(server, c, game, entry[1][0], codes, now)
        if c.cpu0:  # (what RefereeServer.on_message records for every act and turn)
            server.latencies_ms.append((time.monotonic() - now) * 1000)
            server.cpu_ms.append((time.thread_time() - c.cpu0) * 1000)
    return pos


def _play(server: Host, c: Client, game: LiveGame, seat: int, codes: list[int], now: float) -> None:
    """`Games.play` of the codes of `c`'s seat `seat`."""
    s = game.session
    outs = s.play_codes(seat, codes, now, c.rtt_ms())
    server.stats["actions"] += len(codes)
    if outs is None:
        if _reply(server, game, seat, codes) != seat:
            c.turn_passed()
    else:  # (an illegal action, a late message, the game's end)
        if s.finished or s.to_move != seat:
            c.turn_passed()
        server.rooms.dispatch(game, outs)
    server.rooms.after(game)


def _reply(server: Host, game: LiveGame, seat: int, codes: Sequence[int]) -> int:
    """Prompt the seat to move and tell the seats what `Games.dispatch` would of a plain
    success (see `play_codes`): the same frames, the same writes, hook calls and counts.
    Returns the seat prompted."""
    s = game.session
    me, other = game.clients[seat], game.clients[1 - seat]
    if me is not None and me.closed:  # (dispatch skips a seat that is gone)
        me = None
    if other is not None and other.closed:
        other = None
    if (me is not None and not me.conn.sends_plain()) or (other is not None and not other.conn.sends_plain()):
        prompted, values = s.prompt()
        live, held = s.tell_codes(seat, codes, prompted)
        server.rooms.dispatch(game, s.plain_messages(seat, codes, prompted, values, live, held))
        return prompted
    w = game.replies
    if w is None:
        w = game.replies = Replies(s.game_id)
    to = game.clients[s.to_move]  # (the seat prompted next: its connection's version)
    prompted, turn = s.prompt_frame(w if to is None else w.for_version(to.conn.version))
    live, held = s.tell_codes(seat, codes, prompted)
    req = game.request
    if req is not None and req.on_prompt is not None:  # (dispatch calls it for every your_turn)
        try:
            req.on_prompt(prompted)
        except Exception:
            LOG.exception("game %s: the host's turn hook failed", s.game_id)
    mine: list[bytes] = []
    theirs: list[bytes] = []
    if me is not None:
        mine.append(w.for_version(me.conn.version).result(len(codes)))
        if prompted == seat:
            mine.append(turn)
    if other is not None:
        wo = w.for_version(other.conn.version)
        if live:
            theirs = wo.events(seat + 1, live, s.public_msgpack)
        for i in range(0, len(held), MAX_TURN_ACTIONS):
            theirs.append(wo.turn_events(seat + 1, held[i:i + MAX_TURN_ACTIONS], s.public_msgpack))
        if prompted != seat:
            theirs.append(turn)
    if check_built_messages():  # (the test suite's checked mode)
        outs = s.plain_messages(seat, codes, prompted, s.your_turn_values(prompted), live, held)
        if me is not None:
            w.for_version(me.conn.version).check(mine, [o.msg for o in outs if o.seat == seat])
        if other is not None:
            w.for_version(other.conn.version).check(theirs, [o.msg for o in outs if o.seat != seat])
    server.stats["messages_out"] += len(mine) + len(theirs)
    # dispatch's writes: one per connection, in the order of their first message.
    if me is not None:
        me.out += mine
        me.flush()
    if other is not None:
        other.out += theirs
        other.flush()
    return prompted
