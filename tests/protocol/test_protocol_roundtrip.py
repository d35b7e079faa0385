"""Two Connections over a fake wire, in both framings: what one side sends, the other
decodes as the same events, whatever way the bytes are cut."""

from __future__ import annotations

import json

import pytest
from maag.engine import Game
from maag.protocol import (
    Act,
    ConnectionClosed,
    ConnState,
    Error,
    ErrorCode,
    GameEvent,
    GameOver,
    GameStart,
    Greeting,
    Hello,
    Ping,
    Pong,
    Resign,
    Result,
    Turn,
    YourTurn,
)
from proto_helpers import Wire


def heroes_turn(seed: int = 3) -> tuple[YourTurn, list[dict]]:
    state = Game("heroes", {}).new_state(seed=seed)
    legal = [a.to_dict() for a in state.legal_actions()]
    return YourTurn(game_id="g1", observation=state.observation(0).to_json(), time_left_ms=5000,
                    bank_ms=20000, legal=legal), legal


@pytest.mark.parametrize("encoding", ["json", "msgpack"])
@pytest.mark.parametrize("chunk", [None, 1, 7])
def test_a_whole_session_round_trips(encoding: str, chunk: int | None) -> None:
    w = Wire(encoding, chunk)
    w.open(Hello(name="bot", token="secret", games=["heroes"], concurrency=2, want_legal=True))
    assert w.client.state is ConnState.READY and w.server.state is ConnState.READY
    your_turn, legal = heroes_turn()
    server_msgs = [
        GameStart(game_id="g1", game="heroes", seat=1, config={"map": "a", "ap": 5},
                  time_control={"turn_ms": 5000, "increment_ms": 0, "bank_ms": 20000, "lag_ms": None},
                  opponent="rival"),
        your_turn,
    ]
    assert w.s2c(*server_msgs) == server_msgs
    client_msgs = [Turn(game_id="g1", actions=[legal[0], {"type": "end_turn"}]),
                   Act(game_id="g1", action={"type": "end_turn"}, seat=1),
                   Ping(id=7), Ping(), Ping(id="x"), Resign(game_id="g1")]
    assert w.c2s(*client_msgs) == client_msgs
    server_msgs = [
        Result(game_id="g1", accepted=1, error=ErrorCode.ILLEGAL_ACTION, message="no AP left"),
        Result(game_id="g1", accepted=2),
        GameEvent(game_id="g1", seat=2, action={"type": "move", "from": [6, 1], "to": [5, 1]}),
        GameEvent(game_id="g1", seat=2, kind="timeout"),
        Error(code=ErrorCode.NOT_YOUR_TURN, message="wait", game_id="g1"),
        Pong(id=7),
        GameOver(game_id="g1", winner=None, reason="turn_limit", replay_id="r17"),
        GameOver(game_id="g2", winner=2, reason="resign"),
    ]
    assert w.s2c(*server_msgs) == server_msgs
    assert w.c2s(ConnectionClosed()) == [ConnectionClosed()]
    assert w.server.state is ConnState.CLOSED
    assert w.server.next_event() == ConnectionClosed()  # repeated


@pytest.mark.parametrize("encoding", ["json", "msgpack"])
def test_observation_survives_the_wire_exactly(encoding: str) -> None:
    w = Wire(encoding)
    w.open()
    msg, _ = heroes_turn(seed=11)
    [got] = w.s2c(msg)
    assert isinstance(got, YourTurn)
    assert got.observation == msg.observation
    assert got.legal == msg.legal


@pytest.mark.parametrize("encoding", ["json", "msgpack"])
def test_conquest_groups_survive_the_wire_exactly(encoding: str) -> None:
    from maag.engine.games.conquest.groups import groups_json

    w = Wire(encoding)
    w.open(Hello(name="bot", token="t", games=["conquest"], want_groups=True))
    state = Game("conquest", {}).new_state(seed=2)
    msg = YourTurn(game_id="g", observation=state.observation(0).to_json(), time_left_ms=1000,
                   groups=groups_json(state))
    [got] = w.s2c(msg)
    assert isinstance(got, YourTurn) and got.groups == msg.groups and got.groups


def test_json_lines_is_one_object_per_line_with_the_version() -> None:
    w = Wire("json")
    data = w.client.send(Greeting(encoding="json"))
    assert data == b"MAAG 2 json\n"
    data = w.client.send(Hello(name="bot", token="t", games=["heroes"]))
    assert data.endswith(b"\n") and data.count(b"\n") == 1
    assert json.loads(data) == {"type": "hello", "v": 2, "name": "bot", "token": "t", "games": ["heroes"],
                                "concurrency": 1, "want_legal": False}


def test_msgpack_frames_carry_a_big_endian_length() -> None:
    w = Wire("msgpack")
    assert w.client.send(Greeting(encoding="msgpack")) == b"MAAG 2 msgpack\n"
    data = w.client.send(Hello(name="b", token="t", games=["heroes"]))
    assert int.from_bytes(data[:4], "big") == len(data) - 4


def test_hand_typed_json_with_crlf_and_blank_lines_is_accepted() -> None:
    w = Wire("json")
    w.server.receive_data(b'MAAG 1 json\r\n\r\n'
                          b'{"type":"hello","v":1,"name":"me","token":"t","games":["heroes"]}\r\n')
    assert w.server.next_event() == Greeting(encoding="json", version=1)  # (hand-typed: version 1)
    assert w.server.next_event() == Hello(name="me", token="t", games=["heroes"])


def test_server_refuses_a_bad_greeting_in_json() -> None:
    w = Wire("json")
    w.server.receive_data(b"GET / HTTP/1.1\r\n")
    with pytest.raises(Exception) as info:
        w.server.next_event()
    assert info.value.code is ErrorCode.BAD_GREETING  # type: ignore[attr-defined]
    data = w.server.send(Error(code=info.value.code, message="bad greeting"))  # type: ignore[attr-defined]
    assert json.loads(data) == {"type": "error", "v": 2, "code": "bad_greeting", "message": "bad greeting"}
    assert w.server.state is ConnState.CLOSED


def test_fatal_error_closes_and_game_error_does_not() -> None:
    w = Wire("json")
    w.open()
    w.s2c(Error(code="unknown_game", message="no such game", game_id="g9"))
    assert w.client.state is ConnState.READY
    w.s2c(Error(code=ErrorCode.RATE_LIMITED, message="slow down"))
    assert w.client.state is ConnState.CLOSED and w.server.state is ConnState.CLOSED


def test_an_unknown_error_code_from_a_newer_server_is_kept() -> None:
    w = Wire("json")
    w.open()
    [err] = w.s2c(Error(code="brand_new_code", message="?", game_id="g1"))
    assert isinstance(err, Error) and err.code == "brand_new_code" and err.error_code is None


def test_to_wire_omits_absent_optionals() -> None:
    assert Ping().to_wire() == {"type": "ping", "v": 2}
    assert Ping().to_wire(version=1) == {"type": "ping", "v": 1}
    assert GameOver(game_id="g", winner=None, reason="rules").to_wire() == {
        "type": "game_over", "v": 2, "game_id": "g", "winner": None, "reason": "rules"}
