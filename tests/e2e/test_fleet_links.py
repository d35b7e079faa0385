"""A bot that reconnects to another referee of the fleet in the middle of a game keeps its
game: the referee it lands on links its seat to the game's host (fleet/links.py). Two real
`maag serve` processes on one PostgreSQL, each on its own port; the opponent is a minibot
process on the first; the bot that moves is this test's own client, which plays a few
actions on one referee, drops its connection, says hello to the other and plays the game to
its end there. 50 trials."""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
import time
from pathlib import Path

from maag.engine import registry
from maag.protocol import (
    Act,
    Connection,
    ConnectionClosed,
    Error,
    GameOver,
    GameStart,
    Greeting,
    Hello,
    Role,
    Welcome,
    YourTurn,
    read_events,
)
from maag.server.storage.base import open_storage

from .conftest import stop_process
from .test_fleet_takeover import q

TRIALS = 50


def serve(url: str, tmp: Path, n: int) -> tuple[subprocess.Popen[bytes], int]:
    port_file = tmp / f"ref{n}.port"
    args = ["--db", url, "--port", "0", "--port-file", str(port_file), "--map", "a-tiny", "--option",
            "turn_limit=6", "--tc", "5s", "--grace", "20s", "--lease", "2", "--max-games-per-minute", "0",
            "--spill-dir", str(tmp / f"spill{n}")]
    p = subprocess.Popen([sys.executable, "-m", "maag.server", "serve", *args, "-q"],  # noqa: S603
                         stdout=subprocess.DEVNULL, stderr=open(tmp / f"ref{n}.log", "wb"))  # noqa: SIM115
    deadline = time.monotonic() + 30
    while not (port_file.exists() and port_file.read_text().strip()):
        assert p.poll() is None and time.monotonic() < deadline, "the referee did not start"
        time.sleep(0.05)
    return p, int(port_file.read_text())


class Mover:
    """Plays random legal actions; `moves` actions into its game, leaves for `port_b`."""

    def __init__(self, token: str, rng: random.Random) -> None:
        self.token, self.rng = token, rng
        self.game_ids: list[str] = []
        self.over: dict[str, GameOver] = {}
        self.errors: list[str] = []

    async def session(self, port: int, *, leave_after: int | None, game: str | None) -> str | None:
        """One connection: plays until game_over (returns None) or, after `leave_after` of its
        actions, drops the connection (returns the game's id)."""
        while True:  # (refused while the old referee still counts its last connection)
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            conn = Connection(Role.CLIENT)
            writer.write(conn.send(Greeting(encoding="msgpack")))
            writer.write(conn.send(Hello(name="mover", token=self.token, games=registry.names(),
                                         want_legal=True)))
            acted = 0
            async for ev in read_events(reader, conn):
                if isinstance(ev, ConnectionClosed):
                    break
                if isinstance(ev, Error) and getattr(ev, "game_id", None) is None:
                    if ev.code == "already_connected":
                        break
                    self.errors.append(f"{ev.code}: {ev.message}")
                elif isinstance(ev, Welcome):
                    pass
                elif isinstance(ev, GameStart):
                    if game is not None and ev.game_id != game:
                        self.errors.append(f"given game {ev.game_id}, expected {game}")
                    if ev.game_id not in self.game_ids:
                        self.game_ids.append(ev.game_id)
                elif isinstance(ev, YourTurn):
                    if leave_after is not None and acted >= leave_after:
                        writer.close()
                        return ev.game_id
                    assert ev.legal is not None
                    writer.write(conn.send(Act(game_id=ev.game_id, action=self.rng.choice(ev.legal))))
                    acted += 1
                elif isinstance(ev, GameOver):
                    self.over[ev.game_id] = ev
                    writer.close()
                    return None
            writer.close()
            await asyncio.sleep(0.05)


async def test_a_bot_that_reconnects_to_another_referee_keeps_its_game(postgres_db: str,
                                                                       tmp_path: Path) -> None:
    url = postgres_db
    st = open_storage(url)
    try:
        mover_token, opp_token = st.add_bot("mover"), st.add_bot("opponent")
    finally:
        st.close()
    (a, port_a), (b, port_b) = serve(url, tmp_path, 0), serve(url, tmp_path, 1)
    opponents = []
    try:
        opponents.append(await asyncio.create_subprocess_exec(  # on the first referee, where games start
            sys.executable, "-m", "maag.server.net.minibot", "--connect", f"127.0.0.1:{port_a}", "--token",
            opp_token, "--delay", "5", stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL))
        mover = Mover(mover_token, random.Random(7))
        kept = 0
        for trial in range(TRIALS):
            gid = await asyncio.wait_for(mover.session(port_a, leave_after=1 + trial % 3, game=None), 60)
            if gid is None:
                continue  # (the game ended before the bot left: not a trial)
            await asyncio.wait_for(mover.session(port_b, leave_after=None, game=gid), 60)
            over = mover.over.get(gid)
            assert over is not None, f"trial {trial}: no game_over for game {gid}"
            assert over.reason != "disconnect", f"trial {trial}: game {gid} lost by disconnect"
            kept += 1
        assert not mover.errors, mover.errors
        assert kept >= TRIALS * 0.8, kept  # (a few games may end before the bot leaves)
        rows = q(url, "SELECT g.id, r.reason FROM games g JOIN results r ON r.game_id = g.id "
                      "WHERE g.seat0 = 'mover' OR g.seat1 = 'mover'")
        reasons = {int(gid): reason for gid, reason in rows}
        for gid, over in mover.over.items():
            assert reasons[int(gid)] == over.reason, (gid, reasons.get(int(gid)), over.reason)
        print(f"\n{kept} of {TRIALS} trials: the game kept by a bot that reconnected to the other referee")
    finally:
        for o in opponents:
            await stop_process(o)
        for p in (a, b):
            p.kill()
            p.wait()
