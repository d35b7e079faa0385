"""docs/protocol.md holds to what a live server sends. The example session of section 7 is
played against a real referee configured as `maag serve` is by default (same limits, time
control, map a-tiny as the text says), and every whole example message the server sends
there is compared with the live message of the same kind: the same fields, the same JSON
types, and the same values for what a person relies on (the limits in `welcome`, the
server's name and version, the protocol version, the time control). The example token has
the shape of a real one. Every field a live message carries is named in the section 3
table of its type (time_control's keys included)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from maag.engine import Game
from maag.server.cli import build_parser
from maag.server.net.server import RefereeServer
from maag.server.storage.base import SQLiteStorage

from .conftest import Raw, spawn_minibot, stop_process, token_for

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"


def doc_session() -> list[tuple[str, str]]:
    block = DOC.read_text().split("## 7. Example session", 1)[1].split("```", 2)[1]
    return [(ln[0], ln[2:]) for ln in block.splitlines() if ln.startswith(("> ", "< "))]


def doc_server_messages() -> list[dict[str, Any]]:
    return [json.loads(text) for who, text in doc_session() if who == "<" and "…" not in text]


def table_fields(msg_type: str) -> set[str]:
    """The names in backticks in the fields column of `msg_type`'s row of section 3."""
    section = DOC.read_text().split("## 3. Messages", 1)[1].split("\n## ", 1)[0]
    row = next(ln for ln in section.splitlines() if ln.startswith(f"| `{msg_type}` |"))
    return set(re.findall(r"`([a-z_]+)`", row.split("|")[2]))


def kind(v: Any) -> str:
    return {bool: "boolean", int: "integer", float: "number", str: "string", list: "list",
            dict: "map", type(None): "null"}[type(v)]


def variant(m: dict[str, Any]) -> tuple[str, bool]:
    return (m["type"], "error" in m)


async def live_session(tmp_path: Path) -> tuple[list[dict[str, Any]], Any]:
    """The example session's steps on a live referee with `maag serve`'s defaults."""
    args = build_parser(["serve"]).parse_args(["serve", "--map", "a-tiny"])
    from maag.server.cli.common import game_config, policy
    from maag.server.net.server import ServerConfig

    cfg = ServerConfig(port=0, auto_pair=False, tc=args.tc, game_config=game_config(args),
                       policy=policy(args), max_frame=args.max_frame, max_rate=args.max_rate)
    srv = RefereeServer(cfg, SQLiteStorage(tmp_path / "doc.sqlite3"))
    await srv.start()
    opponent = await spawn_minibot(srv.port, token_for(srv, "random"))
    me = await Raw.connect(srv.port)
    seen: list[dict[str, Any]] = []

    async def recv(*types: str) -> dict[str, Any]:
        while True:
            m = await me.recv()
            assert m is not None, "the server closed the connection"
            seen.append(m)
            if m["type"] in types:
                return m

    try:
        me.send({"type": "hello", "name": "by-hand", "token": token_for(srv, "by-hand"), "games": ["heroes"],
                 "concurrency": 1, "want_legal": True})
        await recv("welcome")
        fut = srv.request_game("by-hand", "random")
        start = await recv("game_start")
        gid = start["game_id"]
        turn = await recv("your_turn")
        me.send({"type": "act", "game_id": gid, "action": turn["legal"][0]})
        await recv("result")
        turn = await recv("your_turn")
        game = Game("heroes", start["config"])
        state = game.state_from_json(turn["observation"])
        illegal = next({"type": "attack", "from": [x, y], "to": [tx, ty]} for x in range(5) for y in range(3)
                       for tx in range(5) for ty in range(3)
                       if not state.is_legal(game.action({"type": "attack", "from": [x, y], "to": [tx, ty]})))
        me.send({"type": "act", "game_id": gid, "action": illegal})
        await recv("result")
        turn = await recv("your_turn")
        me.send({"type": "turn", "game_id": gid, "actions": [turn["legal"][0], {"type": "end_turn"}]})
        await recv("result")
        await recv("your_turn")  # after the opponent's events
        me.send({"type": "ping", "id": 1})
        await recv("pong")
        me.send({"type": "act", "game_id": "g7", "action": {"type": "end_turn"}})
        await recv("result")
        me.send({"type": "resign", "game_id": gid})
        await recv("game_over")
        await fut
    finally:
        me.close()
        await stop_process(opponent)
        await srv.stop()
    return seen, args


async def test_the_example_session_is_what_a_live_server_sends(tmp_path: Path) -> None:
    live, args = await live_session(tmp_path)
    by_variant: dict[tuple[str, bool], dict[str, Any]] = {}
    for m in live:
        by_variant.setdefault(variant(m), m)
    documented = doc_server_messages()
    wanted = {"welcome", "game_start", "result", "event", "pong", "game_over"}
    assert {m["type"] for m in documented} >= wanted
    for doc in documented:
        real = by_variant.get(variant(doc))
        assert real is not None, f"the live session sent no {variant(doc)} to compare with {doc}"
        assert sorted(doc) == sorted(real), (doc, real)
        for key in doc:
            if key not in ("config", "observation", "action"):  # game-defined content
                assert kind(doc[key]) == kind(real[key]) or None in (doc[key], real[key]), (key, doc, real)
    doc_welcome = next(m for m in documented if m["type"] == "welcome")
    real_welcome = by_variant[("welcome", False)]
    for key in ("server", "max_frame", "max_rate", "v"):
        assert doc_welcome[key] == real_welcome[key], (key, doc_welcome[key], real_welcome[key])
    doc_start = next(m for m in documented if m["type"] == "game_start")
    assert doc_start["time_control"] == by_variant[("game_start", False)]["time_control"]


def test_the_example_token_has_the_shape_of_a_real_one(tmp_path: Path) -> None:
    real = SQLiteStorage(tmp_path / "t.sqlite3").add_bot("x")
    hello = next(json.loads(text) for who, text in doc_session() if who == ">" and '"hello"' in text)
    shape = re.compile(r"^maag_[A-Za-z0-9_-]{32}$")
    assert shape.match(real), real
    assert shape.match(hello["token"]), hello["token"]


async def test_every_field_a_live_server_sends_is_documented(tmp_path: Path) -> None:
    live, _ = await live_session(tmp_path)
    for m in live:
        missing = set(m) - {"type", "v"} - table_fields(m["type"])
        assert not missing, f"{m['type']}: fields {sorted(missing)} are not in docs/protocol.md section 3"
        if m["type"] == "game_start":
            undocumented = set(m["time_control"]) - table_fields("game_start")
            assert not undocumented, f"game_start.time_control: {sorted(undocumented)} undocumented"
