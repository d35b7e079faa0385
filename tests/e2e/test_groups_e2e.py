"""The grouped legal actions over real sockets: a Python SDK bot that asks for them
(`want_groups`) plays whole conquest games against a bundled agent, both processes, moving
only by the groups the referee sends (the thesis's per-territory decisions, spec §8), and
never has an action refused. A bot that does not ask gets none, and neither does a bot of a
game without groups."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from maag.server.referee.clock import TimeControl

from .conftest import WAIT, MakeServer, spawn_agent, stop_process, token_for

# Each prompt: the first option of the first group (largest attack first, then the capital's
# reinforcement), or end_phase once no group is left. Every option's units have not moved,
# so each prompt moves at least one unit and a phase ends.
BOT = """
import json, sys
from maag.clients import Bot, TurnResult, run_bot_blocking

class ByGroups(Bot):
    name = "by-groups"
    games = ("conquest", "heroes")
    want_groups = True
    prompts = with_groups = refused = offered = nones = 0
    def choose_turn(self, observation, limit):
        ByGroups.prompts += 1
        groups = observation.groups
        ByGroups.nones += groups is None
        conquest = self.game.game == "conquest"
        assert groups is not None or not conquest, "conquest sends groups"
        if not groups:
            return TurnResult([{"type": "end_phase" if conquest else "end_turn"}])
        ByGroups.with_groups += 1
        ByGroups.offered += sum(len(g["options"]) for g in groups)
        return TurnResult(groups[0]["options"][0]["actions"])
    async def on_result(self, accepted, error, message):
        if error:
            ByGroups.refused += 1
            print("refused", error, message, file=sys.stderr)

stats = run_bot_blocking(ByGroups, sys.argv[1], token=sys.argv[2], stop_after=int(sys.argv[3]))
print(json.dumps({"games": len(stats.games), "prompts": ByGroups.prompts,
                  "with_groups": ByGroups.with_groups, "offered": ByGroups.offered,
                  "refused": ByGroups.refused, "nones": ByGroups.nones, "errors": len(stats.errors)}))
"""


async def _play(srv_port: int, token: str, games: int) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-c", BOT, f"127.0.0.1:{srv_port}", token, str(games),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)


async def _against(port: int, token: str, games: int, agent_token: str, agent: str,
                   timeout: float) -> tuple[dict[str, Any], str]:
    """The groups bot plays `games` games against the bundled `agent` (both processes);
    returns the counts it printed, and its stderr."""
    bot = await _play(port, token, games)
    other = await spawn_agent(port, agent_token, agent)
    try:
        out, err = await asyncio.wait_for(bot.communicate(), timeout)
        assert bot.returncode == 0, err.decode()[-3000:]
        return json.loads(out.decode().strip().splitlines()[-1]), err.decode()
    finally:
        await stop_process(bot)
        await stop_process(other)


async def test_a_bot_plays_conquest_by_the_groups_the_referee_sends(referee: MakeServer) -> None:
    srv = await referee(game="conquest", tc=TimeControl.parse("5s"), auto_pair=True)
    got, err = await _against(srv.port, token_for(srv, "by-groups"), 2, token_for(srv, "easy"),
                              "conquest-easy", 6 * WAIT)
    assert got["games"] == 2 and got["refused"] == got["errors"] == 0, (got, err[-2000:])
    # groups came with the prompts, several options each time on average
    assert got["nones"] == 0 and got["with_groups"] >= 20, got
    assert got["offered"] >= 2 * got["with_groups"], got
    games = srv.storage.storage.list_games(status="finished")
    assert len(games) == 2 and all(g.reason in ("rules", "turn_limit") for g in games)
    assert all(g.game == "conquest" and (g.plies or 0) > 20 for g in games)


async def test_a_game_without_groups_sends_none(referee: MakeServer) -> None:
    srv = await referee(game="heroes", game_config={"map": "a-tiny"}, tc=TimeControl.parse("2s"),
                        auto_pair=True)
    got, _ = await _against(srv.port, token_for(srv, "by-groups"), 1, token_for(srv, "rnd"), "random",
                            4 * WAIT)
    # the bot ends every turn at once: heroes has no groups, so none were sent
    assert got["games"] == 1 and got["prompts"] >= 1 and got["nones"] == got["prompts"], got
