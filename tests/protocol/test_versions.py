"""Protocol versions 1 and 2 on one connection state machine: the greeting's version is the
connection's (every message's `v`); version 2 adds `hello.events` and `turn_events` (the
other seat's turn in one message), which a version-1 connection refuses either way; a
hello's `events` is "action" or "turn"."""

from __future__ import annotations

import json

import pytest
from maag.protocol import (
    PROTOCOL_VERSION,
    SUPPORTED_VERSIONS,
    Connection,
    ErrorCode,
    GameEvent,
    Greeting,
    Hello,
    LocalProtocolError,
    RemoteProtocolError,
    Role,
    TurnEvents,
    Welcome,
)
from proto_helpers import drain

ACTIONS = [{"type": "deploy", "card": "archer", "to": [4, 2]}, {"type": "end_turn"}]


def welcomed(version: int, encoding: str = "json",
             events: str | None = None) -> tuple[Connection, Connection]:
    """A client and a server connection of `version`, past the welcome."""
    client, server = Connection(Role.CLIENT), Connection(Role.SERVER)
    server.receive_data(client.send(Greeting(encoding=encoding, version=version))
                        + client.send(Hello(name="b", token="t", games=["heroes"], events=events)))
    greeting, hello = drain(server)
    assert isinstance(greeting, Greeting) and greeting.version == version
    assert isinstance(hello, Hello) and hello.events == events
    client.receive_data(server.send(Welcome(bot="b", server="s", max_frame=1 << 20)))
    [welcome] = drain(client)
    assert isinstance(welcome, Welcome)
    return client, server


def test_this_side_speaks_version_2_and_a_referee_both() -> None:
    assert PROTOCOL_VERSION == 2 and SUPPORTED_VERSIONS == (1, 2)
    assert Connection(Role.CLIENT).send(Greeting(encoding="json")) == b"MAAG 2 json\n"


@pytest.mark.parametrize("encoding", ["json", "msgpack"])
def test_a_version_2_bot_that_asks_hears_the_turn_in_one_message(encoding: str) -> None:
    client, server = welcomed(2, encoding, events="turn")
    data = server.send(TurnEvents(game_id="g", seat=2, actions=ACTIONS))
    if encoding == "json":
        assert json.loads(data) == {"type": "turn_events", "v": 2, "game_id": "g", "seat": 2,
                                    "actions": ACTIONS}
    client.receive_data(data)
    [got] = drain(client)
    assert got == TurnEvents(game_id="g", seat=2, actions=ACTIONS)
    assert Hello(name="b", token="t", games=["x"], events="turn").turn_events
    assert not Hello(name="b", token="t", games=["x"], events="action").turn_events
    assert not Hello(name="b", token="t", games=["x"]).turn_events


def test_events_is_action_or_turn() -> None:
    with pytest.raises(LocalProtocolError) as info:
        Hello(name="b", token="t", games=["heroes"], events="once")
    assert info.value.code is ErrorCode.BAD_FIELD and info.value.field == "events"
    with pytest.raises(LocalProtocolError):
        TurnEvents(game_id="g", seat=2, actions=[])  # (a turn told has an action at least)


def test_a_version_1_connection_has_neither_events_nor_turn_events() -> None:
    server = Connection(Role.SERVER)
    server.receive_data(b'MAAG 1 json\n{"type":"hello","v":1,"name":"b","token":"t","games":["heroes"],'
                        b'"events":"turn"}\n')
    with pytest.raises(RemoteProtocolError) as info:
        drain(server)
    assert (info.value.code, info.value.field) == (ErrorCode.BAD_FIELD, "events")
    client, server = welcomed(1)
    with pytest.raises(LocalProtocolError, match="version 2"):
        server.send(TurnEvents(game_id="g", seat=2, actions=ACTIONS))
    client.receive_data(b'{"type":"turn_events","v":1,"game_id":"g","seat":2,"actions":[{"type":"end_turn"}]}\n')
    with pytest.raises(RemoteProtocolError) as info:
        drain(client)
    assert info.value.code is ErrorCode.UNKNOWN_TYPE


def test_every_message_carries_the_connections_version_and_the_other_is_refused() -> None:
    for version in SUPPORTED_VERSIONS:
        client, server = welcomed(version)
        event = server.send(GameEvent(game_id="g", seat=2, action={"type": "end_turn"}))
        assert json.loads(event)["v"] == version
        other = 3 - version
        server.receive_data(b'{"type":"ping","v":%d}\n' % other)
        with pytest.raises(RemoteProtocolError) as info:
            drain(server)
        assert (info.value.code, info.value.field) == (ErrorCode.UNSUPPORTED_VERSION, "v")
