"""The sans-IO connection of the maag protocol: bytes in, events out, events in, bytes out.
No sockets, clocks or tasks: the caller moves the bytes (see docs/protocol.md)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from enum import Enum
from typing import Protocol

from ._errors import FATAL, ErrorCode, LocalProtocolError, ProtocolError, RemoteProtocolError
from ._framing import Codec, Greeting, JsonLinesCodec, MsgpackCodec, extract_greeting, make_codec
from ._messages import MESSAGE_TYPES, PROTOCOL_VERSION, SUPPORTED_VERSIONS, Error, Message, message_from_wire
from ._plain import Items, PlainPlay, Writer, read_plain
from ._state import TRANSITIONS, ConnState, Role

DEFAULT_MAX_FRAME = 1 << 20  # bytes of one frame (or JSON line) this side accepts


class Sentinel(Enum):
    NEED_DATA = "NEED_DATA"

    def __repr__(self) -> str:
        return self.value


NEED_DATA = Sentinel.NEED_DATA
"""Returned by `next_event` when no whole event is buffered: call `receive_data` first."""


@dataclass(frozen=True, slots=True)
class ConnectionClosed:
    """The peer closed its stream (after all buffered events). Sending it closes ours."""


Event = Greeting | Message | ConnectionClosed


def event_key(event: Event) -> str:
    """The key of `event` in the transition table."""
    if isinstance(event, Greeting):
        return "greeting"
    if isinstance(event, ConnectionClosed):
        return "eof"
    if isinstance(event, Error) and event.game_id is None and event.error_code in FATAL:
        return "fatal_error"
    return event.TYPE


def _by_class(sender: Role, state: ConnState, version: int) -> dict[type, ConnState]:
    """TRANSITIONS[sender][state] for the message classes of `version` whose key is always
    their TYPE (every message but `error`, whose key depends on its fields): looked up by
    the class of the message, the hot path's one dictionary access per message."""
    table = TRANSITIONS[sender][state]
    return {cls: table[cls.TYPE] for cls in MESSAGE_TYPES.values()
            if cls is not Error and cls.SENDER == sender.value and cls.TYPE in table and cls.SINCE <= version}


_BY_CLASS = {(sender, state, version): _by_class(sender, state, version)
             for sender in Role for state in ConnState for version in SUPPORTED_VERSIONS}


class Connection:
    """One side of one maag connection.

    role: Role.CLIENT (a bot) or Role.SERVER (the referee).
    max_frame: the largest frame or JSON line accepted from the peer, in bytes; a larger one
    is a RemoteProtocolError(frame_too_large), raised as soon as it is detected.

    The client starts by sending `Greeting(encoding="json" or "msgpack")` (its `version`,
    by default PROTOCOL_VERSION, is the connection's), then `Hello`; the server's first
    event is that Greeting, whose version (one of SUPPORTED_VERSIONS) it speaks from then
    on. After a ProtocolError the failing side is dead:
    after a RemoteProtocolError `next_event` raises again and `send` accepts only an `Error`
    (to report it); after a LocalProtocolError every `send` raises.
    """

    def __init__(self, role: Role, *, max_frame: int = DEFAULT_MAX_FRAME) -> None:
        if not isinstance(role, Role):
            raise TypeError("role must be Role.CLIENT or Role.SERVER")
        if max_frame < 64:
            raise ValueError("max_frame must be at least 64 bytes")
        self.role = role
        self._peer = role.peer
        self.max_frame = max_frame
        self.version = PROTOCOL_VERSION  # the greeting's, once it has passed: every message's `v`
        self.state = ConnState.GREETING
        self.encoding: str | None = None  # "msgpack" or "json", once the greeting has passed
        self.our_error: LocalProtocolError | None = None
        self.their_error: RemoteProtocolError | None = None
        self._codec: Codec | None = None
        self._buf = bytearray()
        self._eof = False
        self._closed_seen = False
        self._items: Items | None = None  # (plain's reader of a turn's actions)
        self._writer: Writer | None = None

    def __repr__(self) -> str:
        return f"<Connection {self.role.value} {self.state.value} {self.encoding or '-'}>"

    @property
    def state(self) -> ConnState:
        """Where the connection is in the protocol (TRANSITIONS)."""
        return self._state

    @state.setter
    def state(self, state: ConnState) -> None:
        if state is not getattr(self, "_state", None):  # (hashing an Enum runs Python code)
            self._state = state
            self._sends = _BY_CLASS[self.role, state, self.version]
            self._receives = _BY_CLASS[self._peer, state, self.version]

    # -- receiving -------------------------------------------------------------------------
    def receive_data(self, data: bytes) -> None:
        """Add bytes from the peer; b"" means the peer closed its stream."""
        if self._eof:
            if data:
                raise RuntimeError("receive_data after end of stream")
            return
        if data:
            self._buf += data
        else:
            self._eof = True

    def next_event(self) -> Event | Sentinel:
        """The next event from the peer: a Greeting (server only), a Message,
        ConnectionClosed (repeated on every later call), or NEED_DATA.

        Raises RemoteProtocolError when the peer broke the protocol; any other exception
        is a bug in this module."""
        if self.their_error is not None:
            e = self.their_error
            raise RemoteProtocolError(e.code, f"the peer already failed: {e.message}", field=e.field)
        try:
            return self._next_event()
        except RemoteProtocolError as e:
            self.their_error = e
            raise

    def _next_event(self) -> Event | Sentinel:
        if self._closed_seen:
            return ConnectionClosed()
        event: Event | None = None
        if self._codec is None:
            if self.role is Role.SERVER:
                event = extract_greeting(self._buf) if self._buf else None
            elif self._buf:
                raise RemoteProtocolError(ErrorCode.UNEXPECTED_MESSAGE,
                                          "the server spoke before the greeting")
        else:
            frame = self._codec.extract(self._buf, self.max_frame)
            if frame is not None:
                event = message_from_wire(self._codec.decode(frame), self.version)
                nxt = self._receives.get(type(event))
                if nxt is not None:  # the common case: a message expected in this state
                    if nxt is not self._state:
                        self.state = nxt
                    return event
                if event.SENDER != self._peer.value:
                    raise RemoteProtocolError(ErrorCode.UNEXPECTED_MESSAGE,
                                              f"{event.TYPE} is a {event.SENDER} message")
        if event is None:
            if not self._eof:
                return NEED_DATA
            if self._buf and (self._codec is None or self._codec.leftover_is_partial(self._buf)):
                raise RemoteProtocolError(ErrorCode.TRUNCATED_FRAME,
                                          f"stream ended inside a frame ({len(self._buf)} bytes)")
            event = ConnectionClosed()
            self._closed_seen = True
        self.state = self._transition(self._peer, event, RemoteProtocolError)
        if isinstance(event, Greeting):
            self._set_encoding(event.encoding, event.version)
        return event

    def plain(self, data: bytes, pos: int = 0) -> PlainPlay | None:
        """The server's reader of its commonest input by its bytes: when this connection is welcomed,
        speaks msgpack, has nothing buffered and no error, the plain `act` or `turn` whose
        whole frame starts at `data[pos]` (`read_plain`: what `next_event` would return for
        it, once its action maps are found among the game's). The state does not change (an
        act or a turn keeps a welcomed connection welcomed). None for anything else: feed
        `data[pos:]` to `receive_data` and read it with `next_event`."""
        if (self._state is not ConnState.READY or self._buf or self._eof or self.their_error is not None
                or self.our_error is not None or type(self._codec) is not MsgpackCodec):
            return None
        items = self._items
        if items is None:
            items = self._items = Items(self.max_frame)
        return read_plain(data, pos, self.max_frame, items, self.version)

    def sends_plain(self) -> bool:
        """Whether `send` of a `result`, `event`, `turn_events` or `your_turn` would return
        what `writer`'s templates write (and change no state): welcomed, msgpack, no error."""
        return (self._state is ConnState.READY and self.our_error is None and self.their_error is None
                and type(self._codec) is MsgpackCodec)

    @property
    def writer(self) -> Writer:
        """This connection's writer of a game's replies to a play (`Writer`, made once)."""
        w = self._writer
        if w is None:
            w = self._writer = Writer(self)
        return w

    def events(self, data: bytes | None = None) -> Iterator[Event]:
        """Feed `data` if given (b"" for the end of the stream), then yield every whole event
        buffered: up to NEED_DATA, or up to ConnectionClosed, which is yielded last. The one
        way every reader of this protocol takes events from its bytes (see `read_events`).
        Raises what `next_event` raises, after the events before the error."""
        if data is not None:
            self.receive_data(data)
        while True:
            ev = self.next_event()
            if ev is NEED_DATA:
                return
            yield ev
            if isinstance(ev, ConnectionClosed):
                return

    # -- sending ---------------------------------------------------------------------------
    def send(self, event: Event) -> bytes:
        """The bytes that carry `event` to the peer (b"" for ConnectionClosed, which only
        records that this side closed). Raises LocalProtocolError if this side may not send
        it now."""
        if self.our_error is not None:
            raise LocalProtocolError(self.our_error.code,
                                     f"this side already failed: {self.our_error.message}")
        try:
            nxt = self._sends.get(type(event))
            if nxt is not None and self.their_error is None and self._codec is not None:
                # The common case (a message this side may send now, framing chosen): what
                # _send does, without its tests of the cases that cannot apply.
                data = self._codec.encode_message(event)  # type: ignore[arg-type]
                if nxt is not self._state:
                    self.state = nxt
                return data
            return self._send(event)
        except LocalProtocolError as e:
            self.our_error = e
            raise

    def _send(self, event: Event) -> bytes:
        if self.their_error is not None and not isinstance(event, Error):
            raise LocalProtocolError(ErrorCode.UNEXPECTED_MESSAGE,
                                     "the peer broke the protocol: only an error may be sent now")
        if isinstance(event, Greeting):
            if self.role is not Role.CLIENT:
                raise LocalProtocolError(ErrorCode.UNEXPECTED_MESSAGE, "only the client sends the greeting")
            if event.version not in SUPPORTED_VERSIONS:
                raise LocalProtocolError(ErrorCode.UNSUPPORTED_VERSION,
                                         f"this side speaks versions {SUPPORTED_VERSIONS}, "
                                         f"not {event.version}")
            self.state = self._transition(self.role, event, LocalProtocolError)
            self._set_encoding(event.encoding, event.version)
            return event.to_bytes()
        if isinstance(event, ConnectionClosed):
            self.state = self._transition(self.role, event, LocalProtocolError)
            return b""
        if not isinstance(event, Message):
            raise TypeError(f"cannot send {event!r}")
        if event.SENDER != self.role.value:
            raise LocalProtocolError(ErrorCode.UNEXPECTED_MESSAGE,
                                     f"{event.TYPE} is a {event.SENDER} message")
        if event.SINCE > self.version:
            raise LocalProtocolError(ErrorCode.UNEXPECTED_MESSAGE,
                                     f"{event.TYPE} is a message of version {event.SINCE}; this connection "
                                     f"speaks version {self.version}")
        new_state = self._transition(self.role, event, LocalProtocolError)
        # Before the greeting (refusing a bad one) the server answers in JSON lines.
        data = (self._codec or JsonLinesCodec()).encode_message(event)
        self.state = new_state
        return data

    # -- internals -------------------------------------------------------------------------
    def _transition(self, sender: Role, event: Event, exc: type[ProtocolError]) -> ConnState:
        key = event_key(event)
        try:
            return TRANSITIONS[sender][self.state][key]
        except KeyError:
            raise exc(ErrorCode.UNEXPECTED_MESSAGE,
                      f"{sender.value} may not send {key} in state {self.state.value}") from None

    def _set_encoding(self, encoding: str, version: int) -> None:
        self.encoding = encoding
        self.version = version
        self._codec = make_codec(encoding, version)
        self._sends = _BY_CLASS[self.role, self._state, version]
        self._receives = _BY_CLASS[self._peer, self._state, version]


class Reader(Protocol):
    """Anything with asyncio.StreamReader's `read`."""

    async def read(self, n: int = -1) -> bytes: ...


async def read_events(reader: Reader, conn: Connection, size: int = 65536) -> AsyncIterator[Event]:
    """The client read loop of the protocol: read `reader` and yield `conn`'s events as they
    come, ending after ConnectionClosed (the peer's EOF). Used by every asyncio client of
    maag that reads a stream (the minibot, the web view's seat); the caller writes
    (`conn.send`) and decides what each event means. Raises what `next_event` raises."""
    while True:
        data = await reader.read(size)
        for ev in conn.events(data):
            yield ev
            if isinstance(ev, ConnectionClosed):
                return
        if not data:  # (not reached: the end of the stream always gives ConnectionClosed)
            return
