"""`maag bot run AGENT`: bundled agents as bot processes on the real referee."""

from __future__ import annotations

import asyncio
import sys

from maag.server.referee.clock import TimeControl

from .conftest import WAIT, MakeServer, spawn_agent, stop_process, token_for


async def test_two_agents_play_each_other(referee: MakeServer) -> None:
    srv = await referee(game_config={"map": "a-tiny"}, tc=TimeControl.parse("1s"))
    a = await spawn_agent(srv.port, token_for(srv, "greedy"), "greedy-action", "--games", "2", "--json-lines",
                          capture=True)
    b = await spawn_agent(srv.port, token_for(srv, "mcts"), "mcts", "--param", "rollout_turns=1",
                          "--budget-ms", "20", "--games", "2", capture=True)
    try:
        for i in range(2):
            summary = await asyncio.wait_for(srv.request_game(*(("greedy", "mcts") if i == 0 else
                                                                 ("mcts", "greedy"))), 4 * WAIT)
            assert summary.reason in ("rules", "turn_limit"), summary
        for p in (a, b):
            _, err = await asyncio.wait_for(p.communicate(), WAIT)
            assert p.returncode == 0, err.decode()
            assert b"2 game(s)" in err
        games = srv.storage.storage.list_games(status="finished")
        assert len(games) == 2
    finally:
        await stop_process(a)
        await stop_process(b)


async def test_an_unknown_agent_or_parameter_is_refused_at_once() -> None:
    for args in (["no-such-agent"], ["mcts", "--param", "nonsense=1"]):
        p = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "maag.server", "bot", "run", *args, "--connect", "127.0.0.1:9",
            "--token", "t", stderr=asyncio.subprocess.PIPE)
        _, err = await asyncio.wait_for(p.communicate(), WAIT)
        assert p.returncode == 2, err
        assert b"maag bot run:" in err
