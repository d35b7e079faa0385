"""The C example bot (clients/c/random_bot.c): it compiles without a warning, and, built
under AddressSanitizer and UBSan, plays whole games of heroes and conquest against bundled
agents on a live referee, every frame of the traffic fitting the protocol's JSON Schema. CI
installs its JSON library (Debian's libcjson-dev): there a missing library fails the test."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from maag.server.referee.clock import TimeControl

from .conftest import WAIT, MakeServer, spawn_agent, stop_process, token_for
from .test_schema_e2e import Recorder, check_frames

SOURCE = Path(__file__).resolve().parents[2] / "clients" / "c" / "random_bot.c"


def build(out: Path, *flags: str) -> Path:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None or not Path("/usr/include/cjson/cJSON.h").exists():
        why = "the C bot needs a C compiler and cJSON (apt-get install libcjson-dev)"
        if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):  # as tests/conftest.py
            pytest.fail(why)
        pytest.skip(why)
    r = subprocess.run([cc, "-O2", "-Wall", "-Wextra", "-Werror", *flags, "-o", str(out), str(SOURCE),
                        "-lcjson"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return out


def test_the_c_bot_compiles_without_a_warning(tmp_path: Path) -> None:
    assert build(tmp_path / "random_bot").exists()


@pytest.mark.parametrize(("game", "config", "opponent"), [("heroes", {"map": "a-tiny"}, "greedy-action"),
                                                        ("conquest", {}, "conquest-easy")])
async def test_the_c_bot_plays_whole_games(referee: MakeServer, tmp_path: Path, game: str,
                                           config: dict[str, str], opponent: str) -> None:
    exe = build(tmp_path / "random_bot", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all")
    srv = await referee(game=game, game_config=config, tc=TimeControl.parse("5s"), auto_pair=True)
    rec = Recorder(srv.port)
    port = await rec.start()
    bot = await asyncio.create_subprocess_exec(
        str(exe), f"127.0.0.1:{port}", token_for(srv, "c-random"), "2", game,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    agent = await spawn_agent(port, token_for(srv, "agent"), opponent, "--budget-ms", "50")
    try:
        out, err = await asyncio.wait_for(bot.communicate(), 6 * WAIT)
        assert bot.returncode == 0, (out.decode()[-2000:], err.decode()[-3000:])
        assert "c-random: 2 games" in out.decode() and "refused" not in err.decode(), err.decode()
        await asyncio.sleep(0.2)
        seen = check_frames(rec, game)
        assert seen["game_over"] == 4 and seen["act"] > 4, seen
        games = srv.storage.storage.list_games(status="finished")
        assert len(games) == 2 and {tuple(sorted(g.seats)) for g in games} == {("agent", "c-random")}
        assert all(g.reason in ("rules", "turn_limit") for g in games)
    finally:
        await stop_process(bot)
        await stop_process(agent)
        await rec.stop()
