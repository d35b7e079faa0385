"""The bots' process of `maag bench server` (`python3 -m maag.server.bench.clients --client
PORT TOKENS WARMUP SECONDS MODE [EVENTS]`): random bots on as many connections as it has
tokens, that print `measuring` when their window opens, `stopped` when it closes, then their
counts as JSON (actions accepted, messages sent, round trips, errors). EVENTS: how they ask
to hear the opponent's actions (hello `events`), "turn" (once its turn ends, the default, as
the SDKs ask) or "action" (each as it is applied)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import struct
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

import msgpack

__all__ = ["LOGIN_TIMEOUT", "client_main"]

LOGIN_TIMEOUT = 60.0  # seconds for every bench bot to be logged in before the warm-up starts


class _Bot:
    def __init__(self, token: str, rng: random.Random, stats: dict[str, Any], mode: str,
                 events: str = "turn") -> None:
        self.token, self.rng, self.stats, self.mode, self.events = token, rng, stats, mode, events
        self.sent_at: dict[str, float] = {}
        self.games: dict[str, Any] = {}

    async def run(self, port: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"MAAG 2 msgpack\n")
        self._send(writer, {"type": "hello", "v": 2, "name": "bench", "token": self.token,
                            "games": ["heroes"], "want_legal": self.mode in ("act", "lean"),
                            "events": self.events})
        # Mode "lean": the act bot's moves at a fraction of its CPU, so that on a small machine
        # the referees, not their bots, bound the throughput (_read_lean).
        read = self._read_lean if self.mode == "lean" else partial(msgpack.unpackb, raw=False)
        buf = b""
        while True:
            data = await reader.read(1 << 16)
            if not data:
                return
            now = time.perf_counter()
            buf += data
            off = 0
            while len(buf) - off >= 4:
                n = struct.unpack_from(">I", buf, off)[0]
                if len(buf) - off - 4 < n:
                    break
                self._on(writer, read(buf[off + 4:off + 4 + n]), now)
                off += 4 + n
            buf = buf[off:]

    def _read_lean(self, frame: bytes) -> dict[str, Any]:
        """Of a frame, only the few keys the bot uses (the observation skipped unread), and of
        the legal list only the action it picks."""
        u = msgpack.Unpacker(raw=False)
        u.feed(frame)
        m: dict[str, Any] = {}
        for _ in range(u.read_map_header()):
            k = u.unpack()
            if k == "legal":
                count = u.read_array_header()
                pick = self.rng.randrange(count) if count else 0
                for i in range(count):
                    if i == pick:
                        m["legal"] = [u.unpack()]
                    else:
                        u.skip()
            elif k in ("type", "game_id", "accepted", "game", "config"):
                m[k] = u.unpack()
            else:
                u.skip()
        return m

    def _send(self, writer: asyncio.StreamWriter, msg: dict[str, Any]) -> None:
        body = msgpack.packb(msg)
        writer.write(struct.pack(">I", len(body)) + body)

    def _on(self, writer: asyncio.StreamWriter, m: dict[str, Any], now: float) -> None:
        t = m["type"]
        if t == "your_turn":
            gid = m["game_id"]
            sent = self.sent_at.pop(gid, None)
            if sent is not None and self.stats["measuring"]:
                self.stats["rtt"].append((now - sent) * 1000)
            if self.stats["measuring"]:
                self.stats["messages"] += 1
            if self.mode in ("act", "lean"):
                action = self.rng.choice(m["legal"])
                self._send(writer, {"type": "act", "v": 2, "game_id": gid, "action": action})
            else:
                self._send(writer, {"type": "turn", "v": 2, "game_id": gid, "actions": self._turn(gid, m)})
            self.sent_at[gid] = time.perf_counter()
        elif t == "game_start":
            from maag.engine import Game

            self.games[m["game_id"]] = Game(m["game"], m["config"])
        elif t == "welcome":
            self.stats["welcomed"] += 1
            if self.stats["welcomed"] == self.stats["bots"]:
                self.stats["all_welcomed"].set()
        elif t == "result":
            if self.stats["measuring"]:
                self.stats["actions"] += m["accepted"]
        elif t == "game_over":
            self.sent_at.pop(m["game_id"], None)
            self.games.pop(m["game_id"], None)
        elif t == "error":
            self.stats["errors"] += 1


    def _turn(self, gid: str, m: dict[str, Any]) -> list[dict[str, Any]]:
        """A uniformly random whole turn, played out on the engine's copy of the observation."""
        st = self.games[gid].state_from_json(m["observation"])
        plan = []
        while True:
            a = self.rng.choice(st.legal_actions())
            st.apply(a)
            plan.append(a.to_dict())
            if plan[-1]["type"] == "end_turn" or st.is_terminal:
                return plan


async def _client(port: int, tokens: list[str], warmup: float, seconds: float, mode: str,
                  events: str = "turn") -> dict[str, Any]:
    stats: dict[str, Any] = {"measuring": False, "actions": 0, "messages": 0, "rtt": [], "errors": 0,
                             "bots": len(tokens),
                             "welcomed": 0, "all_welcomed": asyncio.Event()}
    rng = random.Random(1)
    tasks = [asyncio.create_task(_Bot(t, random.Random(rng.random()), stats, mode, events).run(port))
             for t in tokens]
    # The warm-up starts once every bot is logged in: on a loaded machine connecting can take
    # longer than the warm-up itself, and the window would then measure bots still logging
    # in (a bot the referee refused is reported by its error count; the wait has a limit).
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(stats["all_welcomed"].wait(), LOGIN_TIMEOUT)
    await asyncio.sleep(warmup)
    stats["measuring"] = True
    print("measuring", flush=True)
    t0 = time.perf_counter()
    await asyncio.sleep(seconds)
    stats["measuring"] = False
    elapsed = time.perf_counter() - t0
    print("stopped", flush=True)
    for t in tasks:
        t.cancel()
    return {"actions": stats["actions"], "messages": stats["messages"], "seconds": elapsed,
            "rtt": stats["rtt"], "errors": stats["errors"]}


def client_main(argv: list[str]) -> int:
    port, tokens_file, warmup, seconds, mode = int(argv[0]), argv[1], float(argv[2]), float(argv[3]), argv[4]
    events = argv[5] if len(argv) > 5 else "turn"
    tokens = json.loads(Path(tokens_file).read_text())
    res = asyncio.run(_client(port, tokens, warmup, seconds, mode, events))
    print(json.dumps(res))
    return 0


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--client", nargs="+", required=True,
                   metavar="PORT TOKENS WARMUP SECONDS MODE [EVENTS]")
    sys.exit(client_main(p.parse_args().client))
