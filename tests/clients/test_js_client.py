"""Runs the JavaScript client's own tests (node's built-in runner) so CI runs them too, and
plays the JS example bot on a real referee through an inherited socket (fd:N), the way a
sandboxed bot is connected."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from client_helpers import fd_to_referee, sandbox_env
from maag.server.net.minibot import MiniBot
from maag.server.net.server import RefereeServer, ServerConfig
from maag.server.referee.clock import TimeControl
from maag.server.storage.base import SQLiteStorage

JS = Path(__file__).resolve().parents[2] / "clients" / "js"


def node() -> str:
    exe = shutil.which("node")
    if exe is None:
        if os.environ.get("CI", "").lower() not in ("", "0", "false", "no"):
            pytest.fail("node is not installed (the JS client's tests need Node.js >= 18)")
        pytest.skip("node is not installed")
    return exe


def test_js_client_suite() -> None:
    r = subprocess.run([node(), "--test", "test/"], cwd=JS, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "# fail 0" in r.stdout


async def test_js_bot_plays_a_referee_game_over_an_inherited_fd(tmp_path: Path) -> None:
    exe = node()
    srv = RefereeServer(ServerConfig(port=0, auto_pair=False, game="nim", tc=TimeControl.parse("2s")),
                        SQLiteStorage(tmp_path / "referee.sqlite3"))
    await srv.start()
    srv.add_token("js-token", "js")
    srv.add_token("opp-token", "opp")
    opponent = MiniBot("127.0.0.1", srv.port, "opp-token", quiet=True)
    opp = asyncio.create_task(opponent.run())
    sock, relay = await fd_to_referee(srv.port)
    fd = sock.fileno()
    (tmp_path / "scratch").mkdir()
    bot = await asyncio.create_subprocess_exec(
        exe, str(JS / "random_bot.js"), "-", "-", "1", cwd=JS, pass_fds=(fd,),
        env=sandbox_env(tmp_path / "scratch", f"fd:{fd}", "js-token", "js"),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    sock.close()
    try:
        summary = await asyncio.wait_for(srv.request_game("js", "opp"), 60)
        assert summary.reason == "rules", summary
        out, err = await asyncio.wait_for(bot.communicate(), 60)
        assert bot.returncode == 0, err.decode()[-3000:]
        assert "js-random: 1 games" in out.decode(), out.decode()
    finally:
        if bot.returncode is None:
            bot.kill()
            await bot.wait()
        relay.cancel()
        opponent.close()
        opp.cancel()
        await srv.stop()
