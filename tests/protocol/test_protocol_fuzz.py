"""Random bytes into a Connection: the only acceptable failure is RemoteProtocolError
(h11's fuzz/ for maag). Any other exception is a bug in maag.protocol."""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Any

import msgpack
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from maag.protocol import (
    MESSAGE_TYPES,
    NEED_DATA,
    Act,
    Connection,
    ConnectionClosed,
    GameEvent,
    GameOver,
    Hello,
    Message,
    Ping,
    Pong,
    RemoteProtocolError,
    Resign,
    Result,
    Role,
    Turn,
    Welcome,
)

FUZZ = settings(max_examples=int(os.environ.get("MAAG_FUZZ_EXAMPLES", "300")), deadline=None,
                suppress_health_check=[HealthCheck.too_slow])


def feed(conn: Connection, chunks: list[bytes], eof: bool) -> list[Any]:
    events: list[Any] = []
    try:
        for c in [c for c in chunks if c] + ([b""] if eof else []):
            conn.receive_data(c)
            while True:
                ev = conn.next_event()
                if ev is NEED_DATA or isinstance(ev, ConnectionClosed):
                    break
                events.append(ev)
    except RemoteProtocolError:
        pass
    return events


PREFIXES = [b"", b"MAAG 1 json\n", b"MAAG 1 msgpack\n",
            b'MAAG 1 json\n{"type":"hello","v":1,"name":"b","token":"t","games":["heroes"]}\n']
_hello = msgpack.packb({"type": "hello", "v": 1, "name": "b", "token": "t", "games": ["heroes"]})
PREFIXES.append(b"MAAG 1 msgpack\n" + len(_hello).to_bytes(4, "big") + _hello)


@FUZZ
@given(prefix=st.sampled_from(PREFIXES), chunks=st.lists(st.binary(min_size=1, max_size=64), max_size=8),
       eof=st.booleans())
def test_random_bytes_into_a_server(prefix: bytes, chunks: list[bytes], eof: bool) -> None:
    feed(Connection(Role.SERVER, max_frame=256), [prefix] + chunks, eof)


@FUZZ
@given(chunks=st.lists(st.binary(min_size=1, max_size=64), max_size=8), eof=st.booleans(),
       encoding=st.sampled_from(["json", "msgpack"]))
def test_random_bytes_into_a_welcomed_client(chunks: list[bytes], eof: bool, encoding: str) -> None:
    from maag.protocol import Greeting

    client = Connection(Role.CLIENT, max_frame=256)
    client.send(Greeting(encoding=encoding))
    client.send(Hello(name="b", token="t", games=["heroes"]))
    welcome = Welcome(bot="b", server="s", max_frame=256).to_wire()
    if encoding == "json":
        first = json.dumps(welcome).encode() + b"\n"
    else:
        body = msgpack.packb(welcome)
        first = len(body).to_bytes(4, "big") + body
    feed(client, [first] + chunks, eof)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats(allow_nan=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
plausible = st.sampled_from([1, 2, 0, "g1", "heroes", ["heroes"], {"type": "end_turn"},
                             [{"type": "end_turn"}], True, {}, {"turn_ms": 100}]) | json_values


def message_of(t: str) -> st.SearchStrategy[dict[str, Any]]:
    names = [f.name for f in dataclasses.fields(MESSAGE_TYPES[t])]  # type: ignore[arg-type]
    return st.fixed_dictionaries({"type": st.just(t), "v": st.just(1)},
                                 optional={n: plausible for n in names + ["extra"]})


VALID = [Ping(id=3), Act(game_id="g1", action={"type": "move", "from": [1, 2], "to": [2, 2]}),
         Turn(game_id="g1", actions=[{"type": "end_turn"}]), Resign(game_id="g1", seat=2),
         Pong(id="p"), GameOver(game_id="g", winner=None, reason="rules"),
         GameEvent(game_id="g", seat=1, action={"type": "end_turn"}), Result(game_id="g", accepted=0)]


@st.composite
def mutated(draw: st.DrawFn) -> dict[str, Any]:
    """A valid message with one field removed, replaced or added."""
    m = draw(st.sampled_from(VALID)).to_wire()
    key = draw(st.sampled_from(sorted(m) + ["extra"]))
    if draw(st.booleans()):
        m.pop(key, None)
    else:
        m[key] = draw(plausible)
    return m


messages = st.sampled_from(sorted(MESSAGE_TYPES)).flatmap(message_of) | mutated()


@FUZZ
@given(msgs=st.lists(messages, min_size=1, max_size=5), encoding=st.sampled_from(["json", "msgpack"]))
def test_random_message_maps_into_a_server(msgs: list[dict[str, Any]], encoding: str) -> None:
    """Structured fuzz: well-framed maps with random fields. A decoded message must be a
    valid Message that survives to_wire/from_wire unchanged."""
    data = b""
    hello = {"type": "hello", "v": 1, "name": "b", "token": "t", "games": ["heroes"]}
    for m in [hello] + msgs:
        if encoding == "json":
            data += json.dumps(m).encode() + b"\n"
        else:
            body = msgpack.packb(m)
            data += len(body).to_bytes(4, "big") + body
    conn = Connection(Role.SERVER)
    events = feed(conn, [f"MAAG 1 {encoding}\n".encode(), data], eof=True)
    for ev in events[1:]:
        assert isinstance(ev, Message)
        assert type(ev).from_wire(ev.to_wire()) == ev


def test_msgpack_deep_nesting_is_a_remote_error() -> None:
    body = b"\x91" * 200000 + b"\x80"
    conn = Connection(Role.SERVER, max_frame=1 << 20)
    conn.receive_data(b"MAAG 1 msgpack\n" + len(body).to_bytes(4, "big") + body)
    try:
        while conn.next_event() is not NEED_DATA:
            pass
        raise AssertionError("a 200000-deep frame was accepted")
    except RemoteProtocolError as e:
        assert e.code.value == "bad_encoding"
