"""The C example bot (clients/c/random_bot.c): it compiles without a warning, and, built
under AddressSanitizer and UBSan, plays whole games of heroes and conquest against bundled
agents on a live referee, every frame of the traffic fitting the protocol's JSON Schema;
it connects as well through an inherited socket (fd:N, from $MAAG_CONNECT, as a sandboxed
bot does) and a Unix socket (unix:PATH), and refuses a bad address clearly. CI installs its
JSON library (Debian's libcjson-dev): there a missing library fails the test."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest
from maag.server.referee.clock import TimeControl

from .conftest import WAIT, MakeServer, spawn_agent, stop_process, token_for
from .test_schema_e2e import LINE_LIMIT, Recorder, check_frames

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
        # Both bots asked to hear the other's turn once (the C bot, and the SDK's agent): no
        # action event, and every action of the agent reached the C bot's on_action.
        assert [m["events"] for way, m in rec.frames if m["type"] == "hello"] == ["turn", "turn"]
        assert seen["turn_events"] > 2 and not [m for _, m in rec.frames if m.get("kind") == "action"]
        theirs = 0
        for g in games:
            replay = srv.storage.storage.get_replay(g.id)
            assert replay is not None
            theirs += sum(1 for a in replay["actions"] if g.seats[a["seat"]] == "agent")
        assert f"decided, {theirs} actions of the opponent seen" in out.decode(), out.decode()
    finally:
        await stop_process(bot)
        await stop_process(agent)
        await rec.stop()


@pytest.mark.parametrize("how", ["fd", "unix"])
async def test_the_c_bot_connects_through_an_inherited_fd_or_a_unix_socket(
        referee: MakeServer, tmp_path: Path, how: str) -> None:
    """fd: the bot gets one end of a socket pair as an inherited descriptor, its address and
    token and game in the environment only (MAAG_CONNECT=fd:N, as a sandbox hands them); unix:
    the address on its command line. The other end goes through the recording proxy to the
    referee, so every frame is still checked against the schema."""
    exe = build(tmp_path / "random_bot", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all")
    srv = await referee(game="nim", tc=TimeControl.parse("5s"), auto_pair=True)
    rec = Recorder(srv.port)
    await rec.start()  # its TCP port stays unused: the bot comes in through fd or unix
    token = token_for(srv, "c-random")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    unix_server: asyncio.AbstractServer | None = None
    if how == "fd":
        ours, theirs = socket.socketpair()
        reader, writer = await asyncio.open_connection(sock=ours, limit=LINE_LIMIT)
        serving = asyncio.create_task(rec._serve(reader, writer))  # waits for the bot's greeting
        fd = theirs.fileno()
        sandbox_env = {**env, "MAAG_CONNECT": f"fd:{fd}", "MAAG_TOKEN": token, "MAAG_GAME": "nim",
                       "MAAG_BOT": "c-random"}
        bot = await asyncio.create_subprocess_exec(
            str(exe), "-", "-", "2", pass_fds=(fd,), env=sandbox_env,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        theirs.close()  # the bot holds the only copy now
        await asyncio.wait_for(serving, WAIT)
    else:
        path = tmp_path / "referee.sock"
        unix_server = await asyncio.start_unix_server(rec._serve, str(path), limit=LINE_LIMIT)
        bot = await asyncio.create_subprocess_exec(
            str(exe), f"unix:{path}", token, "2", "nim", env=env,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    agent = await spawn_agent(srv.port, token_for(srv, "agent"), "random", "--budget-ms", "20")
    try:
        out, err = await asyncio.wait_for(bot.communicate(), 6 * WAIT)
        assert bot.returncode == 0, (out.decode()[-2000:], err.decode()[-3000:])
        assert "c-random: 2 games" in out.decode() and "refused" not in err.decode(), err.decode()
        await asyncio.sleep(0.2)
        seen = check_frames(rec, "nim")
        assert seen["game_over"] == 2 and seen["act"] >= 2, seen  # the proxy sees the C bot's side only
        games = srv.storage.storage.list_games(status="finished")
        assert len(games) == 2 and {tuple(sorted(g.seats)) for g in games} == {("agent", "c-random")}
    finally:
        await stop_process(bot)
        await stop_process(agent)
        if unix_server is not None:
            unix_server.close()
        await rec.stop()


def test_the_c_bot_refuses_bad_addresses_clearly(tmp_path: Path) -> None:
    exe = build(tmp_path / "random_bot")
    dgram, other = socket.socketpair(type=socket.SOCK_DGRAM)
    try:
        cases = [
            (["fd:x", "t"], {}, "fd:N needs a file descriptor number"),
            (["fd:-3", "t"], {}, "fd:N needs a file descriptor number"),
            (["fd:0", "t"], {}, "fd:0 is not an open socket"),  # stdin: /dev/null
            (["fd:999", "t"], {}, "fd:999 is not an open socket"),
            ([], {"MAAG_CONNECT": f"fd:{dgram.fileno()}", "MAAG_TOKEN": "t"},
             f"fd:{dgram.fileno()} is not a stream socket"),
            (["unix:", "t"], {}, "unix:PATH needs a path"),
            (["unix:" + "x" * 200, "t"], {}, "unix:PATH needs a path"),
            ([f"unix:{tmp_path / 'none.sock'}", "t"], {}, "cannot connect to unix:"),
            (["localhost", "t"], {}, "must be HOST:PORT, unix:PATH or fd:N"),
            ([], {"MAAG_TOKEN": "t"}, "usage:"),
        ]
        for args, env, message in cases:
            r = subprocess.run([str(exe), *args], env={"PATH": os.environ.get("PATH", ""), **env},
                               stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30,
                               pass_fds=(dgram.fileno(),))
            assert r.returncode in (1, 2) and message in r.stderr, (args, env, r.returncode, r.stderr)
    finally:
        dgram.close()
        other.close()
