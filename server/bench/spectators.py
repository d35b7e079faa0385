"""Spectators for `maag bench server --spectators N`: one process holding N WebSocket
spectators of a referee's web view (`maag serve --web`), plus one on the lobby.

Each spectator watches a running game (spectator i takes game i modulo the running games
the lobby last listed) until its final snapshot, then moves to another still listed (or
waits for the lobby's next push when none is): the load of N people following live games,
each pushed every change of its game (coalesced by the web view to four pushes a second at
most). Frames are counted, not decoded (a finished game's last snapshot is told by its
`result`), so that the spectators' own work stays small beside the referee's on the same
machine.

    python -m maag.server.bench.spectators URL N SECONDS    (prints one JSON object)
    python -m maag.server.bench.spectators URL N -          (driven through stdin, below)

With `-` the process is driven by `maag bench server`: it prints `ready` once the lobby's
socket is open, counts frames from the line `measure` on its stdin, and stops at the end of
its stdin. The bench starts the bots only after `ready` and sends `measure` when the bots
start measuring: at the lowest priority on a loaded machine the spectators can take seconds
to start, and a window of their own would then not be the bots' one.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time
from typing import Any

__all__ = ["watch"]


async def watch(url: str, n: int, seconds: float | None) -> dict[str, Any]:
    """Run `n` spectators of the web view at `url` and count for `seconds` once connected (None:
    as stdin says, see the module docstring); their counts."""
    import aiohttp

    stats = {"spectators": n, "frames": 0, "bytes": 0, "games_followed": 0, "gone": 0, "seconds": 0.0}
    running: list[str] = []
    lobby = {"changed": asyncio.Event()}  # set (and replaced) at each lobby push
    connected = asyncio.Event()

    async def follow_lobby(http: aiohttp.ClientSession) -> None:
        async with http.ws_connect(url + "/ws/lobby") as ws:
            connected.set()
            async for msg in ws:
                running[:] = [str(g["game_id"]) for g in json.loads(msg.data)["games"]]
                changed, lobby["changed"] = lobby["changed"], asyncio.Event()
                changed.set()

    async def spectator(http: aiohttp.ClientSession, i: int) -> None:
        # A person's page: it follows one game to its end, then its person picks another
        # from the list. A game that ended is crossed off the list this page holds (the
        # lobby's push comes within a second); when the list holds nothing still running,
        # the page waits for the next push instead of knocking at finished games.
        while True:
            if not running:
                await lobby["changed"].wait()
                continue
            gid = running[i % len(running)]
            async with http.ws_connect(f"{url}/ws/game/{gid}") as ws:
                async for msg in ws:
                    data = msg.data if isinstance(msg.data, str) else ""
                    stats["frames"] += 1
                    stats["bytes"] += len(data)
                    if '"type": "gone"' in data:
                        stats["gone"] += 1
                        break
                    if '"result": null' not in data:
                        stats["games_followed"] += 1
                        break
            if gid in running:
                running.remove(gid)

    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as http:
        tasks = [asyncio.ensure_future(follow_lobby(http))]
        tasks += [asyncio.ensure_future(spectator(http, i)) for i in range(n)]
        await asyncio.wait_for(connected.wait(), 120)
        if seconds is None:
            print("ready", flush=True)
            while (await asyncio.to_thread(sys.stdin.readline)).strip() not in ("measure", ""):
                pass
        for k in ("frames", "bytes", "games_followed", "gone"):
            stats[k] = 0
        t0 = time.monotonic()
        if seconds is None:
            await asyncio.to_thread(sys.stdin.read)  # until the end of stdin
        else:
            await asyncio.sleep(seconds)
        stats["seconds"] = time.monotonic() - t0
        for t in tasks:
            t.cancel()
        for t in tasks:
            with contextlib.suppress(BaseException):
                await t
    return stats


def main(argv: list[str]) -> int:
    url, n, seconds = argv[0], int(argv[1]), None if argv[2] == "-" else float(argv[2])
    print(json.dumps(asyncio.run(watch(url, n, seconds))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
