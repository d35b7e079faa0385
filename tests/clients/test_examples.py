"""The example bot packages of examples/: their manifests read as the sandbox reads them; the
Python bot's nim rule; and each bot, started as the sandbox starts it (its package folder
read-only as its working folder, an environment of PATH, HOME, TMPDIR, LANG and MAAG_*
only, the referee connection an inherited socket, MAAG_CONNECT=fd:N), plays a whole game on
a real referee and leaves when the connection closes."""

from __future__ import annotations

import asyncio
import importlib.util
import itertools
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from client_helpers import fd_to_referee, sandbox_env
from maag.server.net.minibot import MiniBot
from maag.server.net.server import RefereeServer, ServerConfig
from maag.server.referee.clock import TimeControl
from maag.server.sandbox.package import BotPackage
from maag.server.storage.base import SQLiteStorage

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
WAIT = 60.0


def test_the_manifests_load_as_the_sandbox_reads_them() -> None:
    py = BotPackage.from_folder(EXAMPLES / "python-bot")
    assert (py.name, py.argv, py.build, py.threads) == ("python-example", ["python3", "bot.py"], None, 1)
    c = BotPackage.from_folder(EXAMPLES / "c-bot")
    assert (c.name, c.argv, c.build, c.threads) == ("c-example", ["./bot"], "make", 1)
    for folder in ("python-bot", "c-bot"):
        assert "maag match examples/" + folder in (EXAMPLES / folder / "README.md").read_text()


def python_bot() -> ModuleType:
    spec = importlib.util.spec_from_file_location("example_python_bot", EXAMPLES / "python-bot" / "bot.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_moore_rule_and_the_nim_plan() -> None:
    bot = python_bot()
    for piles in itertools.product(range(8), repeat=3):  # k=1 is classical Nim: a zero nim-sum
        assert bot.moore_lost(piles, 1) == (piles[0] ^ piles[1] ^ piles[2] == 0)
    assert bot.moore_lost([3, 3, 3], 2) and not bot.moore_lost([3, 4, 5], 2)
    k = 2
    for piles in itertools.product(range(6), repeat=3):
        if not any(piles):
            continue
        state = {"piles": list(piles), "ap": k, "ap_per_turn": k, "taken": [False] * 3}
        plan = bot.plan_nim(state)
        assert plan is None or len({p for p, _ in plan}) == len(plan) <= k
        assert all(1 <= c <= piles[p] for p, c in plan or [])
        rest = bot.after(piles, plan or [])
        if bot.clearable(piles, k):
            assert not any(rest), (piles, plan)  # takes everything and wins
        elif not bot.moore_lost(piles, k):
            # with at most k=2 takes a lost position for the opponent is always reachable here
            assert bot.moore_lost(rest, k) and any(rest), (piles, plan)
        else:
            assert plan is None, (piles, plan)  # lost already: pass


def c_toolchain() -> None:
    if shutil.which("gcc") is None or shutil.which("make") is None or \
            not Path("/usr/include/cjson/cJSON.h").exists():
        why = "the C example needs gcc, make and cJSON (apt-get install libcjson-dev)"
        if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
            pytest.fail(why)
        pytest.skip(why)


async def play_one_game(package: Path, argv: list[str], bot_name: str, tmp_path: Path) -> str:
    """Run `argv` as the sandbox would (its package read-only as its working folder, the
    referee an inherited fd), play one nim game against the referee's random bot, close the
    connection, and return the bot's stderr once it has exited."""
    srv = RefereeServer(ServerConfig(port=0, auto_pair=False, game="nim", tc=TimeControl.parse("2s")),
                        SQLiteStorage(tmp_path / "referee.sqlite3"))
    await srv.start()
    srv.add_token("bot-token", bot_name)
    srv.add_token("opp-token", "opp")
    opponent = MiniBot("127.0.0.1", srv.port, "opp-token", quiet=True)
    opp = asyncio.create_task(opponent.run())
    sock, relay = await fd_to_referee(srv.port)
    fd = sock.fileno()
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    package.chmod(0o555)
    proc = await asyncio.create_subprocess_exec(
        *argv, cwd=package, pass_fds=(fd,), env=sandbox_env(scratch, f"fd:{fd}", "bot-token", bot_name),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    sock.close()
    try:
        summary = await asyncio.wait_for(srv.request_game(bot_name, "opp"), WAIT)
        assert summary.reason == "rules", summary
        relay.cancel()  # the host closes its end: the bot leaves
        out, err = await asyncio.wait_for(proc.communicate(), WAIT)
        assert proc.returncode == 0, (out.decode()[-2000:], err.decode()[-3000:])
        return err.decode()
    finally:
        package.chmod(0o755)
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        relay.cancel()
        opponent.close()
        opp.cancel()
        await srv.stop()


async def test_the_python_example_plays_over_an_inherited_fd(tmp_path: Path) -> None:
    package = tmp_path / "python-bot"
    shutil.copytree(EXAMPLES / "python-bot", package, ignore=shutil.ignore_patterns("__pycache__"))
    err = await play_one_game(package, [sys.executable, "bot.py"], "python-example", tmp_path)
    assert "python-example: 1 game(s)" in err, err
    assert sorted(p.name for p in package.iterdir()) == ["README.md", "bot.py", "maag-bot.toml"]


async def test_the_c_example_builds_with_make_and_plays_over_an_inherited_fd(tmp_path: Path) -> None:
    c_toolchain()
    package = tmp_path / "c-bot"
    shutil.copytree(EXAMPLES / "c-bot", package, ignore=shutil.ignore_patterns("bot"))
    r = subprocess.run(["make", "CFLAGS=-O2 -Wall -Wextra -Werror"], cwd=package, capture_output=True,
                       text=True, timeout=120, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    assert r.returncode == 0, r.stdout + r.stderr
    assert (package / "bot").is_file()
    err = await play_one_game(package, ["./bot"], "c-example", tmp_path)
    assert "c-example: 1 game(s)" in err, err
