"""The web server at the HTTP and WebSocket level (a real referee and web server in the test's
event loop, real bot processes, aiohttp's client): the play token, the form and the limits,
bad messages from a page (a clear error, no effect on its game or any other), and the
spectator's view."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from maag.engine import Game
from maag.server.net.server import RefereeServer, ServerConfig
from maag.server.referee.clock import TimeControl
from maag.server.referee.spectator import common, public_view
from maag.server.storage.base import SQLiteStorage
from maag.server.web.address import parse_listen
from maag.server.web.app import WebConfig, WebServer
from maag.server.web.live import public_log

WAIT = 60.0  # a safety net against hangs only


class Site:
    def __init__(self, referee: RefereeServer, web: WebServer, storage: SQLiteStorage) -> None:
        self.referee, self.web, self.storage = referee, web, storage
        self.url = f"http://127.0.0.1:{web.port}"
        self.procs: list[subprocess.Popen[bytes]] = []

    def minibot(self, name: str, *extra: str) -> None:
        env = {**os.environ, "MAAG_TOKEN": self.storage.add_bot(name, replace=True)}
        self.procs.append(subprocess.Popen([sys.executable, "-m", "maag.server.net.minibot", "--connect",
                                            f"127.0.0.1:{self.referee.port}", "--name", name, *extra],
                                           env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))


@pytest.fixture
async def site(tmp_path: Path) -> AsyncIterator[Site]:
    storage = SQLiteStorage(tmp_path / "web.sqlite3")
    referee = RefereeServer(ServerConfig(port=0, game="heroes", game_config={"map": "a-tiny"},
                                         tc=TimeControl.parse("1s"), max_games_per_minute=0), storage)
    await referee.start()
    web = WebServer(referee, WebConfig(port=0, max_sessions=2, max_per_address=2, max_rate=5,
                                       human_tc=TimeControl.parse("30s")))
    await web.start()
    s = Site(referee, web, storage)
    yield s
    for p in s.procs:
        p.terminate()
    await web.stop()
    await referee.stop()
    for p in s.procs:
        p.wait(30)


async def _play(http: aiohttp.ClientSession, site: Site, **form: Any) -> tuple[int, dict[str, Any]]:
    async with http.post(site.url + "/api/play", json=form) as r:
        return r.status, await r.json()


async def _next(ws: aiohttp.ClientWebSocketResponse, kind: str) -> dict[str, Any]:
    while True:
        m = json.loads(await asyncio.wait_for(ws.receive_str(), WAIT))
        if m["type"] == kind:
            return dict(m)


def test_web_listens_on_localhost_unless_told() -> None:
    assert parse_listen("8080") == ("127.0.0.1", 8080)
    assert parse_listen("0.0.0.0:80") == ("0.0.0.0", 80)
    assert parse_listen("[::1]:81") == ("::1", 81)
    for bad in ("x", "host:", "70000"):
        with pytest.raises(ValueError, match="PORT|outside"):
            parse_listen(bad)


async def test_a_seat_opens_only_with_the_token_the_server_issued(site: Site) -> None:
    async with aiohttp.ClientSession() as http:
        with pytest.raises(aiohttp.WSServerHandshakeError) as e:
            await http.ws_connect(site.url + "/ws/play?token=guessed")
        assert e.value.status == 403
        status, out = await _play(http, site, opponent="first", seat=1)
        assert status == 200 and len(out["token"]) >= 32
        async with http.ws_connect(site.url + f"/ws/play?token={out['token']}") as ws:
            assert (await _next(ws, "seat"))["seat"] == 1
            turn = await _next(ws, "your_turn")
            assert turn["legal"] and "observation" in turn
            assert turn["observation"]["hands"]["1"], "the seat sees its own hand"
            assert turn["observation"]["hands"]["2"] == [], "... and not the other's"


async def test_the_form_is_checked_and_a_refused_form_starts_nothing(site: Site) -> None:
    async with aiohttp.ClientSession() as http:
        for form, text in [({"opponent": "first", "seat": 3}, "seat must be 1 or 2"),
                           ({"opponent": "first", "seat": 1, "experience": "godlike"},
                            "experience must be one of"),
                           ({"opponent": "", "seat": 1}, "name a bundled agent"),
                           ({"opponent": "rm -rf /", "seat": 1}, "name a bundled agent"),
                           ({"opponent": "bot:nobody", "seat": 1}, "no bot 'nobody' is connected")]:
            status, out = await _play(http, site, **form)
            assert status == 400 and text in out["error"], (form, out)
        async with http.post(site.url + "/api/play", data=b"{not json") as r:
            assert r.status == 400 and "JSON" in (await r.json())["error"]
    assert not site.web.seats.seats and not site.referee.requests and not site.referee.running()


async def test_an_agent_that_cannot_start_is_reported_to_the_page(site: Site) -> None:
    async with aiohttp.ClientSession() as http:
        status, out = await _play(http, site, opponent="no-such-agent", seat=1)
        assert status == 200  # the name is only known to be bad once its process has tried
        async with http.ws_connect(site.url + f"/ws/play?token={out['token']}") as ws:
            err = await _next(ws, "error")
    assert "could not start" in err["message"] and "no-such-agent" in err["message"]
    assert not site.referee.requests and not site.referee.running()


async def test_people_playing_at_once_are_limited(site: Site) -> None:
    async with aiohttp.ClientSession() as http:
        for _ in range(2):
            status, _out = await _play(http, site, opponent="first", seat=1)
            assert status == 200
        status, out = await _play(http, site, opponent="first", seat=1)
        assert status == 429 and "limit is 2" in out["error"]


async def test_bad_messages_from_a_page_are_answered_and_change_nothing(site: Site) -> None:
    site.minibot("a", "--delay", "20")
    site.minibot("b", "--delay", "20")
    async with aiohttp.ClientSession() as http:
        _, out = await _play(http, site, opponent="first", seat=1)
        async with http.ws_connect(site.url + f"/ws/play?token={out['token']}") as ws:
            turn = await _next(ws, "your_turn")
            mine = next(s for s in site.referee.running() if s.game_id == turn["game_id"])
            for _ in range(int(WAIT * 10)):  # the bots' game runs beside the person's
                others = [s for s in site.referee.running() if s is not mine]
                if others:
                    break
                await asyncio.sleep(0.1)
            assert others
            before = (mine.state.hash(), len(mine.log))
            for frame, text in [("not json", "not JSON"),
                                (json.dumps({"type": "hello", "token": "x"}),
                                 "type is one of act, turn, resign"),
                                (json.dumps([1, 2]), "a message is a map"),
                                (json.dumps({"type": "act"}), "action"),
                                (json.dumps({"type": "turn", "actions": "end"}), "actions")]:
                await ws.send_str(frame)
                err = await _next(ws, "error")
                assert text in err["message"], (frame, err)
            assert (mine.state.hash(), len(mine.log)) == before
            # Past the rate (5 a second), frames are dropped with a clear error.
            for _ in range(12):
                await ws.send_str("x")
            errors = [(await _next(ws, "error"))["message"] for _ in range(12)]
            assert any("messages per second" in e for e in errors), errors
            assert (mine.state.hash(), len(mine.log)) == before
            # The game itself goes on: after a second, an action is played as a bot's would be.
            await asyncio.sleep(1.1)
            await ws.send_str(json.dumps({"type": "act", "action": {"type": "end_turn"}}))
            res = await _next(ws, "result")
            assert res["accepted"] == 1  # (the opponent may have moved since: the log goes on)
            assert mine.log[before[1]]["seat"] == 0 and mine.log[before[1]]["action"] == {"type": "end_turn"}
        # The bots' game was never touched: it ends by the rules, as it would have anyway.
        gid = int(others[0].game_id)
        for _ in range(int(WAIT * 10)):
            rec = site.storage.get_game(gid)
            if rec is not None and rec.status == "finished":
                break
            await asyncio.sleep(0.1)
        assert rec is not None and rec.status == "finished" and rec.reason in ("rules", "turn_limit")


async def test_a_person_plays_a_connected_bot_and_is_never_paired_otherwise(site: Site) -> None:
    site.minibot("target", "--delay", "20")
    for _ in range(int(WAIT * 10)):
        if any(c.bot == "target" for c in site.referee.clients):
            break
        await asyncio.sleep(0.1)
    async with aiohttp.ClientSession() as http:
        status, out = await _play(http, site, opponent="bot:target", seat=2, experience="expert")
        assert status == 200, out
        async with http.ws_connect(site.url + f"/ws/play?token={out['token']}") as ws:
            start = await _next(ws, "game_start")
            assert start["opponent"] == "target" and start["seat"] == 2
            # A free bot arrives: the person's seat is not offered to it, only explicit requests pair it.
            site.minibot("z")
            await _next(ws, "your_turn")
            await asyncio.sleep(1.0)
            people = {s.game_id for s in site.referee.running() if "human-1" in (x.name for x in s.seats)}
            assert people == {start["game_id"]} and "human-1" in site.referee.explicit_only
            assert not any("z" in (x.name for x in s.seats) for s in site.referee.running())
            await ws.send_str(json.dumps({"type": "resign"}))
            over = await _next(ws, "game_over")
            assert over["winner"] == 1 and over["reason"] == "resign"
            assert over["replay_id"] == start["game_id"]
    rp = site.storage.get_replay(int(start["game_id"]))
    assert rp is not None and rp["tags"]["Experience"] == "expert" and rp["tags"]["Opponent"] == "bot:target"


async def _first_running_game(http: aiohttp.ClientSession, site: Site) -> Any:
    """The id of the first game the lobby lists as running (waiting for one)."""
    async with http.ws_connect(site.url + "/ws/lobby") as lobby:
        games: list[Any] = []
        while not games:
            games = (await _next(lobby, "lobby"))["games"]
    return games[0]["game_id"]


def _joined_log(snaps: list[dict[str, Any]]) -> list[Any]:
    """A page's log put together from its frames: the first holds the whole log, each push
    the entries from log_from on, exactly what the page lacks."""
    assert snaps[0]["log_from"] == 0
    log: list[Any] = snaps[0]["log"]
    for s in snaps[1:]:
        assert s["log_from"] == len(log)
        log = log + s["log"]
    return log


async def test_a_spectator_is_pushed_the_public_view_only(site: Site) -> None:
    site.minibot("c", "--delay", "30")
    site.minibot("d", "--delay", "30")
    async with aiohttp.ClientSession() as http:
        gid = await _first_running_game(http, site)
        async with http.ws_connect(site.url + f"/ws/game/{gid}") as ws:
            snaps = [await _next(ws, "game") for _ in range(4)]
        async with http.ws_connect(site.url + "/ws/game/99999") as ws:
            assert (await _next(ws, "gone"))["game_id"] == "99999"
    # the first frame holds the whole log, each push the entries from log_from on: put
    # together they are the game's public log, entry for entry
    log = _joined_log(snaps)
    assert len(log) > len(snaps[0]["log"]) or len({s["turn"] for s in snaps}) > 1
    running = {str(x.game_id): x for x in site.referee.running()}
    if str(gid) in running:  # still running: the referee's own log, as the opponent saw it
        assert log == public_log(running[str(gid)])[:len(log)]
    for s in snaps:
        assert s["seats"] == ["c", "d"] or s["seats"] == ["d", "c"]
        assert s["view"]["hands"] == {"1": None, "2": None} or 0 in s["view"]["hand_sizes"].values()
        assert s["layout"]["width"] == 5 and s["clocks"][0]["name"] == s["seats"][0]


async def test_spectators_arriving_together_share_one_first_frame_and_each_gets_the_whole_log(
        site: Site) -> None:
    # Bots slow enough that nothing moves between the two subscriptions: the second page
    # gets the same snapshot as the first (the frame encoded once, when within one push
    # interval), and the pushes after it still add up, for each page, to the public log.
    site.minibot("e", "--delay", "700")
    site.minibot("f", "--delay", "700")
    async with aiohttp.ClientSession() as http:
        gid = await _first_running_game(http, site)
        async with http.ws_connect(site.url + f"/ws/game/{gid}") as a, \
                http.ws_connect(site.url + f"/ws/game/{gid}") as b:
            first_a = await asyncio.wait_for(a.receive_str(), WAIT)
            first_b = await asyncio.wait_for(b.receive_str(), WAIT)
            later = [[json.loads(first_a)], [json.loads(first_b)]]
            for ws, got in ((a, later[0]), (b, later[1])):
                got += [await _next(ws, "game") for _ in range(2)]
    logs = [_joined_log(snaps) for snaps in later]
    assert len(logs[0]) > len(later[0][0]["log"])  # the game moved while they watched
    shortest = min(len(x) for x in logs)
    assert logs[0][:shortest] == logs[1][:shortest]
    running = {str(x.game_id): x for x in site.referee.running()}
    if str(gid) in running:
        assert logs[0] == public_log(running[str(gid)])[:len(logs[0])]
    # the same snapshot unless the game moved between the two subscriptions (the clocks may
    # differ: a frame is shared only within one push interval, so they stay that recent)
    a0, b0 = json.loads(first_a), json.loads(first_b)
    if a0["log"] == b0["log"]:
        a0.pop("clocks")
        b0.pop("clocks")
        assert a0 == b0


@pytest.mark.parametrize("game", ["heroes", "cards"])
def test_the_spectators_view_holds_no_hand(game: str) -> None:
    st = Game(game).new_state(7)
    for _ in range(12):
        st.apply(st.legal_codes()[-1])
    view = public_view(st)
    text = json.dumps(view)
    for seat in (0, 1):
        obs = st.observation(seat).to_json()
        hand = obs["hands"][str(seat + 1)] if game == "heroes" else obs["players"][seat]["hand"]
        assert hand, "the seat's own observation has its hand"
        if game == "heroes":
            assert view["hands"][str(seat + 1)] is None and view["decks"][str(seat + 1)] is None
        else:
            assert "hand" not in view["players"][seat] and "deck" not in view["players"][seat]
    assert "observer" not in view and "deck_seed" not in text


def test_what_two_views_agree_on() -> None:
    assert common({"a": 1, "b": [1, 2], "c": {"x": 1}}, {"a": 1, "b": [1, 3], "c": {"x": 2}, "d": 0}) == \
        {"a": 1, "b": None, "c": None}
    # Records are compared one by one, a record of plain values whole, as are plain lists.
    assert common([{"k": 1, "h": 2}, {"k": 2}], [{"k": 1, "h": 3}, {"k": 2}]) == [None, {"k": 2}]
    assert common([{"k": 1, "h": [2]}], [{"k": 1, "h": [3]}]) == [{"k": 1, "h": None}]
    assert common({"deck": {"x": 1, "y": 2}}, {"deck": {"x": 1, "y": 3}}) == {"deck": None}
    assert common(1, 1.0) is None and common(True, 1) is None


def test_every_file_of_the_page_is_package_data() -> None:
    """A non-editable install carries the page: each file under static/ matches a pattern of
    pyproject.toml's package data for maag.server.web."""
    import re
    from pathlib import PurePosixPath

    root = Path(__file__).resolve().parents[2]
    text = (root / "pyproject.toml").read_text()
    line = re.search(r'^"maag\.server\.web" = \[(.*)\]$', text, flags=re.M)
    assert line is not None
    patterns = re.findall(r'"([^"]+)"', line.group(1))
    web = root / "server" / "web"
    files = [p.relative_to(web).as_posix() for p in (web / "static").rglob("*") if p.is_file()]

    def packed(f: str) -> bool:  # setuptools' globs: `*` stays within one folder
        path = PurePosixPath(f)
        return any(path.match(pat) and len(path.parts) == len(PurePosixPath(pat).parts) for pat in patterns)

    assert files and all(packed(f) for f in files), (files, patterns)


def test_a_bundled_agent_against_a_person_thinks_within_its_budget() -> None:
    from maag.server.compete.match import bot_command

    cmd, shell = bot_command("mcts:c=0.5", "127.0.0.1", 9, "tok", 1, "m", budget_ms=1000.0)
    assert not shell and isinstance(cmd, list) and cmd[-2:] == ["--budget-ms", "1000"]
    assert "--budget-ms" not in bot_command("mcts", "127.0.0.1", 9, "tok", 1, "m")[0]
    assert "--budget-ms" not in bot_command("random", "127.0.0.1", 9, "tok", 1, "m", budget_ms=1.0)[0]
