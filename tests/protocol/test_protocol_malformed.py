"""Every malformed input a server can receive yields a RemoteProtocolError with the
documented wire code (docs/protocol.md, "Errors"), and the failing side stays dead."""

from __future__ import annotations

import json
from typing import Any

import msgpack
import pytest
from maag.protocol import (
    NEED_DATA,
    PROTOCOL_VERSION,
    Act,
    Connection,
    ConnState,
    Error,
    ErrorCode,
    GameOver,
    Greeting,
    Hello,
    LocalProtocolError,
    Ping,
    RemoteProtocolError,
    Role,
    Turn,
    Welcome,
    YourTurn,
)
from proto_helpers import Wire, drain

E = ErrorCode
V = PROTOCOL_VERSION  # (what a connection greeted with it speaks; version 1's: test_versions.py)
HELLO = {"type": "hello", "v": V, "name": "bot", "token": "t", "games": ["heroes"]}


def frame(encoding: str, obj: Any) -> bytes:
    if encoding == "json":
        return json.dumps(obj).encode() + b"\n"
    body = msgpack.packb(obj, use_bin_type=True)
    return len(body).to_bytes(4, "big") + body


def server_error(data: bytes, *, eof: bool = False, max_frame: int = 4096) -> RemoteProtocolError:
    """Feed `data` to a fresh server Connection and return the error it must raise."""
    conn = Connection(Role.SERVER, max_frame=max_frame)
    conn.receive_data(data)
    if eof:
        conn.receive_data(b"")
    with pytest.raises(RemoteProtocolError) as info:
        drain(conn)
    # The side is dead: asking again raises again, with the same code.
    with pytest.raises(RemoteProtocolError) as again:
        conn.next_event()
    assert again.value.code is info.value.code
    return info.value


# ---- greeting -------------------------------------------------------------------------------

@pytest.mark.parametrize("data, code", [
    (b"\x00\x01garbage", E.BAD_GREETING),
    (b"GET / HTTP/1.1\r\n", E.BAD_GREETING),
    (b"MAAG 1 xml\n", E.BAD_GREETING),
    (b"MAAG one json\n", E.BAD_GREETING),
    (b"MAAG 1 json extra\n", E.BAD_GREETING),
    (b"MAAG " + b"1" * 100, E.BAD_GREETING),
    (b"MAAG 1 json\xff\n", E.BAD_GREETING),
    (b"MAAG 0 json\n", E.UNSUPPORTED_VERSION),
    (b"MAAG 3 json\n", E.UNSUPPORTED_VERSION),
    (b'{"type":"hello"}\n', E.BAD_GREETING),
])
def test_bad_greetings(data: bytes, code: ErrorCode) -> None:
    assert server_error(data).code is code


def test_greeting_cut_by_eof_is_truncated() -> None:
    assert server_error(b"MAAG 1 js", eof=True).code is E.TRUNCATED_FRAME


def test_eof_before_anything_is_a_clean_close() -> None:
    conn = Connection(Role.SERVER)
    conn.receive_data(b"")
    assert drain(conn)[-1].__class__.__name__ == "ConnectionClosed"


# ---- framing and encoding -------------------------------------------------------------------

J = f"MAAG {V} json\n".encode()
M = f"MAAG {V} msgpack\n".encode()


@pytest.mark.parametrize("data, code", [
    (J + b"not json at all\n", E.BAD_ENCODING),
    (J + b"[1, 2, 3]\n", E.BAD_ENCODING),
    (J + b'"hello"\n', E.BAD_ENCODING),
    (J + b'{"type": "hello", "v": V,}\n', E.BAD_ENCODING),
    (J + b'{"type": "ping", "v": NaN}\n', E.BAD_ENCODING),
    (J + b'{"type": "ping", "v": V, "id": "\xff\xfe"}\n', E.BAD_ENCODING),
    (J + b'{"type": "ping", "v": V} {"type": "ping", "v": V}\n', E.BAD_ENCODING),
    (J + b"[" * 100000 + b"]" * 100000 + b"\n", E.FRAME_TOO_LARGE),
    (J + b"x" * 5000, E.FRAME_TOO_LARGE),
    (J + b"x" * 5000 + b"\n", E.FRAME_TOO_LARGE),
    (M + b"\x00\x00\x00\x00", E.BAD_FRAME),
    (M + b"\x00\x00\x10\x01", E.FRAME_TOO_LARGE),
    (M + b"\xff\xff\xff\xff", E.FRAME_TOO_LARGE),
    (M + b"\x00\x00\x00\x01\xc1", E.BAD_ENCODING),  # 0xc1 is never used in msgpack
    (M + b"\x00\x00\x00\x03\x93\x01\x02", E.BAD_ENCODING),  # array of 3 with 2 items
    (M + b"\x00\x00\x00\x02\x01\x02", E.BAD_ENCODING),  # two objects in one frame
    (M + b"\x00\x00\x00\x01\x07", E.BAD_ENCODING),  # an integer, not a map
    (M + b"\x00\x00\x00\x03\x81\x01\x02", E.BAD_ENCODING),  # map with an integer key
    (M + b"\x00\x00\x00\x03\xa2\xff\xfe", E.BAD_ENCODING),  # invalid UTF-8 string
])
def test_bad_frames(data: bytes, code: ErrorCode) -> None:
    assert server_error(data).code is code


def test_deep_json_nesting_is_bad_encoding_not_a_crash() -> None:
    deep = b"[" * 3000 + b"]" * 3000
    assert server_error(J + deep + b"\n", max_frame=10000).code is E.BAD_ENCODING


@pytest.mark.parametrize("data", [
    J + b'{"type": "hello", "v"',
    M + b"\x00\x00\x00\x10\x81",
    M + b"\x00\x00",
])
def test_truncated_frames(data: bytes) -> None:
    assert server_error(data, eof=True).code is E.TRUNCATED_FRAME


def test_trailing_blank_line_at_eof_is_not_truncation() -> None:
    conn = Connection(Role.SERVER)
    conn.receive_data(J + frame("json", HELLO) + b"\r\n  ")
    conn.receive_data(b"")
    assert [type(e).__name__ for e in drain(conn)] == ["Greeting", "Hello", "ConnectionClosed"]


def test_oversized_msgpack_frame_is_refused_before_its_body_arrives() -> None:
    conn = Connection(Role.SERVER, max_frame=100)
    conn.receive_data(M + (101).to_bytes(4, "big"))
    with pytest.raises(RemoteProtocolError) as info:
        drain(conn)
    assert info.value.code is E.FRAME_TOO_LARGE


# ---- schema ---------------------------------------------------------------------------------

def with_(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    d = dict(base)
    for k, v in changes.items():
        if v is ...:
            d.pop(k, None)
        else:
            d[k] = v
    return d


ACT = {"type": "act", "v": V, "game_id": "g1", "action": {"type": "end_turn"}}
TURN = {"type": "turn", "v": V, "game_id": "g1", "actions": [{"type": "end_turn"}]}

SCHEMA_CASES: list[tuple[str, dict[str, Any], ErrorCode, str | None]] = [
    ("no type", with_(ACT, type=...), E.MISSING_FIELD, "type"),
    ("unknown type", with_(ACT, type="teleport"), E.UNKNOWN_TYPE, "type"),
    ("type not a string", with_(ACT, type=3), E.UNKNOWN_TYPE, "type"),
    ("no version", with_(ACT, v=...), E.MISSING_FIELD, "v"),
    ("version as text", with_(ACT, v="1"), E.BAD_FIELD, "v"),
    ("other version", with_(ACT, v=3), E.UNSUPPORTED_VERSION, "v"),
    ("no game_id", with_(ACT, game_id=...), E.MISSING_FIELD, "game_id"),
    ("game_id a number", with_(ACT, game_id=5), E.BAD_FIELD, "game_id"),
    ("game_id empty", with_(ACT, game_id=""), E.BAD_FIELD, "game_id"),
    ("game_id too long", with_(ACT, game_id="g" * 65), E.BAD_FIELD, "game_id"),
    ("no action", with_(ACT, action=...), E.MISSING_FIELD, "action"),
    ("action a list", with_(ACT, action=["end_turn"]), E.BAD_FIELD, "action"),
    ("action without type", with_(ACT, action={"from": [1, 2]}), E.BAD_FIELD, "action"),
    ("seat 3", with_(ACT, seat=3), E.BAD_FIELD, "seat"),
    ("seat true", with_(ACT, seat=True), E.BAD_FIELD, "seat"),
    ("unknown field", with_(ACT, colour="red"), E.BAD_FIELD, "colour"),
    ("turn without actions", with_(TURN, actions=[]), E.BAD_FIELD, "actions"),
    ("turn actions a map", with_(TURN, actions={"type": "end_turn"}), E.BAD_FIELD, "actions"),
    ("turn action not a map", with_(TURN, actions=[{"type": "end_turn"}, 4]), E.BAD_FIELD, "actions"),
    ("turn too long", with_(TURN, actions=[{"type": "end_turn"}] * 1001), E.BAD_FIELD, "actions"),
    ("ping id a list", {"type": "ping", "v": V, "id": [1]}, E.BAD_FIELD, "id"),
    ("resign without game", {"type": "resign", "v": V}, E.MISSING_FIELD, "game_id"),
]
HELLO_CASES: list[tuple[str, dict[str, Any], ErrorCode, str | None]] = [
    ("hello without token", with_(HELLO, token=...), E.MISSING_FIELD, "token"),
    ("hello games a string", with_(HELLO, games="heroes"), E.BAD_FIELD, "games"),
    ("hello games empty", with_(HELLO, games=[]), E.BAD_FIELD, "games"),
    ("hello games of numbers", with_(HELLO, games=[1]), E.BAD_FIELD, "games"),
    ("hello concurrency 0", with_(HELLO, concurrency=0), E.BAD_FIELD, "concurrency"),
    ("hello concurrency a fraction", with_(HELLO, concurrency=2.5), E.BAD_FIELD, "concurrency"),
    ("hello want_legal 1", with_(HELLO, want_legal=1), E.BAD_FIELD, "want_legal"),
    ("hello want_groups a string", with_(HELLO, want_groups="yes"), E.BAD_FIELD, "want_groups"),
    ("hello name null", with_(HELLO, name=None), E.BAD_FIELD, "name"),
    ("hello name too long", with_(HELLO, name="n" * 65), E.BAD_FIELD, "name"),
]


@pytest.mark.parametrize("encoding", ["json", "msgpack"])
@pytest.mark.parametrize("case, msg, code, field", HELLO_CASES, ids=[c[0] for c in HELLO_CASES])
def test_bad_hello(encoding: str, case: str, msg: dict[str, Any], code: ErrorCode, field: str) -> None:
    greeting = Greeting(encoding=encoding).to_bytes()
    err = server_error(greeting + frame(encoding, msg))
    assert (err.code, err.field) == (code, field)


@pytest.mark.parametrize("encoding", ["json", "msgpack"])
@pytest.mark.parametrize("case, msg, code, field", SCHEMA_CASES, ids=[c[0] for c in SCHEMA_CASES])
def test_bad_messages(encoding: str, case: str, msg: dict[str, Any], code: ErrorCode, field: str) -> None:
    w = Wire(encoding, max_frame=1 << 16)
    w.open()
    w.server.receive_data(frame(encoding, msg))
    with pytest.raises(RemoteProtocolError) as info:
        drain(w.server)
    assert (info.value.code, info.value.field) == (code, field)
    assert field in str(info.value)


def test_msgpack_binary_where_text_belongs_is_bad_field() -> None:
    err = server_error(M + frame("msgpack", with_(HELLO, name=b"bot")))
    assert (err.code, err.field) == (E.BAD_FIELD, "name")


def test_msgpack_binary_inside_an_action_is_bad_field() -> None:
    w = Wire("msgpack")
    w.open()
    w.server.receive_data(frame("msgpack", with_(ACT, action={"type": "deploy", "card": b"knight"})))
    with pytest.raises(RemoteProtocolError) as info:
        drain(w.server)
    assert (info.value.code, info.value.field) == (E.BAD_FIELD, "action")


# ---- state ----------------------------------------------------------------------------------

@pytest.mark.parametrize("encoding", ["json", "msgpack"])
def test_act_before_hello_is_unexpected(encoding: str) -> None:
    err = server_error(Greeting(encoding=encoding).to_bytes() + frame(encoding, ACT))
    assert err.code is E.UNEXPECTED_MESSAGE


@pytest.mark.parametrize("msg", [HELLO, {"type": "welcome", "v": V, "bot": "b", "server": "s",
                                         "max_frame": 100}])
def test_second_hello_or_a_server_message_from_the_client_is_unexpected(msg: dict[str, Any]) -> None:
    w = Wire("json")
    w.open()
    w.server.receive_data(frame("json", msg))
    with pytest.raises(RemoteProtocolError) as info:
        drain(w.server)
    assert info.value.code is E.UNEXPECTED_MESSAGE


def test_client_may_not_send_before_welcome() -> None:
    conn = Connection(Role.CLIENT)
    conn.send(Greeting(encoding="json"))
    conn.send(Hello(name="b", token="t", games=["heroes"]))
    with pytest.raises(LocalProtocolError) as info:
        conn.send(Ping())
    assert info.value.code is E.UNEXPECTED_MESSAGE
    with pytest.raises(LocalProtocolError):  # dead after a local error
        conn.send(Act(game_id="g", action={"type": "end_turn"}))


def test_a_client_hearing_the_server_before_its_greeting_fails_remotely() -> None:
    conn = Connection(Role.CLIENT)
    conn.receive_data(b"hello?\n")
    with pytest.raises(RemoteProtocolError) as info:
        conn.next_event()
    assert info.value.code is E.UNEXPECTED_MESSAGE


def test_client_rejects_a_malformed_server_message() -> None:
    w = Wire("json")
    w.open()
    w.client.receive_data(b'{"type": "your_turn", "v": %d, "game_id": "g1", "observation": {}}\n' % V)
    with pytest.raises(RemoteProtocolError) as info:
        drain(w.client)
    assert (info.value.code, info.value.field) == (E.MISSING_FIELD, "time_left_ms")


def test_after_a_remote_error_only_an_error_may_be_sent() -> None:
    w = Wire("json")
    w.open()
    w.server.receive_data(b"{oops}\n")
    with pytest.raises(RemoteProtocolError):
        w.server.next_event()
    with pytest.raises(LocalProtocolError):
        w.server.send(Welcome(bot="b", server="s", max_frame=1000))
    w2 = Wire("json")
    w2.open()
    w2.server.receive_data(b"{oops}\n")
    with pytest.raises(RemoteProtocolError):
        w2.server.next_event()
    data = w2.server.send(Error(code=E.BAD_ENCODING, message="oops"))
    assert json.loads(data)["code"] == "bad_encoding"


def test_role_confusion_is_local() -> None:
    server = Connection(Role.SERVER)
    with pytest.raises(LocalProtocolError):
        server.send(Greeting(encoding="json"))
    client = Connection(Role.CLIENT)
    client.send(Greeting(encoding="json"))
    with pytest.raises(LocalProtocolError):
        client.send(GameOver(game_id="g", winner=1, reason="rules"))


def test_need_data_until_a_frame_is_whole() -> None:
    conn = Connection(Role.SERVER)
    data = J + frame("json", HELLO)
    for b in data[:-1]:
        conn.receive_data(bytes([b]))
        ev = conn.next_event()
        assert ev is NEED_DATA or isinstance(ev, Greeting)
    conn.receive_data(data[-1:])
    assert conn.next_event() == Hello(name="bot", token="t", games=["heroes"])
    assert conn.state is ConnState.AUTH


# ---- construction ---------------------------------------------------------------------------

@pytest.mark.parametrize("build, field", [
    (lambda: Hello(name="", token="t", games=["heroes"]), "name"),
    (lambda: Act(game_id="g", action={"type": "x", "v": float("nan")}), "action"),
    (lambda: Turn(game_id="g", actions=[]), "actions"),
    (lambda: YourTurn(game_id="g", observation={"a": {1: 2}}, time_left_ms=1), "observation"),
    (lambda: YourTurn(game_id="g", observation={}, time_left_ms=-1), "time_left_ms"),
    (lambda: YourTurn(game_id="g", observation={}, time_left_ms=1, groups={"options": []}), "groups"),
    (lambda: YourTurn(game_id="g", observation={}, time_left_ms=1, groups=[{"territory": "B1"}]), "groups"),
    (lambda: YourTurn(game_id="g", observation={}, time_left_ms=1, groups=[{"options": [{"units": [1]}]}]),
     "groups"),
    (lambda: YourTurn(game_id="g", observation={}, time_left_ms=1,
                      groups=[{"options": [{"actions": [{"unit": 1}]}]}]), "groups"),
    (lambda: GameOver(game_id="g", winner=0, reason="rules"), "winner"),
    (lambda: Ping(id=1.5), "id"),
    (lambda: Greeting(encoding="xml"), "encoding"),
])
def test_invalid_messages_cannot_be_built(build: Any, field: str) -> None:
    with pytest.raises(LocalProtocolError) as info:
        build()
    assert info.value.field == field


def test_messages_are_frozen_and_keyword_only() -> None:
    p = Ping(id=1)
    with pytest.raises(AttributeError):
        p.id = 2  # type: ignore[misc]
    with pytest.raises(TypeError):
        Ping(1)  # type: ignore[misc]


def test_json_line_errors_are_said_in_the_users_terms() -> None:
    from maag.protocol import RemoteProtocolError
    from maag.protocol._framing import JsonLinesCodec

    codec = JsonLinesCodec()
    cases = [
        (b'{"type": "hello", "name": "x"', "the line is not complete JSON (it ends at byte 29)"),
        (b'{"type": "hello" "name": 1}', "the line is not valid JSON at byte 17"),
        (b"\xff\xfe", "the line is not UTF-8 text (bad byte at 0)"),
    ]
    for frame, said in cases:
        try:
            codec.decode(frame)
        except RemoteProtocolError as e:
            assert e.code.value == "bad_encoding" and said in e.message, e.message
        else:
            raise AssertionError(f"{frame!r} was accepted")


@pytest.mark.parametrize("encoding", ["json", "msgpack"])
def test_an_integer_written_as_a_whole_number_is_an_integer(encoding: str) -> None:
    # JSON Schema's reading of "integer" (a bot whose JSON library has only doubles sends 2.0)
    w = Wire(encoding, max_frame=1 << 16)
    w.open()
    w.server.receive_data(frame(encoding, {**ACT, "v": float(V), "seat": 2.0}))
    [got] = drain(w.server)
    assert isinstance(got, Act) and got.seat == 2 and type(got.seat) is int


# ---- duplicate keys -------------------------------------------------------------------------

def _msgpack_map(pairs: list[tuple[Any, Any]]) -> bytes:
    """A msgpack map with these pairs, in order, duplicates included (packb cannot make one)."""
    assert len(pairs) < 16
    return bytes([0x80 | len(pairs)]) + b"".join(msgpack.packb(k) + msgpack.packb(v) for k, v in pairs)


DUP_HELLO = [("type", "hello"), ("v", 1), ("name", "bot"), ("token", "first"), ("games", ["heroes"]),
             ("token", "second")]


@pytest.mark.parametrize("encoding", ["json", "msgpack"])
def test_a_key_given_twice_is_bad_field(encoding: str) -> None:
    if encoding == "json":
        body = b'{"type":"hello","v":1,"name":"bot","token":"first","games":["heroes"],"token":"second"}\n'
    else:
        raw = _msgpack_map(DUP_HELLO)
        body = len(raw).to_bytes(4, "big") + raw
    err = server_error(f"MAAG {V} {encoding}\n".encode() + body)
    assert err.code is E.BAD_FIELD and "'token' appears twice" in err.message


@pytest.mark.parametrize("encoding", ["json", "msgpack"])
def test_a_key_given_twice_in_a_nested_map_is_bad_field(encoding: str) -> None:
    hello = frame(encoding, HELLO)
    if encoding == "json":
        act = b'{"type":"act","v":1,"game_id":"1","action":{"kind":"end_turn","kind":"move"}}\n'
    else:
        inner = [("kind", "end_turn"), ("kind", "move")]
        raw = _msgpack_map([("type", "act"), ("v", 1), ("game_id", "1")])
        raw = bytes([0x84]) + raw[1:] + msgpack.packb("action") + _msgpack_map(inner)
        act = len(raw).to_bytes(4, "big") + raw
    conn = Connection(Role.SERVER, max_frame=4096)
    conn.receive_data(f"MAAG {V} {encoding}\n".encode() + hello)
    assert isinstance(conn.next_event(), Greeting)
    assert isinstance(conn.next_event(), Hello)
    conn.receive_data(act)
    with pytest.raises(RemoteProtocolError) as info:
        drain(conn)
    assert info.value.code is E.BAD_FIELD and "'kind' appears twice" in info.value.message


def test_a_duplicate_is_found_whatever_the_encoding_of_the_other_values() -> None:
    """Frames that pack back to themselves skip the duplicate check's Python hook (the C
    decoder's result is taken as it is); one with a duplicate never does, even when other
    values are written longer than they need (a uint32 for 1, a float32 where packb writes a
    float64) to make up the length the lost pair takes; and such frames without a duplicate
    decode to what their values say."""
    from maag.protocol._framing import MsgpackCodec

    long_one = b"\xce\x00\x00\x00\x01"  # 1 as a uint32 (packb writes one byte)
    pairs = [msgpack.packb(k) + msgpack.packb(v) for k, v in DUP_HELLO]
    pairs[1] = msgpack.packb("v") + long_one
    dup = bytes([0x80 | len(pairs)]) + b"".join(pairs)
    codec = MsgpackCodec()
    with pytest.raises(RemoteProtocolError) as info:
        codec.decode(dup)
    assert info.value.code is E.BAD_FIELD and "'token' appears twice" in info.value.message
    ok = bytes([0x80 | 3]) + msgpack.packb("v") + long_one + msgpack.packb("x") + b"\xca\x3f\x80\x00\x00" \
        + msgpack.packb("y") + msgpack.packb([1, {"a": 2}])
    assert codec.decode(ok) == {"v": 1, "x": 1.0, "y": [1, {"a": 2}]}
    assert codec.decode(msgpack.packb({"type": "ping", "v": V})) == {"type": "ping", "v": V}


def test_distinct_keys_still_decode_in_both_framings() -> None:
    for encoding in ("json", "msgpack"):
        conn = Connection(Role.SERVER, max_frame=4096)
        conn.receive_data(f"MAAG {V} {encoding}\n".encode() + frame(encoding, HELLO))
        assert isinstance(conn.next_event(), Greeting)
        h = conn.next_event()
        assert isinstance(h, Hello) and h.token == "t"
