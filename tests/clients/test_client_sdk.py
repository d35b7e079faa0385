"""The asyncio client against a scripted server: login, turns, partial plans, resigning,
concurrency, stale plans, failures."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from typing import Any

import pytest
from client_helpers import ScriptedTransport
from maag.clients import (
    Bot,
    BotError,
    BotTerminatedError,
    Client,
    GameInfo,
    Limit,
    Observation,
    Option,
    ServerError,
    TurnResult,
)
from maag.engine import Game
from maag.protocol import (
    ConnectionClosed,
    Error,
    GameEvent,
    GameOver,
    GameStart,
    Hello,
    Ping,
    Pong,
    Resign,
    Result,
    Turn,
    YourTurn,
)

TC = {"turn_ms": 1000, "increment_ms": 0, "bank_ms": 5000, "lag_ms": 100}


def start(game_id: str = "g1", seat: int = 1) -> GameStart:
    return GameStart(game_id=game_id, game="heroes", seat=seat, config={"map": "a-tiny"}, time_control=TC,
                     opponent="rival")


def your_turn(game_id: str = "g1", seed: int = 1, legal: bool = True, left: int = 900) -> YourTurn:
    state = Game("heroes", {"map": "a-tiny"}).new_state(seed)
    return YourTurn(game_id=game_id, observation=state.observation(0).to_json(), time_left_ms=left,
                    bank_ms=5000, legal=[a.to_dict() for a in state.legal_actions()] if legal else None)


END = {"type": "end_turn"}


class FirstLegalBot(Bot):
    """Plays the first legal action, then ends the turn; records what it saw."""

    name = "first"
    want_legal = True
    options = (Option(name="depth", type="int", default=1, min=1, max=9),)

    def __init__(self, settings: Any = None) -> None:
        super().__init__(settings)
        self.seen: list[tuple[Observation, Limit]] = []
        self.events: list[tuple[str, int, Any]] = []
        self.results: list[tuple[int, str | None]] = []
        self.over: list[Any] = []
        FirstLegalBot.instances.append(self)

    instances: list[FirstLegalBot] = []

    def choose_turn(self, observation: Observation, limit: Limit) -> TurnResult:
        self.seen.append((observation, limit))
        assert observation.legal is not None
        return TurnResult([observation.legal[0], END], info={"nodes": 1})

    async def on_event(self, kind: str, seat: int, action: Any) -> None:
        self.events.append((kind, seat, action))

    async def on_result(self, accepted: int, error: str | None, message: str | None) -> None:
        self.results.append((accepted, error))

    async def on_game_over(self, record: Any) -> None:
        self.over.append(record)


@pytest.fixture(autouse=True)
def _reset() -> None:
    FirstLegalBot.instances.clear()


async def play(t: ScriptedTransport, client: Client) -> Any:
    await client.start(t, timeout=5)
    return await asyncio.wait_for(client.run(), 10)


async def test_one_game_from_login_to_game_over() -> None:
    t = ScriptedTransport()
    yt = your_turn()
    assert yt.legal is not None
    t.expect_login(hello=Hello(name="first", token="tok", games=["heroes"], want_legal=True, events="turn"),
                   replies=[start(), yt])
    t.expect(Turn(game_id="g1", actions=[yt.legal[0], END], info={"nodes": 1}),  # the bot's info goes along
             [Result(game_id="g1", accepted=2),
              GameEvent(game_id="g1", seat=2, action={"type": "swap_card"}),
              GameOver(game_id="g1", winner=1, reason="rules", replay_id="r9"), ConnectionClosed()])
    client = Client(FirstLegalBot, token="tok", settings={"depth": "3"})
    stats = await play(t, client)
    t.assert_done()
    [bot] = FirstLegalBot.instances
    assert bot.settings == {"depth": 3}
    assert bot.game is not None and bot.game.seat == 1 and bot.game.opponent == "rival"
    [(obs, limit)] = bot.seen
    assert obs["ap"] == 3 and obs.game.game_id == "g1"
    assert limit.received_at is not None and limit.elapsed_ms() >= 0  # when the your_turn was read
    assert replace(limit, received_at=None) == Limit(time_left_ms=900, bank_ms=5000, turn_ms=1000,
                                                     increment_ms=0, lag_ms=100)
    assert bot.results == [(2, None)]
    assert bot.events == [("action", 2, {"type": "swap_card"})]
    [record] = stats.games
    assert record.winner == 1 and record.score == 1.0 and record.replay_id == "r9"
    assert bot.over == [record]
    assert stats.turns_sent == 1


async def test_an_aborted_game_is_neither_a_draw_nor_scored(caplog: pytest.LogCaptureFixture) -> None:
    t = ScriptedTransport()
    t.expect_login(replies=[start(), your_turn()])
    t.expect(lambda m: isinstance(m, Turn), [GameOver(game_id="g1", winner=None, reason="aborted"),
                                             ConnectionClosed()])

    class EndBot(Bot):
        def choose_turn(self, observation: Observation, limit: Limit) -> TurnResult:
            return TurnResult([END])

    with caplog.at_level(logging.INFO, logger="maag.clients"):
        stats = await play(t, Client(EndBot, token="t"))
    [record] = stats.games
    assert record.aborted and record.score is None and record.winner is None
    assert "game g1 over: aborted (aborted)" in caplog.text and "draw" not in caplog.text


async def test_the_agent_runner_reads_an_sdk_observation_as_an_engine_observation() -> None:
    from maag.bots.runner import engine_view

    t = ScriptedTransport()
    yt = your_turn(seed=4)
    t.expect_login(replies=[start(), yt])
    t.expect(lambda m: isinstance(m, Turn), [GameOver(game_id="g1", winner=None, reason="turn_limit"),
                                             ConnectionClosed()])
    states = []

    class StateBot(Bot):
        def choose_turn(self, observation: Observation, limit: Limit) -> TurnResult:
            states.append(engine_view(observation))
            return TurnResult([END])

    await play(t, Client(StateBot, token="t"))
    t.assert_done()
    [st] = states
    assert st.seat == 0 and st.to_json()["observer"] == 1 and st.to_json()["ap"] == 3


async def test_after_an_illegal_action_the_bot_is_asked_again() -> None:
    t = ScriptedTransport()
    first, second = your_turn(seed=1), your_turn(seed=2, left=700)
    t.expect_login(replies=[start(), first])
    t.expect(lambda m: isinstance(m, Turn),
             [Result(game_id="g1", accepted=0, error="illegal_action", message="no"), second])
    t.expect(lambda m: isinstance(m, Turn),
             [GameOver(game_id="g1", winner=2, reason="rules"), ConnectionClosed()])
    client = Client(FirstLegalBot, token="t")
    stats = await play(t, client)
    t.assert_done()
    [bot] = FirstLegalBot.instances
    assert [lim.time_left_ms for _, lim in bot.seen] == [900, 700]
    assert bot.results == [(0, "illegal_action")]
    assert stats.errors == [("g1", "illegal_action")]
    assert stats.games[0].score == 0.0


async def test_resigning() -> None:
    t = ScriptedTransport()
    t.expect_login(replies=[start(seat=2), your_turn()])
    t.expect(Resign(game_id="g1"), [GameOver(game_id="g1", winner=1, reason="resign"), ConnectionClosed()])

    class Quitter(Bot):
        async def choose_turn(self, observation: Observation, limit: Limit) -> TurnResult:
            return TurnResult(resigned=True)

    stats = await play(t, Client(Quitter, token="t"))
    t.assert_done()
    assert stats.games[0].reason == "resign" and stats.games[0].score == 0.0


async def test_two_games_at_once_each_with_its_own_bot() -> None:
    t = ScriptedTransport()
    t.expect_login(replies=[start("a"), start("b", seat=2), your_turn("a"), your_turn("b", seed=3)])
    sent: dict[str, Turn] = {}

    def record(m: Any) -> bool:
        if isinstance(m, Turn):
            sent[m.game_id] = m
            return True
        return False

    t.expect(record, [GameOver(game_id="a", winner=1, reason="rules")])
    t.expect(record, [GameOver(game_id="b", winner=1, reason="rules")])
    stats = await play(t, Client(FirstLegalBot, token="t", concurrency=2, stop_after=2))
    t.assert_done()
    assert set(sent) == {"a", "b"}
    assert len(FirstLegalBot.instances) == 2
    assert sorted(r.score for r in stats.games) == [0.0, 1.0]
    assert t.closed  # stop_after closed the connection


async def test_a_plan_for_an_old_prompt_is_dropped() -> None:
    t = ScriptedTransport()
    gate = asyncio.Event()
    calls: list[int] = []

    class SlowThenFast(Bot):
        async def choose_turn(self, observation: Observation, limit: Limit) -> TurnResult:
            calls.append(limit.time_left_ms or 0)
            if len(calls) == 1:
                await gate.wait()  # still thinking when the turn moves on
                return TurnResult([{"type": "stale"}])
            gate.set()
            return TurnResult([END])

    t.expect_login(replies=[start(), your_turn(left=900), your_turn(left=10)])
    t.expect(Turn(game_id="g1", actions=[END]), [GameOver(game_id="g1", winner=1, reason="rules"),
                                                 ConnectionClosed()])
    await play(t, Client(SlowThenFast, token="t"))
    t.assert_done()
    assert calls == [900, 10]


async def test_a_failing_bot_resigns_its_game() -> None:
    t = ScriptedTransport()
    t.expect_login(replies=[start(), your_turn()])
    t.expect(Resign(game_id="g1"), [GameOver(game_id="g1", winner=2, reason="resign"), ConnectionClosed()])

    class Broken(Bot):
        def choose_turn(self, observation: Observation, limit: Limit) -> TurnResult:
            raise ZeroDivisionError("bug")

    stats = await play(t, Client(Broken, token="t"))
    t.assert_done()
    assert stats.games[0].reason == "resign"


@pytest.mark.parametrize("returned", [None, TurnResult([])])
async def test_a_strict_client_raises_the_bots_error(returned: Any) -> None:
    t = ScriptedTransport()
    t.expect_login(replies=[start(), your_turn()])

    class Bad(Bot):
        def choose_turn(self, observation: Observation, limit: Limit) -> Any:
            return returned

    client = Client(Bad, token="t", strict=True)
    await client.start(t)
    with pytest.raises(BotError, match="TurnResult|no actions"):
        await asyncio.wait_for(client.run(), 10)
    t.assert_done()
    assert t.closed


async def test_auth_failure_is_a_server_error() -> None:
    t = ScriptedTransport()
    t.expect_login(replies=[])
    t.expectations[-1] = (t.expectations[-1][0], [Error(code="auth_failed", message="unknown token"),
                                                   ConnectionClosed()])
    with pytest.raises(ServerError) as info:
        await Client(FirstLegalBot, token="bad").start(t)
    assert info.value.code == "auth_failed"
    assert t.closed


async def test_fatal_error_while_playing_is_raised() -> None:
    t = ScriptedTransport()
    t.expect_login(replies=[Error(code="rate_limited", message="slow down"), ConnectionClosed()])
    client = Client(FirstLegalBot, token="t")
    await client.start(t)
    with pytest.raises(ServerError, match="rate_limited"):
        await client.run()


async def test_losing_the_connection_mid_game_is_terminated() -> None:
    t = ScriptedTransport()
    t.expect_login(replies=[start(seat=2), ConnectionClosed()])
    client = Client(FirstLegalBot, token="t")
    await client.start(t)
    with pytest.raises(BotTerminatedError, match="1 game"):
        await client.run()


async def test_garbage_from_the_server_is_a_bot_error() -> None:
    t = ScriptedTransport()
    t.expect_login(replies=[b"\x00\x00\x00\x02{}"])
    client = Client(FirstLegalBot, token="t")
    await client.start(t)
    with pytest.raises(BotError, match="broke the protocol"):
        await client.run()


async def test_no_welcome_before_eof() -> None:
    t = ScriptedTransport()
    t.expect_login(replies=[])
    t.expectations[-1] = (t.expectations[-1][0], [ConnectionClosed()])
    with pytest.raises(BotTerminatedError, match="before welcome"):
        await Client(FirstLegalBot, token="t").start(t)


async def test_ping_measures_a_round_trip() -> None:
    t = ScriptedTransport()
    t.expect_login("json")
    t.expect(Ping(id=1), [Pong(id=1), ConnectionClosed()])
    client = Client(FirstLegalBot, token="t", encoding="json")
    await client.start(t)
    run = asyncio.create_task(client.run())
    rtt = await client.ping(timeout=5)
    await run
    assert rtt >= 0
    t.assert_done()


async def test_a_timeout_makes_the_running_plan_stale() -> None:
    t = ScriptedTransport()
    started, release, done = asyncio.Event(), asyncio.Event(), asyncio.Event()

    class Slow(Bot):
        async def choose_turn(self, observation: Observation, limit: Limit) -> TurnResult:
            started.set()
            await release.wait()
            done.set()  # the client sends (or drops) the plan before the test runs again
            return TurnResult([END])

        async def on_event(self, kind: str, seat: int, action: Any) -> None:
            release.set()  # the timeout error, sent just before this event, has been handled

    t.expect_login(replies=[start(), your_turn()])
    client = Client(Slow, token="t")
    await client.start(t)
    run = asyncio.create_task(client.run())
    await started.wait()
    t.push(Error(code="timeout", message="late", game_id="g1"),
           GameEvent(game_id="g1", seat=1, kind="timeout"))
    await done.wait()
    t.push(GameOver(game_id="g1", winner=2, reason="timeout"), ConnectionClosed())
    stats = await asyncio.wait_for(run, 10)
    t.assert_done()  # no Turn was sent after the timeout
    assert stats.errors == [("g1", "timeout")] and stats.turns_sent == 0


def test_game_info_is_plain_data() -> None:
    info = GameInfo(game_id="g", game="heroes", seat=1, config={"map": "a-small"}, time_control={},
                    opponent="x")
    assert info.config["map"] == "a-small" and not hasattr(info, "engine")


def example_bot_source() -> str:
    import maag.clients

    doc = maag.clients.__doc__ or ""
    block = doc.split("::\n\n", 1)[1].split("\n\n`choose_turn`", 1)[0]
    return "\n".join(line[4:] for line in block.splitlines())


async def test_the_docstring_example_bot_plays() -> None:
    source = example_bot_source()
    assert len(source.strip().splitlines()) <= 16  # "a complete bot is about 15 lines"
    namespace: dict[str, Any] = {"__name__": "example"}
    exec(compile(source, "example", "exec"), namespace)
    t = ScriptedTransport()
    yt = your_turn()
    assert yt.legal is not None
    t.expect_login(hello=Hello(name="random-example", token="t", games=["heroes"], want_legal=True,
                               events="turn"),
                   replies=[start(), yt])
    t.expect(lambda m: isinstance(m, Turn) and len(m.actions) == 1 and m.actions[0] in yt.legal,
             [GameOver(game_id="g1", winner=1, reason="rules"), ConnectionClosed()])
    await play(t, Client(namespace["RandomBot"], token="t"))
    t.assert_done()
