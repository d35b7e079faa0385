"""What a seat sends in a game and what it is told back, as the referee reads and writes
them: `Play`, the one kind of event every act, turn and resignation becomes, and `Writer`,
each connection's one writer of a game's replies (templates where they make it fast).

Almost everything a bot sends in a game is an `act` or a `turn` in the one form msgpack
libraries write for a map built in the protocol's field order, each value in its smallest
form: `{"type", "v", "game_id", "action"}` (or `"actions"`). `read_plain` reads such a
frame from its bytes, without building a message: its game id and its action maps' bytes,
which the caller looks up among the game's packed action maps (`Game.code_of_msgpack`); a
frame whose every part matches is exactly the message the general reader would return
(it packs back to itself, so it holds no duplicate key).

What a play did comes back from the game as data, a `Played` (applied, refused and why,
late, the turn passed, the game over), a game's end an `Ended`, a seat gone a `Notice`,
a game's start or a seat back an `Opening`; `Writer` writes each
seat's part of it (`result`, an action's `event`, a turn's `turn_events`, a `timeout`
event, `your_turn`, `game_start`, `game_over`, a resignation's `error`): on a welcomed
msgpack connection from templates, byte for byte what `MsgpackCodec.encode_message` writes
for the same messages (tests/protocol/test_plain.py; the test suite's checked mode compares
every frame written so), otherwise through `Connection.send`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import msgpack

from ._errors import ErrorCode
from ._framing import MsgpackCodec
from ._messages import (
    MAX_TURN_ACTIONS,
    PROTOCOL_VERSION,
    SUPPORTED_VERSIONS,
    Act,
    Error,
    GameEvent,
    GameOver,
    GameStart,
    Message,
    Resign,
    Result,
    Turn,
    TurnEvents,
    YourTurn,
)
from ._messages import check_built_messages as _checking
from ._packed import Packed, header
from ._state import ConnState

if TYPE_CHECKING:
    from ._connection import Connection

__all__ = ["read_plain", "Items", "Writer", "PlainPlay", "Play", "Played", "Refusal", "Ended", "Notice",
           "Opening", "ActionMaps",
           "Prompter"]

PlainPlay = tuple[str, list[bytes], int]
"""What `read_plain` reads: (game id, each action map's msgpack bytes, where the frame ends)."""

_pack = msgpack.Packer(use_bin_type=True).pack  # (the templates' constants, made on import)


class Play(NamedTuple):
    """What a seat sends in a game, as the referee hands it to the game whichever reader
    read it: an act or a turn (`actions`: action codes, as `Connection.plain`'s reader finds
    them among the game's, or the maps of a message the general reader read), or a
    resignation (`resign`). `message`: the message the general reader read (None for a
    plain frame): what a seat linked to a game hosted elsewhere forwards. A tuple: one is
    made for every act."""

    game_id: str
    actions: Sequence[Any]
    seat: int | None = None
    info: dict[str, Any] | None = None
    resign: bool = False
    message: Act | Turn | Resign | None = None

    @classmethod
    def of(cls, m: Act | Turn | Resign) -> Play:
        """The play of a message the general reader read."""
        if type(m) is Act:
            return cls(m.game_id, (m.action,), m.seat, m.info, False, m)
        if type(m) is Turn:
            return cls(m.game_id, m.actions, m.seat, m.info, False, m)
        return cls(m.game_id, (), m.seat, None, True, m)


class Refusal(NamedTuple):
    """Why a play's actions (all, or those after `Played.accepted`) were not applied: the
    `result`'s error code and its message."""

    code: ErrorCode
    detail: str


class Played(NamedTuple):
    """What a seat's play (an act or a turn) did, as data (`GameSession.act` returns it; a
    tuple, one per act): the mover's `result` (`accepted` actions applied, and `refused`,
    why the rest were not, if any); the other seat told of the applied actions one `event`
    each (`live`) or in `turn_events` (`held`, those held for it until now); if the message
    came too late (`late`: per seat 0 and 1, the actions held for it told before the
    `timeout` event both seats get about the mover); then seat `prompted` (-1: none) sent a
    `your_turn` with these times, its legal list if `legal` and `groups`, after the actions
    held for it (`released`). `over`: the game ended (its `game_over` is sent once stored).
    Every frame of it is written by the seats' connections' `Writer`s, in this order."""

    accepted: int
    live: Sequence[int]
    held: Sequence[int]
    prompted: int
    time_left_ms: int
    bank_ms: int
    legal: bool
    groups: Any
    released: Sequence[int]
    refused: Refusal | None
    late: tuple[Sequence[int], Sequence[int]] | None
    over: bool


class Ended(NamedTuple):
    """A game's end as both seats are told it, as data (`GameSession.game_over` returns
    it): the wire's `winner` (1 or 2; None for a draw or an aborted game), `reason` and
    `replay_id` (None if the replay is not stored), after the actions held for each seat
    (`held`, per seat 0 and 1: its `turn_events` first). Written by the seats'
    connections' `Writer`s (`turn_events`, then `game_over`)."""

    winner: int | None
    reason: str
    replay_id: str | None
    held: tuple[Sequence[int], Sequence[int]]


class Notice(NamedTuple):
    """An `event` of a kind that carries no action (`disconnect`), as data: about seat
    `seat` (0 or 1), told to seat `to` after the actions held for it (`held`: its
    `turn_events` first). Written by the seat's connection's `Writer` (`turn_events`, then
    `event`)."""

    to: int
    seat: int
    kind: str
    held: Sequence[int]


class Opening(NamedTuple):
    """A game told to seats anew, as data (`GameSession.begin`, its start, and `back`, a
    seat's reconnection): `game_start` to each of `seats` (0 or 1) with the game, its
    config, time control and the seats' `names`; then `notice` (a reconnection's event to
    the other seat), then seat `prompted` (-1: none) sent a `your_turn` with these times,
    its legal list if `legal` and `groups`, after the actions held for it (`released`).
    Written by the seats' connections' `Writer`s, in this order."""

    seats: tuple[int, ...]
    game: str
    config: dict[str, Any]
    time_control: dict[str, Any]
    names: tuple[str, str]
    notice: Notice | None
    prompted: int
    time_left_ms: int
    bank_ms: int
    legal: bool
    groups: Any
    released: Sequence[int]


def _fields(*pairs: Any, pack: Any = _pack) -> bytes:
    """Keys and values packed in order (the body of a map after its header)."""
    return b"".join(pack(p) for p in pairs)


def _head(kind: str, n: int, pack: Any = _pack, version: int = PROTOCOL_VERSION) -> bytes:
    """A message map of `n` entries up to its game_id's key: type, v, then "game_id"."""
    return header(n, 0x80, 0xDE) + _fields("type", kind, "v", version, "game_id", pack=pack)


_ACT = {v: _head("act", 4, version=v) for v in SUPPORTED_VERSIONS}
_TURN = {v: _head("turn", 4, version=v) for v in SUPPORTED_VERSIONS}
_ACTION = _pack("action")
_ACTIONS = _pack("actions")


def read_plain(data: bytes, pos: int, max_frame: int, items: Items,
               version: int = PROTOCOL_VERSION) -> PlainPlay | None:
    """The plain `act` or `turn` whose frame starts at `data[pos]`, whole in `data`: exactly
    the four fields type, v (`version`, the connection's), game_id (1 to 31 bytes of UTF-8) and action (or
    1 to MAX_TURN_ACTIONS actions), in that order, each in its smallest form. None for
    anything else (the general reader then reads it, and says what is wrong with it). The
    action maps' bytes are as they are in the frame, each one whole msgpack value: the
    caller takes the frame only if each is one the general reader would read as the same
    map (a game's packed action map, in its smallest form, has no duplicate key). `items`:
    the connection's reader of a turn's list (`Items`)."""
    body = pos + 4
    end = body + int.from_bytes(data[pos:body], "big")
    if end == body or end > len(data) or end - body > max_frame:
        return None
    act = _ACT[version]
    if data.startswith(act, body, end):
        turn = False
        at = body + len(act)
    else:
        head = _TURN[version]
        if not data.startswith(head, body, end):
            return None
        turn = True
        at = body + len(head)
    if at >= end:
        return None
    g = data[at] - 0xA0 + at + 1  # a fixstr of 1..31 bytes (ids are short)
    if not at + 1 < g <= at + 32:
        return None
    try:
        gid = data[at + 1:g].decode()
    except UnicodeDecodeError:
        return None
    if not turn:
        if not data.startswith(_ACTION, g, end):
            return None
        return gid, [data[g + len(_ACTION):end]], end
    if not data.startswith(_ACTIONS, g, end):
        return None
    keys = items.split(data[g + len(_ACTIONS):end])
    return None if keys is None else (gid, keys, end)


class Items:
    """Cuts a msgpack list into its items' bytes without decoding them (one msgpack
    Unpacker, kept: a connection's)."""

    __slots__ = ("_unpacker", "_limit")

    def __init__(self, max_frame: int) -> None:
        self._limit = max_frame
        self._unpacker: Any = None

    def split(self, data: bytes) -> list[bytes] | None:
        """The items of the list `data` holds exactly (1 to MAX_TURN_ACTIONS of them, each a
        whole msgpack value), or None."""
        u = self._unpacker
        if u is None:
            u = self._unpacker = msgpack.Unpacker(raw=False, read_size=min(4096, self._limit),
                                                  max_buffer_size=self._limit)
        base = u.tell()
        try:
            u.feed(data)
            n = u.read_array_header()
            out = []
            if 1 <= n <= MAX_TURN_ACTIONS:
                s = u.tell() - base
                for _ in range(n):
                    u.skip()
                    e = u.tell() - base
                    out.append(data[s:e])
                    s = e
                if s == len(data):
                    return out
        except Exception:  # (not a list of whole values: the general reader says what it is)
            pass
        self._unpacker = None  # (what it holds is not to be read on)
        return None


def _frame(body: bytes) -> bytes:
    return len(body).to_bytes(4, "big") + body


class ActionMaps(Protocol):
    """What a `Writer` reads of a game's actions: what the other seat sees of action `code`,
    as msgpack bytes (the templates') and as a map (the general encoder's)."""

    def public_msgpack(self, code: int) -> bytes: ...
    def public_map(self, code: int) -> dict[str, Any]: ...


class Prompter(Protocol):
    """What a `Writer` reads of a game's state for a `your_turn` (the engine's `State`): the
    seat's observation and the legal list as msgpack, or the whole frame in one call."""

    def observation_msgpack(self, seat: int) -> bytes: ...
    def legal_msgpack(self) -> bytes: ...
    def prompt_msgpack(self, seat: int, head: bytes, mid: bytes, tail: bytes, legal: bool) -> bytes: ...


class _Templates:
    """One game's frames' constant parts, for one connection's version."""

    __slots__ = ("result", "results", "events", "event_frames", "turn_events", "turn", "times")

    def __init__(self, game_id: str, version: int, pack: Callable[[Any], bytes]) -> None:
        gid = pack(game_id)
        self.result = _head("result", 4, pack, version) + gid + pack("accepted")
        self.results: dict[int, bytes] = {}
        # An event's fields: game_id, seat, kind, action (GameEvent's order).
        self.events = tuple(_head("event", 6, pack, version) + gid
                            + _fields("seat", seat, "kind", "action", pack=pack) + _ACTION for seat in (1, 2))
        self.event_frames: tuple[dict[int, bytes], dict[int, bytes]] = ({}, {})  # per seat, by action code
        # turn_events' fields: game_id, seat, actions (TurnEvents' order).
        self.turn_events = tuple(_head("turn_events", 5, pack, version) + gid
                                 + _fields("seat", seat, pack=pack) + _ACTIONS for seat in (1, 2))
        # your_turn's: game_id, observation, time_left_ms, bank_ms[, legal][, groups].
        self.turn = tuple(_head("your_turn", n, pack, version) + gid + pack("observation") for n in (6, 7, 8))
        self.times: tuple[int, int, bytes, bytes] = (-1, -1, b"", b"")  # the last time fields


_MAX_TEMPLATES = 256  # games whose templates a connection keeps (more: all are made again)


class Writer:
    """One connection's writer of what a game tells a seat after an act: `result`, an
    action's `event`s, `turn_events`, `your_turn`. While the connection is welcomed, speaks
    msgpack and has no error, each frame is written from templates (per game, made once),
    byte for byte what the general encoder writes for the same message (the test suite's
    checked mode, `check_built_messages`, compares every frame); otherwise the message is
    built and sent through the connection (`Connection.send`: the JSON lines framing, the
    state machine, its refusals). Every other message is sent through `Connection.send`."""

    __slots__ = ("_conn", "_pack", "_games")

    def __init__(self, conn: Connection) -> None:
        self._conn = conn
        # Its own packer: a Packer is not to be shared by threads (sessions may run in several).
        self._pack = msgpack.Packer(use_bin_type=True, buf_size=1024).pack  # (grows if need be)
        self._games: dict[str, _Templates] = {}

    def _templates(self, game_id: str) -> _Templates | None:
        """The game's templates, or None when the frames are to be written by the connection
        (`Connection.sends_plain`, written out: three times an act)."""
        c = self._conn
        if (c._state is not ConnState.READY or c.our_error is not None or c.their_error is not None
                or type(c._codec) is not MsgpackCodec):
            return None
        t = self._games.get(game_id)
        if t is None:
            if len(self._games) >= _MAX_TEMPLATES:
                self._games.clear()
            t = self._games[game_id] = _Templates(game_id, self._conn.version, self._pack)
        return t

    def result(self, game_id: str, accepted: int, refused: Refusal | None = None) -> bytes:
        """`Result(game_id, accepted)`, with the error and message of `refused` if any (a
        refusal is rare: built and sent through the connection)."""
        if refused is not None:
            return self._conn.send(Result.built(game_id=game_id, accepted=accepted, error=refused.code.value,
                                                message=refused.detail))
        t = self._templates(game_id)
        if t is None:
            return self._conn.send(Result.built(game_id=game_id, accepted=accepted))
        f = t.results.get(accepted)
        if f is None:
            f = t.results[accepted] = _frame(t.result + self._pack(accepted))
        if _checking():
            self._check(f, Result.built(game_id=game_id, accepted=accepted))
        return f

    def error(self, game_id: str, refused: Refusal) -> bytes:
        """`Error(code, message, game_id)` of a refusal that is no play's `result` (a
        resignation refused: rare, sent through the connection)."""
        return self._conn.send(Error.built(code=refused.code.value, message=refused.detail, game_id=game_id))

    def game_start(self, game_id: str, seat: int, o: Opening) -> bytes:
        """`GameStart(game_id, game, seat, config, time_control, opponent)` of `o` for `seat`
        (0 or 1; once a game or a reconnection: sent through the connection)."""
        return self._conn.send(GameStart.built(game_id=game_id, game=o.game, seat=seat + 1, config=o.config,
                                               time_control=o.time_control, opponent=o.names[1 - seat]))

    def game_over(self, game_id: str, e: Ended) -> bytes:
        """`GameOver(game_id, winner, reason, replay_id)` of `e` (once a game: sent through
        the connection; the actions held are `turn_events`' to write)."""
        return self._conn.send(GameOver.built(game_id=game_id, winner=e.winner, reason=e.reason,
                                              replay_id=e.replay_id))

    def event(self, game_id: str, seat: int, kind: str) -> bytes:
        """`GameEvent(game_id, seat, kind)` of a kind that carries no action (`timeout`: rare,
        sent through the connection)."""
        return self._conn.send(GameEvent.built(game_id=game_id, seat=seat, kind=kind, action=None))

    def events(self, game_id: str, seat: int, codes: Sequence[int], actions: ActionMaps) -> list[bytes]:
        """`GameEvent(game_id, seat, "action", actions.public_map(code))` for each of `codes`
        (`seat` 1 or 2; a frame is made once per game, seat and code)."""
        t = self._templates(game_id)
        if t is None:
            send = self._conn.send
            return [send(GameEvent.built(game_id=game_id, seat=seat, kind="action",
                                         action=actions.public_map(c))) for c in codes]
        frames, head = t.event_frames[seat - 1], t.events[seat - 1]
        out = []
        for code in codes:
            f = frames.get(code)
            if f is None:
                f = frames[code] = _frame(head + actions.public_msgpack(code))
            out.append(f)
        if _checking():
            for code, f in zip(codes, out, strict=True):
                self._check(f, GameEvent.built(game_id=game_id, seat=seat, kind="action",
                                               action=actions.public_map(code)))
        return out

    def turn_events(self, game_id: str, seat: int, codes: Sequence[int], actions: ActionMaps) -> list[bytes]:
        """`TurnEvents(game_id, seat, [...])` of `codes` (`seat` 1 or 2), MAX_TURN_ACTIONS
        actions a message (none for no codes)."""
        n = MAX_TURN_ACTIONS
        parts = [codes] if 0 < len(codes) <= n else [codes[i:i + n] for i in range(0, len(codes), n)]
        t = self._templates(game_id)
        if t is None:
            send = self._conn.send
            return [send(TurnEvents.built(game_id=game_id, seat=seat,
                                          actions=[actions.public_map(c) for c in p])) for p in parts]
        head, public = t.turn_events[seat - 1], actions.public_msgpack
        out = [_frame(b"".join((head, header(len(p), 0x90, 0xDC), *map(public, p)))) for p in parts]
        if _checking():
            for p, f in zip(parts, out, strict=True):
                self._check(f, TurnEvents.built(game_id=game_id, seat=seat,
                                                actions=[actions.public_map(c) for c in p]))
        return out

    def your_turn(self, game_id: str, state: Prompter, seat: int, time_left_ms: int, bank_ms: int,
                  legal: bool, groups: Any) -> bytes:
        """`YourTurn(game_id, observation, time_left_ms, bank_ms, legal, groups)` for `seat`
        (0 or 1, the state's), with the legal list if `legal`: the frame written by the
        game's C around the templates' parts (`Prompter.prompt_msgpack`)."""
        t = self._templates(game_id)
        if t is None:
            return self._conn.send(_your_turn(game_id, state, seat, time_left_ms, bank_ms, legal, groups))
        times = t.times
        if times[0] != time_left_ms or times[1] != bank_ms:  # (the same every time without a clock)
            f = _fields("time_left_ms", time_left_ms, "bank_ms", bank_ms, pack=self._pack)
            times = t.times = (time_left_ms, bank_ms, f, f + _LEGAL)
        mid = times[3] if legal else times[2]
        if groups is None:
            head, tail = t.turn[legal], b""
        else:
            head, tail = t.turn[legal + 1], _GROUPS + self._pack(groups)
        frame: bytes = state.prompt_msgpack(seat, head, mid, tail, legal)
        if _checking():
            self._check(frame, _your_turn(game_id, state, seat, time_left_ms, bank_ms, legal, groups))
        return frame

    def reply(self, game_id: str, accepted: int, refused: Refusal | None, state: Prompter, seat: int,
              time_left_ms: int, bank_ms: int, legal: bool, groups: Any) -> bytes:
        """`result` then `your_turn`, for a seat whose turn goes on after its play: the two
        frames in one piece (most plays: one template lookup, one piece to write)."""
        t = self._templates(game_id)
        if t is None or refused is not None:
            return (self.result(game_id, accepted, refused)
                    + self.your_turn(game_id, state, seat, time_left_ms, bank_ms, legal, groups))
        f = t.results.get(accepted)
        if f is None:
            f = t.results[accepted] = _frame(t.result + self._pack(accepted))
        times = t.times
        if times[0] != time_left_ms or times[1] != bank_ms:
            m = _fields("time_left_ms", time_left_ms, "bank_ms", bank_ms, pack=self._pack)
            times = t.times = (time_left_ms, bank_ms, m, m + _LEGAL)
        mid = times[3] if legal else times[2]
        if groups is None:
            frame: bytes = state.prompt_msgpack(seat, t.turn[legal], mid, b"", legal)
        else:
            frame = state.prompt_msgpack(seat, t.turn[legal + 1], mid, _GROUPS + self._pack(groups), legal)
        if _checking():
            self._check(f, Result.built(game_id=game_id, accepted=accepted))
            self._check(frame, _your_turn(game_id, state, seat, time_left_ms, bank_ms, legal, groups))
        return f + frame

    def _check(self, frame: bytes, message: Message) -> None:
        """The test suite's check of a frame written from templates: the general encoding of
        the message it stands for (AssertionError naming both if it is not: a bug here)."""
        codec = MsgpackCodec()
        codec.version = self._conn.version
        general = codec.encode_message(message)
        if frame != general:
            raise AssertionError(f"a template's frame differs from the general encoding: {frame!r} "
                                 f"against {general!r}"[:1900])


def _your_turn(game_id: str, state: Prompter, seat: int, time_left_ms: int, bank_ms: int, legal: bool,
               groups: Any) -> YourTurn:
    return YourTurn.built(game_id=game_id, observation=Packed(state.observation_msgpack(seat)),
                          time_left_ms=time_left_ms, bank_ms=bank_ms,
                          legal=Packed(state.legal_msgpack()) if legal else None, groups=groups)


_LEGAL = _pack("legal")
_GROUPS = _pack("groups")
