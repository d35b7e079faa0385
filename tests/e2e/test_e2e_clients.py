"""The client SDKs against the real referee over real sockets: a Node.js bot process
(clients/js/random_bot.js) plays a Python SDK bot process (the maag.clients docstring's
example, as the README quotes it)."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from pathlib import Path

import pytest
from maag.server.referee.clock import TimeControl

from .conftest import WAIT, MakeServer, stop_process, token_for

REPO = Path(__file__).resolve().parents[2]


def example_bot(tmp_path: Path) -> Path:
    """The module docstring's example bot, as a script."""
    import maag.clients

    doc = maag.clients.__doc__ or ""
    block = doc.split("::\n\n", 1)[1].split("\n\n`choose_turn`", 1)[0]
    path = tmp_path / "random_bot.py"
    path.write_text("\n".join(line[4:] for line in block.splitlines()) + "\n")
    return path


async def test_js_bot_plays_the_python_sdk_example(referee: MakeServer, tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    srv = await referee(game_config={"map": "a-tiny"}, tc=TimeControl.parse("5s"), auto_pair=True)
    address = f"127.0.0.1:{srv.port}"
    js = await asyncio.create_subprocess_exec(
        node, str(REPO / "clients" / "js" / "random_bot.js"), address, token_for(srv, "js-random"), "2",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    py = await asyncio.create_subprocess_exec(
        sys.executable, str(example_bot(tmp_path)), address, token_for(srv, "py-random"),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        out, err = await asyncio.wait_for(js.communicate(), 4 * WAIT)
        assert js.returncode == 0, err.decode()
        assert "js-random: 2 games" in out.decode()
        games = [g for g in srv.storage.storage.list_games(status="finished")
                 if g.reason in ("rules", "turn_limit")]
        assert len(games) == 2
        assert {tuple(sorted(g.seats)) for g in games} == {("js-random", "py-random")}
        assert py.returncode is None  # still connected, waiting for more games
    finally:
        await stop_process(js)
        await stop_process(py)


@pytest.mark.parametrize(("game", "opponent"), [("cards", "greedy-action"), ("conquest", "conquest-hard")])
async def test_js_bot_plays_another_game_against_a_bundled_agent(referee: MakeServer, game: str,
                                                                 opponent: str) -> None:
    """The JavaScript client knows no rules of any game: the same bot plays cards (hidden hands
    and chance inside a turn) and conquest (dice, two phases a turn) against a bundled agent
    (a process)."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    srv = await referee(game=game, tc=TimeControl.parse("5s"), auto_pair=True)
    address = f"127.0.0.1:{srv.port}"
    js = await asyncio.create_subprocess_exec(
        node, str(REPO / "clients" / "js" / "random_bot.js"), address, token_for(srv, "js-random"), "2",
        game, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    agent = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "maag.server", "bot", "run", opponent, "--connect", address,
        "--token", token_for(srv, "greedy"), stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL)
    try:
        out, err = await asyncio.wait_for(js.communicate(), 4 * WAIT)
        assert js.returncode == 0, err.decode()
        assert "js-random: 2 games" in out.decode()
        games = srv.storage.storage.list_games(status="finished")
        assert len(games) == 2 and all(g.reason in ("rules", "turn_limit") for g in games)
        assert {tuple(sorted(g.seats)) for g in games} == {("greedy", "js-random")}
        assert all(g.game == game and (g.plies or 0) > 10 for g in games)
    finally:
        await stop_process(js)
        await stop_process(agent)
