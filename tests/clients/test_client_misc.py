"""Options, settings, exit hints, addresses, and the blocking SimpleClient over real TCP."""

from __future__ import annotations

import socket
import threading
from typing import Any

import pytest
from maag.clients import (
    Bot,
    BotError,
    BotTerminatedError,
    Limit,
    Observation,
    Option,
    SimpleClient,
    TurnResult,
    exit_hint,
    parse_address,
    parse_params,
    parse_settings,
)
from maag.engine import Game
from maag.protocol import (
    NEED_DATA,
    Connection,
    GameOver,
    GameStart,
    Greeting,
    Hello,
    Role,
    Turn,
    Welcome,
    YourTurn,
)


def test_option_parsing() -> None:
    n = Option(name="n", type="int", default=10, min=1, max=100)
    assert n.parse("42") == 42
    with pytest.raises(BotError, match=r"an integer >= 1, <= 100"):
        n.parse("0")
    with pytest.raises(BotError):
        n.parse("4.5")
    c = Option(name="c", type="choice", default="ucb", choices=("ucb", "eps"))
    with pytest.raises(BotError, match="one of ucb, eps"):
        c.parse("x")
    b = Option(name="b", type="bool", default=False)
    assert b.parse("yes") is True and b.parse("off") is False
    with pytest.raises(BotError):
        b.parse("maybe")
    assert Option(name="f", type="float", default=0.5).parse("1e-3") == 0.001


def test_options_the_client_manages_are_refused() -> None:
    with pytest.raises(BotError, match="managed"):
        Option(name="token", type="str")
    opts = [Option(name="n", type="int", default=3)]
    assert parse_settings(opts, None) == {"n": 3}
    with pytest.raises(BotError, match="managed"):
        parse_settings(opts, {"concurrency": "2"})
    with pytest.raises(BotError, match="known: n"):
        parse_settings(opts, {"m": "2"})


def test_bad_default_is_refused_at_definition() -> None:
    with pytest.raises(BotError):
        Option(name="n", type="int", default=0, min=1)


def test_params_and_addresses() -> None:
    assert parse_params(["a=1", "b=x=y"]) == {"a": "1", "b": "x=y"}
    with pytest.raises(BotError):
        parse_params(["novalue"])
    assert parse_address("example.org:7878") == ("example.org", 7878)
    assert parse_address("[::1]:80") == ("::1", 80)
    assert parse_address(":9") == ("127.0.0.1", 9)
    with pytest.raises(BotError):
        parse_address("localhost")


def test_exit_hints() -> None:
    assert "SIGKILL" in exit_hint(-9)
    assert exit_hint(0) == ""
    err = BotTerminatedError("bot exited", returncode=127)
    assert "127" in str(err) and "not found" in str(err)


def test_limit_repr_skips_unknowns_and_think_ms() -> None:
    lim = Limit(time_left_ms=1000, bank_ms=500)
    assert repr(lim) == "Limit(time_left_ms=1000, bank_ms=500)"
    assert lim.think_ms(margin_ms=100) == 900
    assert lim.think_ms(margin_ms=100, use_bank=True) == 1400
    assert Limit().think_ms() is None


class OneShotServer(threading.Thread):
    """A blocking TCP peer for one connection: login, one your_turn, then game_over."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.got: list[Any] = []

    def run(self) -> None:
        conn, _ = self.sock.accept()
        proto = Connection(Role.SERVER)
        state = Game("heroes", {"map": "a-tiny"}).new_state(7)

        def next_event() -> Any:
            while True:
                ev = proto.next_event()
                if ev is not NEED_DATA:
                    self.got.append(ev)
                    return ev
                proto.receive_data(conn.recv(65536))

        assert isinstance(next_event(), Greeting)
        assert isinstance(next_event(), Hello)
        conn.sendall(proto.send(Welcome(bot="b", server="oneshot", max_frame=1 << 20)))
        conn.sendall(proto.send(GameStart(game_id="g", game="heroes", seat=1, config={"map": "a-tiny"},
                                          time_control={}, opponent="o")))
        legal = [a.to_dict() for a in state.legal_actions()]
        conn.sendall(proto.send(YourTurn(game_id="g", observation=state.observation(0).to_json(),
                                         time_left_ms=1000, legal=legal)))
        turn = next_event()
        assert isinstance(turn, Turn)
        conn.sendall(proto.send(GameOver(game_id="g", winner=1, reason="rules")))
        conn.close()
        self.sock.close()


class SyncBot(Bot):
    want_legal = True

    def choose_turn(self, observation: Observation, limit: Limit) -> TurnResult:
        assert observation.legal
        return TurnResult([observation.legal[-1]])


def test_simple_client_plays_over_tcp() -> None:
    server = OneShotServer()
    server.start()
    with SimpleClient.connect(SyncBot, f"127.0.0.1:{server.port}", token="t", encoding="json") as client:
        assert client.welcome.server == "oneshot"
        stats = client.play(timeout=30)
    server.join(30)
    assert [r.winner for r in stats.games] == [1]
    turn = server.got[-1]
    assert isinstance(turn, Turn) and turn.actions == ({"type": "end_turn"},)


def test_simple_client_cannot_connect() -> None:
    s = socket.create_server(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with pytest.raises(BotTerminatedError, match="cannot connect"):
        SimpleClient.connect(SyncBot, f"127.0.0.1:{port}", token="t", timeout=5)
