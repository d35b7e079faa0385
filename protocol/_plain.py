"""Plain frames of the msgpack framing, read and written by their bytes: the referee's fast
path (server/net/plain.py), which changes no byte of what the general path sends.

Almost everything a bot sends in a game is an `act` or a `turn` in the one form msgpack
libraries write for a map built in the protocol's field order, each value in its smallest
form: `{"type", "v", "game_id", "action"}` (or `"actions"`). `read_plain` reads such a
frame from its bytes, without building a message: its game id and its action maps' bytes,
which the caller looks up among the game's packed action maps (`Game.code_of_msgpack`); a
frame whose every part matches is exactly the message the general reader would return
(it packs back to itself, so it holds no duplicate key). `Replies` writes one game's
replies to such a message (`result`, an action's `event`, a turn's `turn_events`,
`your_turn`) from templates, for connections of one protocol version:
byte for byte what `MsgpackCodec.encode_message` writes for the same messages
(tests/protocol/test_plain.py; the test suite's checked mode compares every frame the
referee writes this way).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import msgpack

from ._errors import ErrorCode, LocalProtocolError
from ._framing import MsgpackCodec
from ._messages import MAX_TURN_ACTIONS, PROTOCOL_VERSION, SUPPORTED_VERSIONS, Message
from ._packed import header

__all__ = ["read_plain", "Items", "Replies", "PlainPlay"]

PlainPlay = tuple[str, list[bytes], int]
"""What `read_plain` reads: (game id, each action map's msgpack bytes, where the frame ends)."""

_pack = msgpack.Packer(use_bin_type=True).pack  # (the templates' constants, made on import)


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


class Replies:
    """One game's replies to a plain act or turn, in the msgpack framing, from templates, for
    connections of protocol version `version` (`for_version` gives the game's others)."""

    __slots__ = ("_pack", "_results", "_result", "_events", "_event_frames", "_turn", "_times",
                 "_turn_events", "version", "_game_id", "_others")

    def __init__(self, game_id: str, version: int = PROTOCOL_VERSION) -> None:
        # Its own packer: a Packer is not to be shared by threads (sessions may run in several).
        self._pack = pack = msgpack.Packer(use_bin_type=True, buf_size=1024).pack  # (grows if need be)
        self.version = version
        self._game_id = game_id
        self._others: dict[int, Replies] = {version: self}
        gid = pack(game_id)
        self._result = _head("result", 4, pack, version) + gid + pack("accepted")
        self._results: dict[int, bytes] = {}
        # An event's fields: game_id, seat, kind, action (GameEvent's order).
        self._events = tuple(_head("event", 6, pack, version) + gid
                             + _fields("seat", seat, "kind", "action", pack=pack) + _ACTION
                             for seat in (1, 2))
        self._event_frames: tuple[dict[int, bytes], dict[int, bytes]] = ({}, {})  # per seat, by action code
        # turn_events' fields: game_id, seat, actions (TurnEvents' order).
        self._turn_events = tuple(_head("turn_events", 5, pack, version) + gid
                                  + _fields("seat", seat, pack=pack) + _ACTIONS for seat in (1, 2))
        # your_turn's: game_id, observation, time_left_ms, bank_ms[, legal][, groups].
        self._turn = tuple(_head("your_turn", n, pack, version) + gid + pack("observation")
                           for n in (6, 7, 8))
        self._times: tuple[int, int, bytes, bytes] = (-1, -1, b"", b"")  # the last time fields

    def for_version(self, version: int) -> Replies:
        """The game's replies for connections of `version` (made once)."""
        got = self._others.get(version)
        if got is None:
            got = self._others[version] = Replies(self._game_id, version)
            got._others = self._others
        return got

    def result(self, accepted: int) -> bytes:
        """`Result(game_id, accepted)` (no error)."""
        f = self._results.get(accepted)
        if f is None:
            f = self._results[accepted] = _frame(self._result + self._pack(accepted))
        return f

    def event(self, seat: int, action: bytes) -> bytes:
        """`GameEvent(game_id, seat, "action", action)`: `seat` 1 or 2, `action` the
        public action map's msgpack bytes."""
        return _frame(self._events[seat - 1] + action)

    def events(self, seat: int, codes: Sequence[int], action: Callable[[int], bytes]) -> list[bytes]:
        """`event(seat, action(code))` for each of `codes` (action codes of the game: each
        frame is made once per seat and code)."""
        frames = self._event_frames[seat - 1]
        out = []
        for code in codes:
            f = frames.get(code)
            if f is None:
                f = frames[code] = self.event(seat, action(code))
            out.append(f)
        return out

    def turn_events(self, seat: int, codes: Sequence[int], action: Callable[[int], bytes]) -> bytes:
        """`TurnEvents(game_id, seat, [action(code) for code in codes])`: `seat` 1 or 2,
        `action(code)` the public action map's msgpack bytes (1 to MAX_TURN_ACTIONS codes)."""
        return _frame(b"".join((self._turn_events[seat - 1], header(len(codes), 0x90, 0xDC),
                                *map(action, codes))))

    def your_turn(self, observation: bytes, time_left_ms: int, bank_ms: int, legal: bytes | None,
                  groups: Any) -> bytes:
        """`YourTurn(game_id, observation, time_left_ms, bank_ms, legal, groups)`: the
        observation and the legal list as msgpack bytes (`Packed`), `groups` as a value."""
        head, mid, tail = self.your_turn_parts(time_left_ms, bank_ms, legal is not None, groups)
        return _frame(b"".join((head, observation, mid, legal or b"", tail)))

    def your_turn_parts(self, time_left_ms: int, bank_ms: int, legal: bool,
                        groups: Any) -> tuple[bytes, bytes, bytes]:
        """The bytes of a `your_turn` frame's body around its observation and its legal
        list (if `legal`): before the observation, between it and the legal list, after
        that (`State.prompt_msgpack` writes the frame from them in one C call)."""
        times = self._times
        if times[0] != time_left_ms or times[1] != bank_ms:  # (the same every time without a clock)
            t = _fields("time_left_ms", time_left_ms, "bank_ms", bank_ms, pack=self._pack)
            times = self._times = (time_left_ms, bank_ms, t, t + _LEGAL)
        mid = times[3] if legal else times[2]
        if groups is None:
            return self._turn[legal], mid, b""
        return self._turn[legal + 1], mid, _GROUPS + self._pack(groups)

    def check(self, frames: list[bytes], messages: list[Message]) -> None:
        """The test suite's check of frames written here: each is the general encoding of
        the message it stands for (LocalProtocolError naming the first that is not)."""
        codec = MsgpackCodec()
        codec.version = self.version
        general = [codec.encode_message(m) for m in messages]
        if frames != general:
            n = min(len(frames), len(general))
            bad = next((i for i in range(n) if frames[i] != general[i]), n)
            raise LocalProtocolError(ErrorCode.BAD_ENCODING,
                                     f"the fast path's frame {bad} of {len(frames)} differs from the general "
                                     f"encoding ({len(general)} messages): {frames[bad:bad + 1]!r} against "
                                     f"{general[bad:bad + 1]!r}"[:1900])


_LEGAL = _pack("legal")
_GROUPS = _pack("groups")
