"""The hot path's generated functions (`Message.wire_map`, `built` without checks, the
Connection's per-class transition table) against the general ones they stand in for: the
same map as `to_wire(packed=True)`, the same frames in both framings, the same message as
the checked constructor, the same states; for every message the schema fuzzer makes."""

from __future__ import annotations

from typing import Any

import msgpack
from hypothesis import HealthCheck, given, settings
from maag.protocol import (
    MESSAGE_TYPES,
    Connection,
    Greeting,
    Hello,
    Packed,
    RemoteProtocolError,
    Result,
    Role,
    Welcome,
    YourTurn,
    message_from_wire,
)
from maag.protocol._framing import JsonLinesCodec, MsgpackCodec
from maag.protocol._messages import _wire_fields
from test_protocol_schema import messages


def _lists(v: Any) -> Any:
    if isinstance(v, (list, tuple)):
        return [_lists(x) for x in v]
    if isinstance(v, dict):
        return {k: _lists(x) for k, x in v.items()}
    return v


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages())
def test_wire_map_and_built_agree_with_the_general_path(data: dict[str, Any]) -> None:
    try:
        msg = message_from_wire(data)
    except RemoteProtocolError:
        return
    wire, packed = msg.wire_map()
    assert not packed
    assert _lists(wire) == msg.to_wire(packed=True)
    assert list(wire) == list(msg.to_wire(packed=True))  # the same keys in the same order
    for codec in (MsgpackCodec(), JsonLinesCodec()):
        assert codec.encode_message(msg) == codec.encode(msg.to_wire(packed=True))
    fields = {name: getattr(msg, name) for name, _, _ in _wire_fields(type(msg))}
    assert type(msg).built(**fields) == msg


def test_packed_fields_are_spliced_and_decoded_like_plain_ones() -> None:
    obs = {"board": [[1, 2], [3, None]], "name": "é" * 40}
    legal = [{"type": "end_turn"}, {"type": "move", "to": [1, 2]}]
    plain = YourTurn(game_id="7", observation=obs, time_left_ms=5, legal=tuple(legal))
    packed = YourTurn.built(game_id="7", observation=Packed(msgpack.packb(obs)), time_left_ms=5,
                            legal=Packed(msgpack.packb(legal)))
    assert packed.wire_map()[1] and not plain.wire_map()[1]
    for codec in (MsgpackCodec(), JsonLinesCodec()):
        assert codec.encode_message(packed) == codec.encode_message(plain)


def test_the_per_class_transitions_are_the_table_s() -> None:
    """A server connection walks greeting, hello, welcome and game messages through the
    fast path; what the table forbids is still refused by it (a second welcome, a client
    message sent by the server, anything after the connection closed)."""
    import pytest
    from maag.protocol import ConnState, LocalProtocolError

    c = Connection(Role.SERVER)
    c.receive_data(b"MAAG 1 msgpack\n")
    assert isinstance(c.next_event(), Greeting) and c.state is ConnState.HELLO
    body = msgpack.packb({"type": "hello", "v": 1, "name": "x", "token": "t", "games": ["heroes"]})
    c.receive_data(len(body).to_bytes(4, "big") + body)
    assert isinstance(c.next_event(), Hello) and c.state is ConnState.AUTH
    with pytest.raises(LocalProtocolError):
        Connection(Role.SERVER).send(Result.built(game_id="1", accepted=1))  # before the greeting
    c.send(Welcome.built(bot="x", server="s", max_frame=1 << 20))
    assert c.state is ConnState.READY
    c.send(Result.built(game_id="1", accepted=1))
    with pytest.raises(LocalProtocolError):
        c.send(Welcome.built(bot="x", server="s", max_frame=1 << 20))
    with pytest.raises(LocalProtocolError):  # the connection failed: nothing more is sent
        c.send(Result.built(game_id="1", accepted=1))
    assert {cls.TYPE for cls in MESSAGE_TYPES.values()} >= {"act", "your_turn", "welcome"}
