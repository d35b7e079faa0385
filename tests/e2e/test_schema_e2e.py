"""The published JSON Schema holds for real traffic: whole games of every kind of game, in
both framings, between bot processes (the Python SDK, the bundled agents, the Node.js
client) and a live referee, recorded by a TCP proxy between them. The proxy parses frames
itself (the greeting line, then JSON lines or 4-byte big-endian msgpack lengths, as
docs/protocol.md §2 says), so nothing of maag.protocol decodes what is checked. Also: `maag
protocol schema` prints valid JSON Schema, and the shipped copy is up to date."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import msgpack
import pytest
from maag.server.referee.clock import TimeControl
from maag.server.referee.schema import SHIPPED, game_schema, shipped_text

from .conftest import WAIT, MakeServer, spawn_agent, stop_process, token_for

REPO = Path(__file__).resolve().parents[2]
MAAG = [sys.executable, "-m", "maag.server"]
LINE_LIMIT = 1 << 22  # above any frame the referee sends


class Recorder:
    """A TCP proxy to the referee that keeps every frame of both directions, decoded."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.frames: list[tuple[str, dict[str, Any]]] = []  # ("c2s" | "s2c", map)
        self.encodings: list[str] = []
        self.server: asyncio.AbstractServer | None = None
        self.tasks: list[asyncio.Task[None]] = []

    async def start(self) -> int:
        # JSON lines may be long (conquest's groups reach 150 KB): lift asyncio's 64 KiB line limit
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0, limit=LINE_LIMIT)
        return int(self.server.sockets[0].getsockname()[1])

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()
        for t in self.tasks:
            t.cancel()

    async def _serve(self, cr: asyncio.StreamReader, cw: asyncio.StreamWriter) -> None:
        sr, sw = await asyncio.open_connection("127.0.0.1", self.target_port, limit=LINE_LIMIT)
        greeting = await cr.readline()
        encoding = greeting.decode().split()[2]
        self.encodings.append(encoding)
        sw.write(greeting)
        self.tasks += [asyncio.create_task(self._pump(cr, sw, "c2s", encoding)),
                       asyncio.create_task(self._pump(sr, cw, "s2c", encoding))]

    async def _pump(self, r: asyncio.StreamReader, w: asyncio.StreamWriter, way: str, encoding: str) -> None:
        try:
            while True:
                if encoding == "json":
                    raw = await r.readline()
                    if not raw:
                        break
                    w.write(raw)
                    if raw.strip():
                        self.frames.append((way, json.loads(raw)))
                else:
                    head = await r.readexactly(4)
                    body = await r.readexactly(int.from_bytes(head, "big"))
                    w.write(head + body)
                    self.frames.append((way, msgpack.unpackb(body, raw=False, strict_map_key=True)))
                await w.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            w.close()


def check_frames(rec: Recorder, game: str) -> dict[str, int]:
    """Every recorded frame is valid under `game`'s schema, as a message of its side; the
    count of each message type seen."""
    schema = game_schema([game])
    sides = {way: jsonschema.Draft202012Validator({**schema, "oneOf": [{"$ref": f"#/$defs/{side}"}]})
             for way, side in (("c2s", "client_message"), ("s2c", "server_message"))}
    seen: dict[str, int] = {}
    for way, msg in rec.frames:
        errors = [f"{e.json_path}: {e.message}" for e in sides[way].iter_errors(msg)]
        assert not errors, (way, errors[:3], json.dumps(msg)[:1500])
        seen[msg["type"]] = seen.get(msg["type"], 0) + 1
    return seen


SDK_BOT = """
import random, sys
from maag.clients import Bot, TurnResult, run_bot_blocking

class Wide(Bot):
    name = "wide"
    games = (sys.argv[4],)
    want_legal = True
    want_groups = True
    def choose_turn(self, observation, limit):
        groups = observation.groups
        if groups and random.random() < 0.7:
            return TurnResult(random.choice(random.choice(groups)["options"])["actions"])
        return TurnResult([random.choice(observation.legal)])

run_bot_blocking(Wide, sys.argv[1], token=sys.argv[2], stop_after=int(sys.argv[3]), encoding=sys.argv[5])
"""

CASES = [("heroes", {"map": "a-tiny"}, "greedy-action"), ("cards", {}, "greedy-action"),
         ("conquest", {}, "conquest-easy"), ("nim", {}, "random")]


@pytest.mark.parametrize("encoding", ["msgpack", "json"])
@pytest.mark.parametrize(("game", "config", "opponent"), CASES, ids=[c[0] for c in CASES])
async def test_every_frame_of_whole_games_fits_the_schema(referee: MakeServer, game: str,
                                                          config: dict[str, Any], opponent: str,
                                                          encoding: str) -> None:
    srv = await referee(game=game, game_config=config, tc=TimeControl.parse("5s"), auto_pair=True)
    rec = Recorder(srv.port)
    port = await rec.start()
    address = f"127.0.0.1:{port}"
    sdk = await asyncio.create_subprocess_exec(
        sys.executable, "-c", SDK_BOT, address, token_for(srv, "wide"), "2", game, encoding,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    agent = await spawn_agent(port, token_for(srv, "agent"), opponent, "--budget-ms", "50",
                              *(["--json-lines"] if encoding == "json" else []))
    try:
        _, err = await asyncio.wait_for(sdk.communicate(), 6 * WAIT)
        assert sdk.returncode == 0, err.decode()[-3000:]
        await asyncio.sleep(0.2)  # the last frames through the proxy
        seen = check_frames(rec, game)
        assert rec.encodings == [encoding, encoding]
        assert seen.get("game_over", 0) == 4 and seen.get("your_turn", 0) > 4 and seen.get("hello") == 2, seen
        # (the SDK and the agents ask for the other seat's turn in one turn_events)
        assert seen.get("act", 0) + seen.get("turn", 0) > 4 and seen.get("turn_events", 0) > 0, seen
        games = srv.storage.storage.list_games(status="finished")
        assert len(games) == 2 and all(g.reason in ("rules", "turn_limit") for g in games)
    finally:
        await stop_process(sdk)
        await stop_process(agent)
        await rec.stop()


async def test_the_nodejs_clients_frames_fit_the_schema(referee: MakeServer) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    srv = await referee(game="heroes", game_config={"map": "a-tiny"}, tc=TimeControl.parse("5s"),
                        auto_pair=True)
    rec = Recorder(srv.port)
    port = await rec.start()
    js = await asyncio.create_subprocess_exec(
        node, str(REPO / "clients" / "js" / "random_bot.js"), f"127.0.0.1:{port}", token_for(srv, "js"), "2",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    agent = await spawn_agent(port, token_for(srv, "rnd"), "random")
    try:
        _, err = await asyncio.wait_for(js.communicate(), 6 * WAIT)
        assert js.returncode == 0, err.decode()
        await asyncio.sleep(0.2)
        seen = check_frames(rec, "heroes")
        assert "json" in rec.encodings and seen.get("game_over", 0) == 4, seen
    finally:
        await stop_process(js)
        await stop_process(agent)
        await rec.stop()


def test_the_command_prints_valid_json_schema_and_the_shipped_copy_is_fresh(tmp_path: Path) -> None:
    r = subprocess.run([*MAAG, "protocol", "schema"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    schema = json.loads(r.stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    wanted = {"hello", "your_turn", "heroes_action", "cards_observation", "conquest_group"}
    assert set(schema["$defs"]) >= wanted
    assert SHIPPED.read_text() == shipped_text() == r.stdout, \
        "protocol/protocol.schema.json is stale: maag protocol schema --out protocol/protocol.schema.json"
    assert (REPO / "docs" / "protocol.schema.json").resolve() == (REPO / "protocol" / "protocol.schema.json")
    one = subprocess.run([*MAAG, "protocol", "schema", "--game", "nim", "--out", str(tmp_path / "n.json")],
                         capture_output=True, text=True, timeout=120)  # one game only
    assert one.returncode == 0 and "heroes_action" not in (tmp_path / "n.json").read_text()
    bad = subprocess.run([*MAAG, "protocol", "schema", "--game", "chess"], capture_output=True, text=True,
                         timeout=120, env={**os.environ})
    assert bad.returncode == 2 and "unknown game 'chess'" in bad.stderr
