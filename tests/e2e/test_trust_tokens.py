"""Tokens: revoked at once on every server that shares the database, and never on a bot
process's command line.

- Two referees on one database, a bot connected to each with the same stored token; `maag
  bot add NAME --replace` (the command line, a third process) revokes it: both connections
  get `auth_failed` and are closed, the old token is refused by both, the new one works.
- Bundled agents started by maag receive their token in $MAAG_TOKEN: it is not in any
  process's command line (what `ps` shows every user), and the bot still logs in.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from maag.server.compete.match import BotProcess

from .conftest import WAIT, MakeServer, Raw, until


def maag_bot_add(db: Path, name: str, *extra: str) -> str:
    r = subprocess.run([sys.executable, "-m", "maag.server", "bot", "add", name, "--db", str(db), *extra],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip().splitlines()[-1]


async def test_a_revoked_token_is_refused_and_its_connections_closed_on_every_server(
        referee: MakeServer, tmp_path: Path) -> None:
    db = tmp_path / "shared.sqlite3"
    old = maag_bot_add(db, "alice")
    # Two connections allowed: the limit is counted across the referees on one database.
    a = await referee(db, token_check_s=0.2, max_connections_per_bot=2)
    b = await referee(db, token_check_s=0.2, max_connections_per_bot=2)
    on_a, on_b = await Raw.connect(a.port), await Raw.connect(b.port)
    await on_a.hello(old, "alice")
    await on_b.hello(old, "alice")

    new = maag_bot_add(db, "alice", "--replace")

    for raw in (on_a, on_b):
        got = await raw.closed(timeout=WAIT)
        assert [m["code"] for m in got if m["type"] == "error"] == ["auth_failed"], got
    for srv in (a, b):
        await until(lambda srv=srv: not any(c.bot == "alice" for c in srv.clients))  # type: ignore[misc]
        again = await Raw.connect(srv.port)
        again.send({"type": "hello", "name": "alice", "token": old, "games": ["heroes"]})
        assert [m["code"] for m in await again.closed() if m["type"] == "error"] == ["auth_failed"]
        fresh = await Raw.connect(srv.port)
        assert (await fresh.hello(new, "alice"))["bot"] == "alice"
        fresh.close()


async def test_a_token_is_checked_on_every_hello_not_cached(referee: MakeServer, tmp_path: Path) -> None:
    db = tmp_path / "one.sqlite3"
    old = maag_bot_add(db, "bob")
    srv = await referee(db, token_check_s=3600)  # the watch loop out of the way: hello alone
    first = await Raw.connect(srv.port)
    await first.hello(old, "bob")
    first.close()
    await until(lambda: not any(c.bot == "bob" for c in srv.clients))
    maag_bot_add(db, "bob", "--replace")
    again = await Raw.connect(srv.port)
    again.send({"type": "hello", "name": "bob", "token": old, "games": ["heroes"]})
    assert [m["code"] for m in await again.closed() if m["type"] == "error"] == ["auth_failed"]


def _cmdlines() -> list[str]:
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            raw = Path(f"/proc/{pid}/cmdline").read_bytes()
            out.append(raw.replace(b"\0", b" ").decode(errors="replace"))
        except OSError:
            pass
    return out


async def test_bundled_bots_get_their_token_from_the_environment(referee: MakeServer, tmp_path: Path) -> None:
    srv = await referee()
    procs = []
    for i, spec in enumerate(("random", "greedy-action")):
        token = f"secret_token_{i}_" + os.urandom(6).hex()
        srv.add_token(token, spec)
        p = BotProcess(spec, spec, token, 1, tmp_path / f"{spec}.log")
        p.start("127.0.0.1", srv.port)
        procs.append((p, token))
    try:
        await until(lambda: {c.bot for c in srv.clients} >= {"random", "greedy-action"})
        lines = _cmdlines()
        for p, token in procs:
            assert p.proc is not None and p.proc.poll() is None
            assert not any(token in line for line in lines), "a token is on a command line"
    finally:
        for p, _ in procs:
            p.stop()
    await asyncio.sleep(0)


async def test_a_hello_with_two_tokens_is_refused_over_the_socket(referee: MakeServer,
                                                                  tmp_path: Path) -> None:
    db = tmp_path / "dup.sqlite3"
    good = maag_bot_add(db, "carol")
    srv = await referee(db)
    raw = await Raw.connect(srv.port)
    raw.send_raw(('{"type":"hello","v":1,"name":"c","token":"wrong","games":["heroes"],'
                  f'"token":"{good}"}}\n').encode())
    got = await raw.closed()
    assert [m["code"] for m in got if m["type"] == "error"] == ["bad_field"]
    assert not any(c.bot == "carol" for c in srv.clients)
