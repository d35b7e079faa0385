"""Issue 53: the referee's verdicts follow what happened, and one bot never stops a match or a
tournament.

A bot the referee cuts off for a protocol error (a frame header announcing 4 GiB, an array
header of 2^31 elements, 10^5 nested arrays, a flood of messages) loses that game at once on
`protocol`, the error as the detail, at a 300 ms time control too (it used to lose on `time`
while its connection lingered, so the default `protocol:3/10` strike never fired). A bot that
says hello and hangs up while its process lives on forfeits the games it is due (`startup`
for a hosted process, `disconnect` for a bot process), and the match or tournament finishes.

- RefereeServer (in the test's loop, real sockets, SQLite): each cut-off ends the game at
  once, on move or not; a request naming an attached connection that has closed fails at
  once, naming its seat; a hosted process that hangs up on move loses by `disconnect`, its
  clock held while its probe runs; a request with an `Absence` forfeits a bot that hung up
  (or never came), and one that is connected is waited for; a resumed tournament adopts a
  stored forfeit with its verdict.
- `maag match` as a real process, the hostile bots of hostile/ (frame_4g, array_2g,
  nested_deep, flood, hangup_after_hello) as sandboxed packages and as command lines.
- `maag tournament` as a real process: the protocol breakers struck out by the default
  strikes; a bot that hangs up forfeits and the others' games are played; killed and run
  again, the tournament resumes and finishes.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import signal
import socket
import struct
import subprocess
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgpack
import pytest
from maag.server.compete import formats
from maag.server.compete.runner import recover
from maag.server.net.server import Absence, GameNotStarted, GameSummary, RefereeServer, ServerConfig
from maag.server.referee.clock import TimeControl
from maag.server.referee.policy import Policy
from maag.server.sandbox.check import sandbox_check
from maag.server.storage.base import SQLiteStorage, open_storage
from maag.server.storage.tournaments import open_tournament_store

from .conftest import HOSTILE, MAAG, command_line, play

pytestmark = pytest.mark.timeout(300)

TC = "300ms"
ATTACKS = {  # what each hostile bot sends, and the error the referee answers with
    "frame_4g": (struct.pack(">I", 2**32 - 1) + b"\x83" + b"x" * 1000, "frame_too_large"),
    "array_2g": (b"\x00\x00\x00\x05\xdd\x80\x00\x00\x00", "bad_encoding"),
    "nested_deep": (struct.pack(">I", 100_001) + b"\x91" * 100_000 + b"\xc0", "bad_encoding"),
    "flood": (b"".join(struct.pack(">I", len(b)) + b
                       for b in (msgpack.packb({"type": "ping", "v": 1, "id": i}) for i in range(20_000))),
              "rate_limited"),
}
PROTOCOL_BOTS = tuple(ATTACKS)


@pytest.fixture(scope="module")
def sandbox_runs() -> None:
    """Packages run in bubblewrap's namespaces: missing, the test is skipped (control groups
    are not needed for these verdicts)."""
    missing = [f"{m.name}: {m.detail}" for m in sandbox_check() if m.required and not m.active]
    if missing:
        pytest.skip("; ".join(missing))


# -- the referee server, in the test's loop ----------------------------------------------------------

class Raw:
    """A msgpack protocol client on a real socket (or an attached socket pair's end)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        writer.write(b"MAAG 1 msgpack\n")

    @classmethod
    async def open(cls, port: int | None = None, sock: socket.socket | None = None) -> Raw:
        if sock is not None:
            return cls(*await asyncio.open_connection(sock=sock))
        return cls(*await asyncio.open_connection("127.0.0.1", port))

    def send(self, msg: dict[str, Any]) -> None:
        body = msgpack.packb({"v": 1, **msg})
        self.writer.write(struct.pack(">I", len(body)) + body)

    async def recv(self) -> dict[str, Any] | None:
        try:
            head = await asyncio.wait_for(self.reader.readexactly(4), 20)
            return msgpack.unpackb(await self.reader.readexactly(struct.unpack(">I", head)[0]))  # type: ignore
        except (asyncio.IncompleteReadError, ConnectionError):
            return None

    async def until(self, kind: str) -> dict[str, Any]:
        while True:
            m = await self.recv()
            assert m is not None, f"closed while waiting for {kind}"
            if m["type"] == kind:
                return m

    async def hello(self, name: str, token: str) -> None:
        self.send({"type": "hello", "name": name, "token": token, "games": ["nim"], "want_legal": True})
        await self.until("welcome")

    async def play_legal(self) -> None:
        """Answer each turn with its first legal action, until the connection ends."""
        while (m := await self.recv()) is not None:
            if m["type"] == "your_turn":
                self.send({"type": "act", "game_id": m["game_id"], "action": m["legal"][0]})


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[RefereeServer]:
    # A grace period far longer than the time control: a verdict that waited for it (or for
    # the clock) would come late, and say `disconnect` or `time`.
    srv = RefereeServer(ServerConfig(port=0, game="nim", tc=TimeControl.parse(TC), auto_pair=False,
                                     policy=Policy(disconnect_grace_ms=20_000)),
                        open_storage(f"sqlite:///{tmp_path / 'ref.sqlite3'}"))
    await srv.start()
    yield srv
    await srv.stop()
    srv.storage.storage.close()


async def logged_in(srv: RefereeServer, name: str) -> Raw:
    token = "t_" + secrets.token_hex(8)
    srv.add_token(token, name)
    raw = await Raw.open(srv.port)
    await raw.hello(name, token)
    return raw


@pytest.mark.parametrize("on_move", [True, False], ids=["on-move", "waiting"])
@pytest.mark.parametrize("attack", PROTOCOL_BOTS)
async def test_a_cut_off_loses_on_protocol_at_once(server: RefereeServer, attack: str, on_move: bool) -> None:
    honest, breaker = ("beta", "alpha") if on_move else ("alpha", "beta")
    raws = {name: await logged_in(server, name) for name in ("alpha", "beta")}
    fut = server.request_game("alpha", "beta", match_id=attack)  # alpha (seat 1) moves first
    starts = [await raws[n].until("game_start") for n in ("alpha", "beta")]
    gid = starts[0]["game_id"]
    player = asyncio.ensure_future(raws[honest].play_legal())
    if on_move:
        await raws[breaker].until("your_turn")
    data, code = ATTACKS[attack]
    t0 = time.monotonic()
    raws[breaker].writer.write(data)
    err = await raws[breaker].until("error")
    summary: GameSummary = await asyncio.wait_for(fut, 20)
    took = time.monotonic() - t0
    seat = 1 if breaker == "alpha" else 2
    assert err["code"] == code and "game_id" not in err
    assert summary.verdict is not None, summary
    assert (summary.verdict["seat"], summary.verdict["kind"]) == (seat, "protocol"), summary.verdict
    assert summary.verdict["detail"].startswith(f"{code}: "), summary.verdict
    assert (summary.winner, summary.reason) == (2 - seat, "disconnect")
    assert took < 5, took  # at once: not after the grace period (20 s)
    rec = server.storage.storage.get_game(int(gid))
    assert rec is not None and rec.verdict == summary.verdict
    player.cancel()
    for r in raws.values():
        r.writer.close()


async def test_a_request_for_an_attached_connection_already_closed_fails(server: RefereeServer) -> None:
    """A hosted process that says hello and closes its socket before its game is requested:
    the request fails at once naming its seat (it used to wait for ever)."""
    handles, raws = [], []
    for name in ("alpha", "beta"):
        ours, theirs = socket.socketpair()
        token = "t_" + secrets.token_hex(8)
        server.add_token(token, name)
        handles.append(server.attach(ours))
        raws.append(await Raw.open(sock=theirs))
        await raws[-1].hello(name, token)
    assert [await asyncio.wait_for(h, 10) for h in handles] == ["alpha", "beta"]
    raws[1].writer.close()  # beta hangs up after its hello
    deadline = time.monotonic() + 10
    while any(c.hello_future is handles[1] for c in server.clients):
        assert time.monotonic() < deadline
        await asyncio.sleep(0.02)
    fut = server.request_game("alpha", "beta", clients=(handles[0], handles[1]), requeue=False)
    with pytest.raises(GameNotStarted) as e:
        await asyncio.wait_for(fut, 5)
    assert e.value.seat == 1 and "beta" in str(e.value)
    assert not server.requests
    raws[0].writer.close()


async def test_a_hosted_process_that_hangs_up_on_move_loses_by_disconnect_not_on_time(
        server: RefereeServer) -> None:
    """While the referee learns why a hosted process's connection closed (its probe waits up
    to seconds for the process to end), the game's clock waits too: at 300 ms a turn, the
    verdict used to be `time`."""
    handles, raws = [], []
    for name in ("alpha", "beta"):
        ours, theirs = socket.socketpair()
        token = "t_" + secrets.token_hex(8)
        server.add_token(token, name)

        async def probe() -> tuple[str, str] | None:
            await asyncio.sleep(2.5)  # (a process that lives on: Host.play's probe waits 2 s for its end)
            return None

        handles.append(server.attach(ours, probe=probe))
        raws.append(await Raw.open(sock=theirs))
        await raws[-1].hello(name, token)
    fut = server.request_game("alpha", "beta", clients=(handles[0], handles[1]), requeue=False)
    player = asyncio.ensure_future(raws[1].play_legal())
    await raws[0].until("your_turn")
    raws[0].writer.close()  # alpha's process hangs up on move and lives on
    summary = await asyncio.wait_for(fut, 20)
    assert summary.verdict == {"seat": 1, "kind": "disconnect",
                               "detail": "its connection closed and it did not come back"}, summary
    assert (summary.winner, summary.reason) == (1, "disconnect")
    player.cancel()
    raws[1].writer.close()


async def test_an_absent_bot_forfeits_and_a_present_one_is_waited_for(server: RefereeServer) -> None:
    alpha = await logged_in(server, "alpha")
    beta = await logged_in(server, "beta")
    beta.writer.close()  # beta hangs up before its game; its process would live on
    deadline = time.monotonic() + 10
    while any(c.bot == "beta" for c in server.clients):
        assert time.monotonic() < deadline
        await asyncio.sleep(0.02)
    t0 = time.monotonic()
    summary = await asyncio.wait_for(server.request_game("alpha", "beta", match_id="away", seed=4,
                                                         absence=Absence(gone_s=0.5)), 10)
    assert time.monotonic() - t0 >= 0.3  # it had its grace
    verdict = {"seat": 2, "kind": "disconnect",
               "detail": "its connection closed before its game and it did not come back within 0.5 s"}
    assert (summary.winner, summary.reason, summary.plies, summary.verdict) == (0, "disconnect", 0, verdict)
    [rec] = server.storage.storage.list_games(match_id="away")
    assert rec.status == "finished" and rec.verdict == verdict and rec.id == summary.game_id
    # Still away: the next game is lost at once.
    t0 = time.monotonic()
    again = await asyncio.wait_for(server.request_game("beta", "alpha", absence=Absence(gone_s=0.5)), 10)
    assert again.verdict is not None and again.verdict["seat"] == 1 and time.monotonic() - t0 < 0.5 + 0.3
    # A bot never seen: `startup` after its start-up time; none given, the request waits.
    never = await asyncio.wait_for(server.request_game("alpha", "gamma",
                                                       absence=Absence(gone_s=0.5, startup_s=0.5)), 10)
    assert never.verdict == {"seat": 2, "kind": "startup", "detail": "not connected within 0.5 s"}
    waiting = server.request_game("alpha", "gamma", absence=Absence(gone_s=0.5))
    await asyncio.sleep(1.0)
    assert not waiting.done()
    # A bot that comes back in time plays: the request waits while it is connected.
    player = asyncio.ensure_future(alpha.play_legal())
    gamma = await logged_in(server, "gamma")
    gamma_player = asyncio.ensure_future(gamma.play_legal())
    played = await asyncio.wait_for(waiting, 30)
    assert played.reason in ("rules", "turn_limit") and played.verdict is None and played.plies > 0
    for t in (player, gamma_player):
        t.cancel()
    for r in (alpha, gamma):
        r.writer.close()


# -- maag match as a real process ------------------------------------------------------------------

def _protocol_games(games: list[dict[str, Any]], code: str) -> None:
    """Each game lost by the seat that `random` does not hold, on `protocol` with `code`."""
    for g in games:
        seat = 1 if g["seat2"] == "random" else 2
        v = g["verdict"]
        assert v is not None and v["seat"] == seat and v["kind"] == "protocol", g
        assert v["detail"].startswith(f"{code}: "), g
        assert g["reason"] == "disconnect" and g["result"] == ("0-1" if seat == 1 else "1-0"), g


@pytest.mark.parametrize("bot", PROTOCOL_BOTS)
def test_match_against_a_protocol_breaker_package(bot: str, tmp_path: Path, sandbox_runs: None) -> None:
    m = play(tmp_path, bot, games=2, tc=TC, args=("--grace", "20s"))
    assert m.returncode == 0, m.describe()
    assert len(m.games) == 2, m.describe()
    _protocol_games(m.games, ATTACKS[bot][1])
    for _record, replay in m.stored():
        assert replay is not None and replay["result"]["verdict"]["kind"] == "protocol", replay


@pytest.mark.parametrize("bot", ["frame_4g", "flood"])
def test_match_against_a_protocol_breaker_command(bot: str, tmp_path: Path) -> None:
    """A bot process cut off connects again: each game it is given ends the same way."""
    cmd = command_line(tmp_path, bot, {})
    m = play(tmp_path, cmd, games=3, tc=TC, args=("--grace", "20s"))
    assert m.returncode == 0, m.describe()
    assert len(m.games) == 3, m.describe()
    _protocol_games(m.games, ATTACKS[bot][1])


def _hangup_games(m: Any, kind: str) -> None:
    assert m.returncode == 0, m.describe()
    assert [g["n"] for g in m.games] == [1, 2, 3], m.describe()
    # (A game paired just as the bot hung up is called off and stored as aborted besides.)
    stored = {r.id: (r, p) for r, p in m.stored() if r.status == "finished"}
    assert sorted(stored) == sorted(g["game_id"] for g in m.games)
    for g in m.games:
        # The opponent is `random` in the seat the hangup bot does not hold.
        seat = 1 if g["seat2"] == "random" else 2
        assert g["verdict"] is not None and g["verdict"]["seat"] == seat and g["verdict"]["kind"] == kind, g
        assert g["reason"] == "disconnect" and g["result"] == ("0-1" if seat == 1 else "1-0"), g
        record, replay = stored[g["game_id"]]
        assert record.status == "finished" and record.verdict == g["verdict"], record
        assert replay is not None and replay["result"]["verdict"] == g["verdict"]


def test_match_against_a_package_that_hangs_up_after_hello(tmp_path: Path, sandbox_runs: None) -> None:
    m = play(tmp_path, "hangup_after_hello", games=3, tc=TC)
    _hangup_games(m, "startup")
    assert all("before its game began" in g["verdict"]["detail"] for g in m.games), m.games


def test_match_against_a_command_that_hangs_up_after_hello(tmp_path: Path) -> None:
    m = play(tmp_path, command_line(tmp_path, "hangup_after_hello", {}), games=3, tc=TC,
             args=("--grace", "1s"))
    _hangup_games(m, "disconnect")
    assert m.ended - m.started < 60, m.describe()  # one grace period, then each game at once


# -- maag tournament as a real process ---------------------------------------------------------------

def tournament(tmp_path: Path, bots: list[str], *extra: str, db: Path | None = None,
               timeout: float = 240) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    db = db or tmp_path / "cup.sqlite3"
    out = tmp_path / "cup.json"
    args = [*MAAG, "tournament", "--game", "nim", "--tc", TC, "--db", str(db), "--out-json", str(out),
            "--json", *(x for b in bots for x in ("--bot", b)), *extra]
    r = subprocess.run(args, capture_output=True, text=True, cwd=tmp_path, timeout=timeout)
    assert r.returncode == 0, r.stderr[-3000:]
    return r, json.loads(out.read_text())


def test_protocol_breakers_are_struck_out_by_the_default_strikes(tmp_path: Path) -> None:
    bots = ["random", *(f"{b}={command_line(tmp_path, b, {})}" for b in PROTOCOL_BOTS)]
    r, doc = tournament(tmp_path, bots, "--format", "gauntlet", "--gauntlet", "random",
                        "--games-per-pair", "4", "--grace", "20s")
    table = {row["bot"]: row for row in doc["standings"]}
    for b in PROTOCOL_BOTS:
        assert f"{b} struck out (protocol:3/10)" in r.stderr, r.stderr[-3000:]
        assert table[b]["verdicts"] == {"protocol": 3}, table[b]
        assert table[b]["withdrawn"] == "struck out (protocol:3/10)"
        mine = [g for g in doc["game_list"] if b in (g["seat1"], g["seat2"])]
        assert sorted(g["status"] for g in mine) == ["done"] * 3 + ["withdrawn"]
        for g in mine:
            if g["status"] == "done":
                assert g["verdict"]["kind"] == "protocol", g
                assert g["verdict"]["detail"].startswith(ATTACKS[b][1]), g
    assert table["random"]["verdicts"] == {}


def _hangup_tournament_checks(doc: dict[str, Any], kind: str) -> None:
    games = doc["game_list"]
    mine = [g for g in games if "hangup" in (g["seat1"], g["seat2"])]
    others = [g for g in games if g not in mine]
    assert others and all(g["status"] == "done" and g.get("verdict") is None for g in others), others
    assert all(g["status"] in ("done", "withdrawn") for g in mine), mine
    done = [g for g in mine if g["status"] == "done"]
    assert done
    for g in done:
        seat = 1 if g["seat1"] == "hangup" else 2
        assert g["verdict"]["seat"] == seat and g["verdict"]["kind"] == kind, g
        assert g["winner"] == 3 - seat and g["reason"] == "disconnect", g


def test_a_command_that_hangs_up_forfeits_its_tournament_games(tmp_path: Path) -> None:
    bots = ["random", "first", f"hangup={command_line(tmp_path, 'hangup_after_hello', {})}"]
    r, doc = tournament(tmp_path, bots, "--games-per-pair", "2", "--grace", "1s")
    _hangup_tournament_checks(doc, "disconnect")
    assert all(g["status"] == "done" for g in doc["game_list"])  # (`disconnect` is no default strike)


def test_a_package_that_hangs_up_forfeits_and_a_tournament_resumes(tmp_path: Path,
                                                                    sandbox_runs: None) -> None:
    pkg = tmp_path / "hangup"
    pkg.mkdir()
    for f in ("bot.py", "maag-bot.toml"):
        (pkg / f).write_bytes((HOSTILE / "hangup_after_hello" / f).read_bytes())
    (pkg / "maag-bot.toml").write_text('name = "hangup"\nrun = "python3 bot.py"\n')
    bots = ["random", "first", f"hangup={pkg}"]
    db = tmp_path / "cup.sqlite3"
    # Killed once its first game is stored: the rerun resumes (a claimed game is played again)
    # and finishes, never waiting for the process that hung up.
    args = [*MAAG, "tournament", "--game", "nim", "--tc", TC, "--db", str(db), "--games-per-pair", "4",
            "--strikes", "none", *(x for b in bots for x in ("--bot", b))]
    first = subprocess.Popen(args, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not _finished_games(db):
            assert first.poll() is None or _finished_games(db), "the tournament ended before any game"
            assert time.monotonic() < deadline, "no game finished in 120 s"
            time.sleep(0.1)
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    t0 = time.monotonic()
    r, doc = tournament(tmp_path, bots, "--games-per-pair", "4", "--strikes", "none", db=db)
    assert time.monotonic() - t0 < 180
    assert all(g["status"] == "done" for g in doc["game_list"]), doc["game_list"]
    assert len(doc["game_list"]) == 12
    _hangup_tournament_checks(doc, "startup")
    table = {row["bot"]: row for row in doc["standings"]}
    assert table["hangup"]["verdicts"] == {"startup": 8}
    # Run once more: finished, it plays nothing and says the same.
    again, doc2 = tournament(tmp_path, bots, "--games-per-pair", "4", "--strikes", "none", db=db, timeout=60)
    assert doc2["standings"] == doc["standings"]


def test_a_resumed_tournament_adopts_a_stored_forfeit_with_its_verdict(tmp_path: Path) -> None:
    """A runner killed after the referee stored a forfeit but before the schedule said so: the
    next run adopts the result with its verdict, which the strike policy then counts."""
    db = f"sqlite:///{tmp_path / 'r.sqlite3'}"
    spec = formats.TournamentSpec(format="round-robin", bots=(formats.BotSpec("a"), formats.BotSpec("b")),
                                  games_per_pair=4, seed=1, extra=(("strikes", "protocol:1/10"),))
    store = open_tournament_store(db)
    storage = open_storage(db)
    try:
        store.open_tournament(spec.id, spec.to_dict())
        store.add_games(spec.id, formats.schedule_round(spec, 0, []))
        [g] = store.claim(spec.id, 1)
        verdict = {"seat": 1, "kind": "protocol", "detail": "frame_too_large: frame of 4294967295 bytes"}
        gid = storage.create_game("nim", {}, (g.seat0, g.seat1), TC, formats.match_id(spec.id, g.key))
        storage.finish_game(gid, {"seed": g.seed, "result": {"winner": 1, "reason": "disconnect", "plies": 0,
                                                             "verdict": verdict}})
        assert recover(store, storage, spec.id) == (1, 0)
        row = next(r for r in store.rows(spec.id) if r.game.key == g.key)
        assert (row.status, row.game_id, row.winner, row.verdict) == ("done", gid, 1, verdict)
        assert {b: str(r) for b, r in formats.struck(spec, store.rows(spec.id)).items()} == {
            g.seat0: "protocol:1/10"}
    finally:
        store.close()
        storage.close()


def _finished_games(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        st = SQLiteStorage(db)
    except Exception:
        return 0
    try:
        return sum(g.status == "finished" for g in st.list_games(limit=1000))
    except Exception:
        return 0
    finally:
        st.close()

