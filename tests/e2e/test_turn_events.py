"""Events once a turn (protocol version 2, hello `events` "turn"), end to end: two Python SDK
bot processes play a whole game of heroes, the card game (hidden hands, secrets) and conquest
on a live referee through a recording proxy, one asking for the opponent's turn in one
`turn_events`, the other for each action live. The one that asked hears the other's actions
only in `turn_events`, one per turn, each right before its `your_turn` (or `game_over`), and
together they are exactly the `event`s it would have been sent: the public form of each of
the opponent's logged actions, in order. The other hears each as an `event`, as before. Both
bots' `on_event` see every action of the opponent, once, in order."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import msgpack
import pytest
from maag.engine import registry
from maag.server.referee.clock import TimeControl

from .conftest import WAIT, MakeServer, Raw, stop_process, token_for

BOT = """
import json, random, sys
from maag.clients import Bot, TurnResult, run_bot_blocking

END = {"heroes": "end_turn", "cards": "end_turn", "conquest": "end_phase"}[sys.argv[3]]

class Player(Bot):
    name = "p"
    games = (sys.argv[3],)
    want_legal = True
    live_events = sys.argv[4] == "action"
    def __init__(self, settings=None):
        super().__init__(settings)
        self.heard = []
    def choose_turn(self, observation, limit):
        legal = observation.legal
        ends = [a for a in legal if a["type"] == END]
        # Short turns: a random action, or the end of the turn (phase) one time in three.
        return TurnResult([ends[0] if ends and random.random() < 0.35 else random.choice(legal)])
    async def on_event(self, kind, seat, action):
        self.heard.append([kind, seat, action])
    async def on_game_over(self, record):
        print(json.dumps(self.heard), flush=True)

run_bot_blocking(Player, sys.argv[1], token=sys.argv[2], stop_after=1, encoding=sys.argv[5])
"""


class Proxy:
    """A TCP proxy to the referee that keeps each connection's frames (both ways, decoded)."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.conns: list[list[tuple[str, dict[str, Any]]]] = []
        self.tasks: list[asyncio.Task[None]] = []
        self.server: asyncio.AbstractServer | None = None

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0, limit=1 << 22)
        return int(self.server.sockets[0].getsockname()[1])

    async def _serve(self, cr: asyncio.StreamReader, cw: asyncio.StreamWriter) -> None:
        sr, sw = await asyncio.open_connection("127.0.0.1", self.target, limit=1 << 22)
        greeting = await cr.readline()
        sw.write(greeting)
        frames: list[tuple[str, dict[str, Any]]] = []
        self.conns.append(frames)
        json_lines = greeting.split()[2] == b"json"
        for r, w, way in ((cr, sw, "c2s"), (sr, cw, "s2c")):
            self.tasks.append(asyncio.create_task(self._pump(r, w, way, json_lines, frames)))

    @staticmethod
    async def _pump(r: asyncio.StreamReader, w: asyncio.StreamWriter, way: str, json_lines: bool,
                    frames: list[tuple[str, dict[str, Any]]]) -> None:
        try:
            while True:
                if json_lines:
                    raw = await r.readline()
                    if not raw:
                        break
                    w.write(raw)
                    frames.append((way, json.loads(raw)))
                else:
                    head = await r.readexactly(4)
                    body = await r.readexactly(int.from_bytes(head, "big"))
                    w.write(head + body)
                    frames.append((way, msgpack.unpackb(body, raw=False)))
                await w.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            w.close()

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()
        for t in self.tasks:
            t.cancel()


END = {"heroes": "end_turn", "cards": "end_turn", "conquest": "end_phase"}
CASES = [("heroes", {"map": "a-tiny"}, "msgpack"), ("cards", {}, "json"), ("conquest", {}, "msgpack")]


@pytest.mark.parametrize(("game", "config", "encoding"), CASES, ids=[c[0] for c in CASES])
async def test_a_bot_that_asks_hears_each_turn_once_and_exactly_its_events(
        referee: MakeServer, game: str, config: dict[str, Any], encoding: str) -> None:
    srv = await referee(game=game, game_config=config, tc=TimeControl.parse("10s"), auto_pair=True)
    proxy = Proxy(srv.port)
    address = f"127.0.0.1:{await proxy.start()}"
    bots = {hear: await asyncio.create_subprocess_exec(
        sys.executable, "-c", BOT, address, token_for(srv, hear), game, hear, encoding,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE) for hear in ("turn", "action")}
    try:
        heard: dict[str, list[list[Any]]] = {}
        for hear, p in bots.items():
            out, err = await asyncio.wait_for(p.communicate(), 6 * WAIT)
            assert p.returncode == 0, err.decode()[-3000:]
            heard[hear] = json.loads(out.decode().strip().splitlines()[-1])
        await asyncio.sleep(0.2)  # (the last frames through the proxy)
        [stored] = srv.storage.storage.list_games(status="finished")
        replay = srv.storage.storage.get_replay(stored.id)
        assert replay is not None and not any(a.get("auto") for a in replay["actions"])
        public = registry.get(game).public_action
        assert len(proxy.conns) == 2
        for frames in proxy.conns:
            hello = next(m for way, m in frames if m["type"] == "hello")
            start = next(m for way, m in frames if m["type"] == "game_start")
            me, hear = start["seat"], hello["events"]
            assert hello["v"] == 2 and {m["v"] for _, m in frames} == {2}
            told = [m for way, m in frames if way == "s2c"]
            # What per-action events give: the opponent's every action, as this seat may see it.
            want = [public(a["action"]) for a in replay["actions"] if a["seat"] + 1 != me]
            assert want and len(want) < len(replay["actions"])
            if hear == "action":
                assert not [m for m in told if m["type"] == "turn_events"]
                assert [m["action"] for m in told if m["type"] == "event"] == want
            else:
                assert not [m for m in told if m["type"] == "event" and m["kind"] == "action"]
                turns = [i for i, m in enumerate(told) if m["type"] == "turn_events"]
                got = [a for i in turns for a in told[i]["actions"]]
                assert got == want, (game, got[:5], want[:5])
                assert {told[i]["seat"] for i in turns} == {3 - me}
                # Once a turn: each right before this seat's your_turn or the game's end, and
                # each a whole turn of the opponent (ending with its end of turn) but the last.
                assert all(told[i + 1]["type"] in ("your_turn", "game_over") for i in turns)
                assert all(told[i]["actions"][-1]["type"] == END[game] for i in turns[:-1])
                # A turn of the opponent's is its actions between two of this seat's turns.
                opponent_turns = sum(1 for a in replay["actions"]
                                     if a["seat"] + 1 != me and a["action"]["type"] == END[game])
                per_turn = 2 if game == "conquest" else 1  # (conquest: two phases a turn)
                assert len(turns) in (opponent_turns // per_turn, opponent_turns // per_turn + 1)
            if game == "cards":  # (hidden hands: nothing told names a card not yet played face up)
                assert all(m["type"] != "your_turn" or "hand" not in m["observation"]["players"][2 - me]
                           for m in told)
            # The SDK hands each action to the bot's on_event once, in order, either way.
            assert [a for kind, seat, a in heard[hear] if kind == "action"] == want
    finally:
        for p in bots.values():
            await stop_process(p)
        await proxy.stop()


async def _v2(port: int, token: str, name: str, events: str) -> Raw:
    """A raw JSON-lines bot of protocol version 2 whose hello asks for `events`."""
    raw = await Raw.connect(port, None)
    raw.send_raw(b"MAAG 2 json\n")
    raw.send({"type": "hello", "v": 2, "name": name, "token": token, "games": ["heroes"], "want_legal": True,
              "events": events}, v=False)
    assert (await raw.recv_type("welcome"))["v"] == 2
    return raw


async def test_a_bot_back_mid_turn_hears_the_actions_after_it_is_back(referee: MakeServer) -> None:
    """The opponent plays while the bot is away: what it played then is not told (as with
    `event`s, which go to no one meanwhile); the turn_events at the turn's end holds what it
    played after the bot's new hello, right before its your_turn."""
    srv = await referee(game="heroes", game_config={"map": "a-tiny"}, tc=TimeControl.parse("30s"))
    tokens = {name: token_for(srv, name) for name in ("mover", "waiter")}
    mover = await _v2(srv.port, tokens["mover"], "mover", "action")
    waiter = await _v2(srv.port, tokens["waiter"], "waiter", "turn")
    srv.request_game("mover", "waiter", seed=3)

    buffered: list[dict[str, Any]] = []  # what the mover was told and the test has not looked at

    async def next_of(kind: str) -> dict[str, Any]:
        """The mover's first message of `kind` (a type, or an event's kind) not looked at yet."""
        while True:
            for m in buffered:
                if kind in (m["type"], m.get("kind")):
                    buffered.remove(m)
                    return m
            m = await mover.recv()
            assert m is not None
            buffered.append(m)

    async def act(first: bool = True) -> dict[str, Any]:
        """The mover plays its first legal action that does not end its turn (or ends it)."""
        yt = await next_of("your_turn")
        action = next(a for a in yt["legal"] if (a["type"] != "end_turn") == first)
        mover.send({"type": "act", "v": 2, "game_id": yt["game_id"], "action": action}, v=False)
        return dict(action)

    async def told(who: Raw, n: int) -> list[dict[str, Any]]:
        return [m for m in [await who.recv() for _ in range(n)] if m is not None]

    back: Raw | None = None
    try:
        assert [m["type"] for m in await told(waiter, 1)] == ["game_start"]
        await act()
        waiter.close()
        await next_of("disconnect")
        await act()  # (the waiter is away: told to no one)
        back = await _v2(srv.port, tokens["waiter"], "waiter", "turn")
        assert [m["type"] for m in await told(back, 1)] == ["game_start"]
        await next_of("reconnect")
        mine = [await act(), await act(first=False)]
        got = await told(back, 2)
        assert [m["type"] for m in got] == ["turn_events", "your_turn"], got
        assert got[0]["actions"] == mine and got[0]["seat"] == 1
    finally:
        for r in (mover, waiter, back):
            if r is not None:
                r.close()
