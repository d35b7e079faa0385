"""What a bot says in its hello counts: `max_games` (a bot that will leave after N games
says so, and the referee pairs it no more: exactly N games are stored for it, all
finished; before, the referee paired it again as its N-th game ended) and `name` (shown
beside the registered name, in the replay's tags)."""

from __future__ import annotations

import asyncio
import random

from maag.clients import Bot, Client, Limit, Observation, TurnResult
from maag.server.net.server import RefereeServer

from .conftest import WAIT, MakeServer, Raw, spawn_minibot, stop_process, token_for, until


class RandomBot(Bot):
    name = "leaver"
    want_legal = True

    def choose_turn(self, observation: Observation, limit: Limit) -> TurnResult:
        assert observation.legal is not None
        return TurnResult([random.choice(observation.legal)])


def games_of(srv: RefereeServer, bot: str) -> list[str]:
    return [g.status for g in srv.storage.storage.list_games() if bot in (g.seats[0], g.seats[1])]


async def test_a_bot_that_leaves_after_n_games_plays_exactly_n(referee: MakeServer) -> None:
    srv = await referee(game_config={"map": "a-tiny"}, auto_pair=True)
    stayer = await spawn_minibot(srv.port, token_for(srv, "stayer"), "--concurrency", "2")
    try:
        client = Client(RandomBot, token=token_for(srv, "leaver"), concurrency=2, stop_after=3)
        await client.connect(f"127.0.0.1:{srv.port}")
        assert client.hello.max_games == 3
        stats = await asyncio.wait_for(client.run(), WAIT)
        assert len(stats.games) == 3
        await until(lambda: len(games_of(srv, "leaver")) >= 3 and not srv.games)
        await asyncio.sleep(0.3)  # a pairing after the third game would be stored by now
        assert games_of(srv, "leaver") == ["finished"] * 3
    finally:
        await stop_process(stayer)


async def test_the_name_a_bot_gives_is_shown_beside_its_registered_name(referee: MakeServer) -> None:
    srv = await referee(game_config={"map": "a-tiny"})
    a, b = await Raw.connect(srv.port), await Raw.connect(srv.port)
    await a.hello(token_for(srv, "a"), "Alice the bot")
    await b.hello(token_for(srv, "b"), "b-2.0")
    fut = srv.request_game("a", "b")
    start = await a.recv_type("game_start")
    a.send({"type": "resign", "game_id": start["game_id"]})
    summary = await asyncio.wait_for(fut, WAIT)
    tags = srv.storage.storage.get_replay(summary.game_id)["tags"]  # type: ignore[index]
    assert (tags["Seat1"], tags["Seat1Hello"], tags["Seat2"], tags["Seat2Hello"]) == \
        ("a", "Alice the bot", "b", "b-2.0")
