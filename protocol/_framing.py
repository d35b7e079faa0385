"""The greeting line and the two framings (length-prefixed msgpack, JSON lines) of the maag
wire protocol; see docs/protocol.md, "Greeting" and "Framing".

A codec cuts frames off the front of a receive buffer, decodes one frame into plain data
and encodes plain data (or a message's `wire_map`) into one frame. It knows nothing of
message types or states.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import msgpack

from ._errors import ErrorCode, LocalProtocolError, RemoteProtocolError
from ._messages import PROTOCOL_VERSION, SUPPORTED_VERSIONS
from ._packed import Packed, header

if TYPE_CHECKING:
    from ._messages import Message

ENCODINGS = ("msgpack", "json")
MAX_GREETING = 64  # bytes of the greeting line, its newline included


@dataclass(frozen=True, slots=True, kw_only=True)
class Greeting:
    """The client's first line, `MAAG <version> <encoding>`: it picks the framing."""

    encoding: str
    version: int = PROTOCOL_VERSION

    def __post_init__(self) -> None:
        if self.encoding not in ENCODINGS:
            raise LocalProtocolError(ErrorCode.BAD_GREETING,
                                     f"encoding must be one of {', '.join(ENCODINGS)}, not {self.encoding!r}",
                                     field="encoding")
        if isinstance(self.version, bool) or not isinstance(self.version, int) or self.version < 0:
            raise LocalProtocolError(ErrorCode.BAD_GREETING, "version must be a non-negative integer",
                                     field="version")

    def to_bytes(self) -> bytes:
        return f"MAAG {self.version} {self.encoding}\n".encode("ascii")


_PREFIX = b"MAAG "


def extract_greeting(buf: bytearray) -> Greeting | None:
    """Cut the greeting line off `buf`, or return None while it is incomplete. Raises
    RemoteProtocolError: bad_greeting, or unsupported_version for a version not among
    SUPPORTED_VERSIONS."""
    n = min(len(buf), len(_PREFIX))
    if bytes(buf[:n]) != _PREFIX[:n]:
        raise RemoteProtocolError(ErrorCode.BAD_GREETING,
                                  f"a connection must start with 'MAAG {PROTOCOL_VERSION} msgpack' or "
                                  f"'MAAG {PROTOCOL_VERSION} json' and a newline")
    end = buf.find(b"\n", 0, MAX_GREETING)
    if end < 0:
        if len(buf) >= MAX_GREETING:
            raise RemoteProtocolError(ErrorCode.BAD_GREETING,
                                      f"greeting line longer than {MAX_GREETING} bytes")
        return None
    line = bytes(buf[:end])
    del buf[:end + 1]
    try:
        parts = line.decode("ascii").split()
    except UnicodeDecodeError:
        raise RemoteProtocolError(ErrorCode.BAD_GREETING, "greeting is not ASCII") from None
    if len(parts) != 3 or parts[0] != "MAAG" or not parts[1].isdigit() or len(parts[1]) > 6:
        raise RemoteProtocolError(ErrorCode.BAD_GREETING, "greeting must be 'MAAG <version> <encoding>'")
    if parts[2] not in ENCODINGS:
        raise RemoteProtocolError(ErrorCode.BAD_GREETING,
                                  f"encoding must be one of {', '.join(ENCODINGS)}, not {parts[2][:20]!r}")
    if int(parts[1]) not in SUPPORTED_VERSIONS:
        raise RemoteProtocolError(ErrorCode.UNSUPPORTED_VERSION,
                                  f"this server speaks versions "
                                  f"{' and '.join(map(str, SUPPORTED_VERSIONS))}, not {parts[1]}")
    return Greeting(encoding=parts[2], version=int(parts[1]))


class Codec:
    """One framing. `extract` cuts one frame off `buf` (None: incomplete), `decode` turns a
    frame into plain data, `encode` plain data into a frame."""

    name: ClassVar[str]
    version: int = PROTOCOL_VERSION
    """The connection's protocol version: the `v` of every message it encodes."""

    def extract(self, buf: bytearray, max_frame: int) -> bytes | None:
        raise NotImplementedError

    def decode(self, frame: bytes) -> Any:
        raise NotImplementedError

    def encode(self, data: dict[str, Any]) -> bytes:
        raise NotImplementedError

    def encode_message(self, msg: Message) -> bytes:
        """`encode(msg.to_wire(packed=True))`, from the message's `wire_map` (no list copies)."""
        return self.encode(msg.wire_map(self.version)[0])

    def leftover_is_partial(self, buf: bytearray) -> bool:
        """At end of stream: does `buf` hold the start of a frame (not just padding)?"""
        return bool(buf)


class _DuplicateKey(Exception):
    def __init__(self, key: object) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
    """A map from its key-value pairs, refusing a key given twice: decoders keep the last
    one silently, so `{"token": A, "token": B}` would log in with B while a proxy or logger
    that reads the first one sees A."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[Any] = set()
        for k, _ in pairs:
            if k in seen:
                raise _DuplicateKey(k)
            seen.add(k)
    return out


def _duplicate(e: _DuplicateKey) -> RemoteProtocolError:
    return RemoteProtocolError(ErrorCode.BAD_FIELD, f"key {str(e.key)[:64]!r} appears twice in one map")


class MsgpackCodec(Codec):
    """Each frame: a 4-byte big-endian length, then that many bytes holding one msgpack map."""

    name = "msgpack"

    def __init__(self) -> None:
        # One packer per connection (msgpack.packb makes one per call); it starts afresh after
        # an error.
        self._pack = msgpack.Packer(use_bin_type=True).pack

    def extract(self, buf: bytearray, max_frame: int) -> bytes | None:
        if len(buf) < 4:
            return None
        n = int.from_bytes(buf[:4], "big")
        if n == 0:
            raise RemoteProtocolError(ErrorCode.BAD_FRAME, "a frame of length 0")
        if n > max_frame:
            raise RemoteProtocolError(ErrorCode.FRAME_TOO_LARGE,
                                      f"frame of {n} bytes; the limit is {max_frame}")
        if len(buf) < 4 + n:
            return None
        frame = bytes(buf[4:4 + n])
        del buf[:4 + n]
        return frame

    def decode(self, frame: bytes) -> Any:
        # The duplicate-key check calls Python for every map of the frame. A frame that packs
        # back to itself has none (a map that lost a key to a duplicate would pack shorter),
        # and the frames of msgpack libraries that write each value in its smallest form do:
        # for them one decode and one encode in C stand in for the check.
        try:
            data = msgpack.unpackb(frame, raw=False, strict_map_key=True, use_list=True)
            if self._pack(data) == frame:
                return data
        except Exception:  # (reported below, by the decoder with the check)
            pass
        try:
            return msgpack.unpackb(frame, raw=False, strict_map_key=True, use_list=True,
                                   object_pairs_hook=_unique_keys)
        except _DuplicateKey as e:
            raise _duplicate(e) from None
        except Exception as e:  # any failure of the decoder is the peer's bad encoding
            raise RemoteProtocolError(ErrorCode.BAD_ENCODING, f"not one valid msgpack object: {e}") from None

    def encode(self, data: dict[str, Any]) -> bytes:
        return self._frame(data, any(type(v) is Packed for v in data.values()))

    def encode_message(self, msg: Message) -> bytes:
        return self._frame(*msg.wire_map(self.version))

    def _frame(self, data: dict[str, Any], spliced: bool) -> bytes:
        try:
            body = _pack_spliced(data, self._pack) if spliced else self._pack(data)
        except (TypeError, ValueError, OverflowError) as e:
            raise LocalProtocolError(ErrorCode.BAD_ENCODING, f"not msgpack data: {e}") from None
        if len(body) >= 2**32:
            raise LocalProtocolError(ErrorCode.FRAME_TOO_LARGE,
                                     f"message of {len(body)} bytes cannot be framed")
        return len(body).to_bytes(4, "big") + body


def _pack_spliced(data: dict[str, Any], pack: Callable[[Any], bytes]) -> bytes:
    """msgpack.packb(data), its Packed values copied in as they are."""
    parts = [header(len(data), 0x80, 0xDE)]
    for k, v in data.items():
        kb = _KEYS.get(k)
        if kb is None:
            kb = _KEYS[k] = pack(k)  # the keys are the messages' field names: a few dozen
        parts.append(kb)
        parts.append(v.data if type(v) is Packed else pack(v))
    return b"".join(parts)


_KEYS: dict[str, bytes] = {}


def _plain(o: Any) -> Any:
    if type(o) is Packed:
        return o.value
    raise TypeError(f"Object of type {type(o).__name__} is not JSON serializable")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON data")


class JsonLinesCodec(Codec):
    """Each frame: one JSON object in UTF-8 on one line ending with LF (a CR before it is
    ignored). Blank lines are skipped."""

    name = "json"

    def __init__(self) -> None:
        self._scanned = 0  # bytes of the buffer already searched for a newline

    def extract(self, buf: bytearray, max_frame: int) -> bytes | None:
        while True:
            end = buf.find(b"\n", self._scanned)
            if end < 0:
                self._scanned = len(buf)
                if len(buf) > max_frame + 1:  # +1: a CR that will be dropped
                    raise RemoteProtocolError(ErrorCode.FRAME_TOO_LARGE,
                                              f"line over {max_frame} bytes without a newline")
                return None
            self._scanned = 0
            line = bytes(buf[:end])
            del buf[:end + 1]
            if line.endswith(b"\r"):
                line = line[:-1]
            if len(line) > max_frame:
                raise RemoteProtocolError(ErrorCode.FRAME_TOO_LARGE,
                                          f"line of {len(line)} bytes; the limit is {max_frame}")
            if line.strip(b" \t"):
                return line

    def decode(self, frame: bytes) -> Any:
        try:
            text = frame.decode("utf-8")
        except UnicodeDecodeError as e:
            raise RemoteProtocolError(ErrorCode.BAD_ENCODING,
                                      f"the line is not UTF-8 text (bad byte at {e.start})") from None
        try:
            return json.loads(text, parse_constant=_no_constant, object_pairs_hook=_unique_keys)
        except _DuplicateKey as e:
            raise _duplicate(e) from None
        except json.JSONDecodeError as e:
            # Said in the user's terms: where the line stops making sense, not the parser's
            # expectation ("Expecting ',' delimiter").
            if e.pos >= len(text.rstrip()):
                why = f"the line is not complete JSON (it ends at byte {len(frame.rstrip())})"
            else:
                why = f"the line is not valid JSON at byte {len(text[:e.pos].encode())}: {e.msg}"
            raise RemoteProtocolError(ErrorCode.BAD_ENCODING, why) from None
        except (ValueError, RecursionError) as e:  # NaN/Infinity, or nesting too deep
            raise RemoteProtocolError(ErrorCode.BAD_ENCODING, f"the line is not valid JSON: {e}") from None

    def encode(self, data: dict[str, Any]) -> bytes:
        try:
            text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False,
                              default=_plain)
        except (TypeError, ValueError) as e:
            raise LocalProtocolError(ErrorCode.BAD_ENCODING, f"not JSON data: {e}") from None
        return text.encode("utf-8") + b"\n"

    def leftover_is_partial(self, buf: bytearray) -> bool:
        return bool(bytes(buf).strip(b" \t\r"))


def make_codec(encoding: str, version: int = PROTOCOL_VERSION) -> Codec:
    codec = MsgpackCodec() if encoding == "msgpack" else JsonLinesCodec()
    codec.version = version
    return codec
