"""A Python bot installs and runs without the C core: `MAAG_SDK_ONLY=1 pip install .`
installs maag.clients and maag.protocol alone, compiling nothing, and the README's example
bot, run by an interpreter that sees only that install (and msgpack), plays a whole game
against a real referee over TCP."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from pathlib import Path

import msgpack
from maag.server.net.minibot import MiniBot
from maag.server.net.server import RefereeServer, ServerConfig
from maag.server.referee.clock import TimeControl
from maag.server.storage.base import SQLiteStorage

ROOT = Path(__file__).resolve().parents[2]

BOT = """
import random, sys
from maag.clients import Bot, TurnResult, run_bot_blocking

class RandomBot(Bot):
    want_legal = True
    def choose_turn(self, observation, limit):
        return TurnResult([random.choice(observation.legal)])

stats = run_bot_blocking(RandomBot, sys.argv[1], token=sys.argv[2], stop_after=1)
loaded = sorted(m for m in sys.modules if m.startswith("maag") or m in ("cffi", "numpy"))
print("games", len(stats.games), "modules", ",".join(loaded))
"""


def install_sdk(target: Path, tmp: Path) -> None:
    src = tmp / "src"  # a copy, so the build leaves nothing in the checkout
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(".git", ".venv", "build", "*.egg-info", "*.so",
                                                             "__pycache__", "tests"))
    env = {**os.environ, "MAAG_SDK_ONLY": "1"}
    r = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                        "--target", str(target), str(src)], capture_output=True, text=True, env=env,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_sdk_alone_installs_without_compiling_and_plays_a_game(tmp_path: Path) -> None:
    target = tmp_path / "site"
    install_sdk(target, tmp_path)
    files = [p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file()]
    assert any(f.startswith("maag/clients/") for f in files)
    assert any(f.startswith("maag/protocol/") for f in files)
    assert not [f for f in files if f.endswith((".so", ".c", ".h"))], "something was compiled or shipped in C"
    others = ("maag/engine/", "maag/server/", "maag/bots/", "maag/lab/", "maag/stats/", "maag/rl/")
    assert not [f for f in files if f.startswith(others)]
    assert not [f for f in files if f.startswith("bin/")], "the maag command needs the server"
    [meta] = target.glob("maag-*.dist-info/METADATA")
    requires = [line for line in meta.read_text().splitlines() if line.startswith("Requires-Dist:")]
    assert [r for r in requires if "extra ==" not in r] == ["Requires-Dist: msgpack>=1.0"], requires
    shutil.copytree(Path(msgpack.__file__).parent, target / "msgpack")  # the SDK's one dependency

    async def game() -> str:
        with_db = tmp_path / "referee.sqlite3"
        srv = RefereeServer(ServerConfig(port=0, auto_pair=False, tc=TimeControl.parse("1s"),
                                         game_config={"map": "a-tiny"}), SQLiteStorage(with_db))
        await srv.start()
        srv.add_token("sdk-token", "sdk")
        srv.add_token("opp-token", "opp")
        opponent = MiniBot("127.0.0.1", srv.port, "opp-token", quiet=True)
        opp = asyncio.create_task(opponent.run())
        # -S: no site-packages, so the full maag installed there is invisible to the bot.
        bot = await asyncio.create_subprocess_exec(
            sys.executable, "-S", "-c", BOT, f"127.0.0.1:{srv.port}", "sdk-token",
            env={"PYTHONPATH": str(target), "PATH": os.environ.get("PATH", "")},
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        try:
            await asyncio.wait_for(_until_connected(srv, "sdk"), 60)
            summary = await asyncio.wait_for(srv.request_game("sdk", "opp"), 120)
            assert summary.reason in ("rules", "turn_limit"), summary
            out, err = await asyncio.wait_for(bot.communicate(), 60)
            assert bot.returncode == 0, err.decode()[-3000:]
            return out.decode()
        finally:
            if bot.returncode is None:
                bot.kill()
            opponent.close()
            opp.cancel()
            await srv.stop()

    out = asyncio.run(game())
    games, modules = out.split("modules")
    assert games.split() == ["games", "1"], out
    loaded = set(modules.strip().split(","))
    assert "maag.clients" in loaded and "maag.protocol" in loaded
    assert not {m for m in loaded if m.startswith(("maag.engine", "maag.server", "maag.bots"))} | \
        ({"cffi", "numpy"} & loaded), loaded


async def _until_connected(srv: RefereeServer, bot: str) -> None:
    while not any(c.bot == bot for c in srv.clients):
        await asyncio.sleep(0.02)


def test_a_bots_default_game_is_the_registrys_default() -> None:
    """The SDK cannot ask the registry (it runs without the engine), so Bot.games writes the
    default game down: it must stay the registry's default()."""
    from maag.clients import Bot
    from maag.engine import registry

    assert Bot.games == (registry.default(),)
