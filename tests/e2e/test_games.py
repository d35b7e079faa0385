"""Whole games over real sockets: hidden information as non-interference, no result lost
when the server is killed, `maag match` and `maag replay` as a user runs them."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from maag.engine import Game
from maag.server.referee.clock import TimeControl
from maag.server.referee.replay import resimulate
from maag.server.storage.base import SQLiteStorage

from .conftest import WAIT, MakeServer, Raw, stop_process, token_for, until

UNITS = ["knight", "archer", "cleric", "wizard", "ninja"]


def variants() -> tuple[dict[str, Any], dict[str, Any], str, str, str]:
    """An initial state and a variant in which player 2 holds unit card `d` instead of its
    unit card `x` (swapped with its deck); `common` is a unit card of both hands."""
    for seed in range(1, 500):
        st = Game("heroes", {"map": "a"}).new_state(seed).to_json()
        hand, deck = st["hands"]["2"], st["decks"]["2"]
        units = [c for c in dict.fromkeys(hand) if c in UNITS]
        missing = [c for c in UNITS if c not in hand and deck.get(c, 0) > 0]
        if len(units) >= 2 and missing:
            common, x, d = units[0], units[1], missing[0]
            var = json.loads(json.dumps(st))
            var["hands"]["2"].remove(x)
            var["hands"]["2"].append(d)
            var["decks"]["2"][d] -= 1
            var["decks"]["2"][x] = var["decks"]["2"].get(x, 0) + 1
            var["decks"]["2"] = {k: v for k, v in var["decks"]["2"].items() if v}
            return st, var, common, x, d
    raise AssertionError("no suitable seed")


async def observer(port: int, token: str, game: str, events: str | None) -> Raw:
    """Seat 1's raw msgpack connection, welcomed: protocol version 1, or version 2 asking for
    `events` (its messages then carry `v` 2: send them with `v=False` and a `v`)."""
    if events is None:
        obs = await Raw.connect(port, "msgpack")
        await obs.hello(token, "observer", want_legal=True, games=[game])
        return obs
    obs = await Raw.connect(port, None)
    obs.encoding = "msgpack"
    obs.send_raw(b"MAAG 2 msgpack\n")
    obs.send({"type": "hello", "v": 2, "name": "observer", "token": token, "games": [game],
              "want_legal": True, "events": events}, v=False)
    assert (await obs.recv_type("welcome"))["v"] == 2
    return obs


def shows(m: dict[str, Any], hidden: str) -> bool:
    """Whether `m` is the event (or the turn_events) in which seat 2 plays `hidden`."""
    if m["type"] == "turn_events":
        return any(a.get("card") == hidden for a in m["actions"])
    return m["type"] == "event" and m["action"].get("card") == hidden


async def observed_bytes(referee: MakeServer, start: dict[str, Any], hidden: str, common: str,
                         events: str | None = None) -> list[bytes]:
    """Play a scripted game from `start`; return every frame seat 1 received, up to the
    event in which seat 2 plays `hidden` (on its 5th turn, after playing `common` and
    drawing on its 1st). `events`: what seat 1's hello asks (None: protocol version 1)."""
    srv = await referee(game_config={"map": "a"}, tc=TimeControl.parse("inf"))
    obs = await observer(srv.port, token_for(srv, "observer"), "heroes", events)
    opp = await Raw.connect(srv.port, "json")
    await opp.hello(token_for(srv, "opponent"), "opponent", want_legal=True)
    srv.request_game("observer", "opponent", seed=1234, start_state=start)
    opp_turns = 0
    while True:
        m = await obs.recv()
        assert m is not None
        if shows(m, hidden):
            return obs.received
        if m["type"] == "your_turn" and m["legal"]:
            first = m["legal"][0]
            plan = [first] if first["type"] == "end_turn" else [first, {"type": "end_turn"}]
            obs.send({"type": "turn", "v": 1 if events is None else 2, "game_id": m["game_id"],
                      "actions": plan}, v=False)
            yt = await opp.recv_type("your_turn")
            opp_turns += 1
            card = common if opp_turns == 1 else hidden if opp_turns == 5 else None
            deploy = [a for a in yt["legal"] if a["type"] == "deploy" and a["card"] == card][:1]
            assert deploy or card is None
            opp.send({"type": "turn", "game_id": yt["game_id"], "actions": deploy + [{"type": "end_turn"}]})


@pytest.mark.parametrize("events", [None, "turn"], ids=["version-1", "turn-events"])
async def test_hidden_cards_do_not_change_a_single_byte(referee: MakeServer, events: str | None) -> None:
    base, var, common, x, d = variants()
    a = await observed_bytes(referee, base, x, common, events)
    b = await observed_bytes(referee, var, d, common, events)
    assert len(a) == len(b) > 12
    assert a[:-1] == b[:-1]  # welcome, game_start, observations, events: byte for byte
    assert a[-1] != b[-1]  # until the hidden card is played
    assert x.encode() in a[-1] and d.encode() in b[-1]
    assert (b"turn_events" in a[-1]) == (events == "turn")  # (the turn it ends: in one message)


def _maag(*args: str, env: dict[str, str] | None = None, **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "maag.server", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=300,
        **kw,
    )


def test_match_command_and_replays(tmp_path: Path) -> None:
    db = str(tmp_path / "match.sqlite3")
    r = _maag(
        "match",
        "random",
        "first",
        "--games",
        "4",
        "--concurrency",
        "2",
        "--tc",
        "500ms",
        "--map",
        "a-tiny",
        "--seed",
        "7",
        "--json",
        "--db",
        db,
    )
    assert r.returncode == 0, r.stderr
    lines = [json.loads(line) for line in r.stdout.splitlines()]
    summary = lines[-1]
    assert summary["games"] == 4 == summary["wins"] + summary["draws"] + summary["losses"]
    lo, hi = summary["score_ci95"]
    assert 0 <= lo <= summary["score"] <= hi <= 1
    assert "elo" in summary and len(summary["elo_ci95"]) == 2
    games = [g for g in lines[:-1] if g["event"] == "game"]
    assert sorted(g["game_id"] for g in games) == summary["game_ids"]
    assert sorted((g["seat1"], g["n"] % 2) for g in games) == [
        ("first", 0),
        ("first", 0),
        ("random", 1),
        ("random", 1),
    ]
    st = SQLiteStorage(db)
    for gid in summary["game_ids"]:
        rec = st.get_game(gid)
        assert rec is not None and rec.status == "finished"
        replay = st.get_replay(gid)
        assert replay is not None and resimulate(replay).plies == rec.plies
    # Mirrored seeds: games 1 and 2 (and 3 and 4) start from the same deal.
    seeds = [st.get_replay(g["game_id"])["seed"] for g in sorted(games, key=lambda g: g["n"])]  # type: ignore
    assert seeds[0] == seeds[1] != seeds[2] == seeds[3]
    st.close()
    one = summary["game_ids"][0]
    r = _maag("replay", str(one), "--db", db)
    assert r.returncode == 0 and "OK" in r.stdout, r.stdout + r.stderr
    rec = SQLiteStorage(db).get_game(one)
    assert rec is not None
    said = {None: "no result", -1: "a draw", 0: "seat 1 won", 1: "seat 2 won"}[rec.winner]
    assert f"({rec.reason}, {said}) verified" in r.stdout, r.stdout  # seats 1 and 2, as on the wire
    r = _maag("replay", str(one), "--db", db, "--at", "3", "--json")
    state = json.loads(r.stdout)
    assert state["turn"] >= 1 and "deck_seed" in state
    Game("heroes", {"map": "a-tiny"}).state_from_json(state)  # a start position for a new game


async def test_kill_9_mid_match_loses_no_finished_game(tmp_path: Path) -> None:
    db = tmp_path / "crash.sqlite3"
    store = SQLiteStorage(db)
    tokens = [store.add_bot(n) for n in ("k1", "k2")]
    store.close()
    port_file = tmp_path / "port"
    server = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "maag.server",
        "serve",
        "--port",
        "0",
        "--port-file",
        str(port_file),
        "--db",
        str(db),
        "--map",
        "a-tiny",
        "--tc",
        "2s",
        "--lease",
        "2",
        "--spill-dir",
        str(tmp_path / "spill"),
        "-q",
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    await until(lambda: port_file.exists() and port_file.read_text().strip() != "")
    port = int(port_file.read_text())
    bots = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "maag.server.net.minibot",
            "--connect",
            f"127.0.0.1:{port}",
            "--token",
            t,
            "--delay",
            "1",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        for t in tokens
    ]
    seen: list[list[str]] = [[], []]

    async def read(i: int) -> None:
        assert bots[i].stdout is not None
        async for line in bots[i].stdout:
            seen[i].append(line.decode().split()[1])

    readers = [asyncio.create_task(read(i)) for i in (0, 1)]
    try:
        await until(lambda: len(seen[0]) >= 3, timeout=120)
        server.send_signal(signal.SIGKILL)
        await server.wait()
        await asyncio.wait_for(asyncio.gather(*readers), WAIT)
        for b in bots:
            await b.wait()
    finally:  # a failed wait must not leave the server or the bots running
        for proc in (server, *bots):
            await stop_process(proc)
    # Every game a bot was told is over is stored, finished, with a replay that re-simulates.
    st = SQLiteStorage(db)
    told = set(seen[0]) | set(seen[1])
    assert len(told) >= 3
    finished = {str(g.id): g for g in st.list_games(status="finished")}
    assert told <= set(finished)
    for gid, rec in finished.items():
        replay = st.get_replay(int(gid))
        assert replay is not None
        check = resimulate(replay)
        assert check.plies == rec.plies and check.winner == rec.winner
    running = st.list_games(status="running")
    st.close()
    # A restarted server takes over the game the dead one was playing once the dead one's
    # lease (2 s) has lapsed; its bots are gone (they do not reconnect), so it is aborted
    # after the restarted server's --grace; the rest is untouched.
    r = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "maag.server",
        "serve",
        "--port",
        "0",
        "--port-file",
        str(port_file),
        "--db",
        str(db),
        "--lease",
        "1",
        "--grace",
        "1s",
        "--spill-dir",
        str(tmp_path / "spill"),
        "-q",
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    port_file.write_text("")

    def aborted() -> set[int]:
        st = SQLiteStorage(db)
        try:
            return {g.id for g in st.list_games(status="aborted")}
        finally:
            st.close()

    try:
        await until(lambda: port_file.read_text().strip() != "")
        await until(lambda: aborted() == {g.id for g in running})
        r.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(r.wait(), WAIT) == 0
    finally:
        await stop_process(r)
    st = SQLiteStorage(db)
    assert {g.id for g in st.list_games(status="aborted")} == {g.id for g in running}
    assert {str(g.id) for g in st.list_games(status="finished")} == set(finished)
    st.close()


async def test_match_on_a_running_referee(referee: MakeServer) -> None:
    srv = await referee(game_config={"map": "a-tiny"}, tc=TimeControl.parse("1s"), auto_pair=True)
    ta, tb = token_for(srv, "ra"), token_for(srv, "rb")
    p = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "maag.server",
        "match",
        "random",
        "first",
        "--games",
        "3",
        "--json",
        "--connect",
        f"127.0.0.1:{srv.port}",
        "--token-a",
        ta,
        "--token-b",
        tb,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(p.communicate(), 120)
    assert p.returncode == 0, err.decode()
    lines = [json.loads(line) for line in out.decode().splitlines()]
    summary = lines[-1]
    assert summary["games"] == 3 == summary["wins"] + summary["draws"] + summary["losses"]
    stored = {g.id: g for g in srv.storage.storage.list_games(status="finished")}
    assert set(summary["game_ids"]) <= set(stored)
    for g in lines[:-1]:  # what the relay saw is what the referee stored
        rec = stored[g["game_id"]]
        expect = {0: "1-0", 1: "0-1", -1: "1/2-1/2"}[rec.winner]  # type: ignore[index]
        names = {"ra": "random", "rb": "first"}
        assert (names[rec.seats[0]], names[rec.seats[1]], expect) == (g["seat1"], g["seat2"], g["result"])
        assert g["plies"] == rec.plies > 0  # the actions counted from BOT_A's side (they were 0)


# ---- The card game: the same property where hidden cards decide games -----------------------

CARDS_CONFIG = {"deck1": "M", "deck2": "P", "first": 1}


def cards_variants() -> tuple[dict[str, Any], dict[str, Any], int, str, str]:
    """A card-game start and a variant in which seat 2 holds minion `d` instead of minion `x`
    in hand slot `i`, `x` taking `d`'s place in its deck: the same public history until the
    slot is played. Both cost at most 2 and have no battlecry, so seat 2 can play either on
    its third turn whatever the board."""
    from maag.engine.games.cards.pool import POOL

    plain = {c.id for c in POOL if c.type == "Mi" and c.cost <= 2 and "BC:" not in c.enc}
    for seed in range(1, 500):
        st = Game("cards", CARDS_CONFIG).new_state(seed).to_json()
        hand, deck = st["players"][1]["hand"], st["players"][1]["deck"]
        slots = [i for i, c in enumerate(hand) if c in plain]
        others = [j for j, c in enumerate(deck) if c in plain and slots and c != hand[slots[0]]]
        if slots and others:
            i, j = slots[0], others[0]
            var = json.loads(json.dumps(st))
            vp = var["players"][1]
            vp["hand"][i], vp["deck"][j] = deck[j], hand[i]
            return st, var, i, hand[i], deck[j]
    raise AssertionError("no suitable seed")


async def cards_observed_bytes(
    referee: MakeServer, start: dict[str, Any], slot: int, hidden: str, events: str | None = None
) -> list[bytes]:
    """Seat 1 plays its first legal action each turn (chance included: random targets and
    draws come from the referee's seed); seat 2 ends its first two turns and plays hand slot
    `slot` on its third. Every frame seat 1 received, up to the event showing that card.
    `events`: what seat 1's hello asks (None: protocol version 1)."""
    srv = await referee(game="cards", game_config=CARDS_CONFIG, tc=TimeControl.parse("inf"))
    obs = await observer(srv.port, token_for(srv, "observer"), "cards", events)
    opp = await Raw.connect(srv.port, "json")
    opp.send({"type": "hello", "name": "opponent", "token": token_for(srv, "opponent"), "games": ["cards"],
              "want_legal": True})
    assert (await opp.recv_type("welcome"))["type"] == "welcome"
    srv.request_game("observer", "opponent", seed=99, start_state=start)
    opp_turns = 0
    while True:
        m = await obs.recv()
        assert m is not None, "the observer's connection closed"
        if shows(m, hidden):
            return obs.received
        if m["type"] == "your_turn":
            first = m["legal"][0]
            plan = [first] if first["type"] == "end_turn" else [first, {"type": "end_turn"}]
            obs.send({"type": "turn", "v": 1 if events is None else 2, "game_id": m["game_id"],
                      "actions": plan}, v=False)
            yt = await opp.recv_type("your_turn")
            opp_turns += 1
            plays = [a for a in yt["legal"] if a["type"] == "play" and a["hand_index"] == slot]
            if opp_turns == 3:
                assert [a["card"] for a in plays] == [hidden], yt["legal"]
            opp.send({"type": "turn", "game_id": yt["game_id"],
                      "actions": (plays if opp_turns == 3 else []) + [{"type": "end_turn"}]})


@pytest.mark.parametrize("events", [None, "turn"], ids=["version-1", "turn-events"])
async def test_hidden_cards_of_the_card_game_do_not_change_a_single_byte(referee: MakeServer,
                                                                          events: str | None) -> None:
    base, var, slot, x, d = cards_variants()
    assert x != d and base["players"][0] == var["players"][0]
    a = await cards_observed_bytes(referee, base, slot, x, events)
    b = await cards_observed_bytes(referee, var, slot, d, events)
    assert len(a) == len(b) > 10, (len(a), len(b))
    assert a[:-1] == b[:-1]  # welcome, game_start, observations, events: byte for byte
    assert a[-1] != b[-1] and x.encode() in a[-1] and d.encode() in b[-1]
    assert (b"turn_events" in a[-1]) == (events == "turn")
    # The observer did see seat 2 draw and hold cards: counts, never names.
    assert any(b"hand_count" in f for f in a)
