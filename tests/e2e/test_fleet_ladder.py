"""One ladder over four referee processes (`maag ladder --fleet` on one PostgreSQL and one
port): real processes, SDK bots spread over them by the kernel (tests/e2e/pacing_bot.py).

- the ladder is one ladder: games are between bots connected to different processes (a seat
  linked to the game's host, fleet/links.py) as often as pairing blind to where bots are
  connected gives (80% with four bots on each process), and a free bot is paired within a
  second when an opponent is free;
- `--per-bot` holds across the fleet (bots offer two slots each, the ladder allows one game
  per bot), also while the scheduler is killed and another process takes its place;
- the scheduler killed (-9): another process schedules within one lease; no game gets two
  results; another process stopped (SIGTERM): its games are handed over and finish elsewhere.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from functools import partial

from maag.server.storage.base import open_storage

from .conftest import stop_process, until
from .test_fleet_takeover import BOT, Fleet, all_over, q, running_on
from .test_fleet_takeover import fleet as fleet  # noqa: F401  (the fixture)

LEASE_S = 2.0
PROCESSES = 4


def ladder(fleet: Fleet, n: int) -> subprocess.Popen[bytes]:
    """One more `maag ladder --fleet` process on the fleet's port; returns once it listens."""
    port_file = fleet.tmp / f"lad{n}.port"
    args = ["--fleet", "--db", fleet.url, "--reuse-port", "--port", str(fleet.port), "--port-file",
            str(port_file), "--map", "a-tiny", "--option", "turn_limit=8", "--tc", "5s", "--grace", "20s",
            "--lease", str(LEASE_S), "--max-games-per-minute", "0", "--per-bot", "1", "-v",
            "--spill-dir", str(fleet.tmp / f"spill{n}")]
    p = subprocess.Popen([sys.executable, "-m", "maag.server", "ladder", *args],  # noqa: S603
                         stdout=open(fleet.tmp / f"lad{n}.out", "wb"),  # noqa: SIM115
                         stderr=open(fleet.tmp / f"lad{n}.log", "wb"))  # noqa: SIM115
    fleet.procs.append(p)
    deadline = time.monotonic() + 30
    while not (port_file.exists() and port_file.read_text().strip()):
        assert p.poll() is None and time.monotonic() < deadline, (fleet.tmp / f"lad{n}.log").read_text()
        time.sleep(0.05)
    fleet.port = int(port_file.read_text())
    return p


async def bots_evenly(fleet: Fleet, per_process: int, concurrency: int) -> None:
    """PROCESSES * per_process SDK bots, each connected to the port the fleet shares, the kernel
    picking its process: a bot that lands on a process that has its share already is stopped
    and started again (a new connection, a new pick) until every process has its share."""
    url = fleet.url
    n = PROCESSES * per_process
    st = open_storage(url)
    try:
        tokens = [st.add_bot(f"bot{i}") for i in range(n)]
    finally:
        st.close()

    def where() -> dict[str, str]:
        return {str(b): str(s) for b, s in q(url, "SELECT bot, server FROM connections")}

    procs: dict[int, asyncio.subprocess.Process] = {}
    placed: dict[int, str] = {}
    pending = list(range(n))
    while pending:
        for i in pending:
            with open(fleet.tmp / f"bot{i}.log", "ab") as log:
                procs[i] = await asyncio.create_subprocess_exec(
                    sys.executable, BOT, f"127.0.0.1:{fleet.port}", "--concurrency", str(concurrency),
                    "--delay-ms", "40", "--reconnect", "60", stdout=asyncio.subprocess.DEVNULL, stderr=log,
                    env={**os.environ, "MAAG_TOKEN": tokens[i]})
        waiting = [f"bot{i}" for i in pending]
        await until(partial(_all_in, frozenset(waiting), where), 60)
        at = where()
        counts = Counter(placed.values())
        again = []
        for i in pending:
            server = at[f"bot{i}"]
            if counts[server] < per_process:
                placed[i] = server
                counts[server] += 1
            else:
                await stop_process(procs[i])
                again.append(i)
        gone = [f"bot{i}" for i in again]
        await until(partial(_none_in, frozenset(gone), where), 60)
        pending = again
    fleet.bots += [procs[i] for i in range(n)]


def _all_in(names: frozenset[str], where: Callable[[], dict[str, str]]) -> bool:
    return names <= set(where())


def _none_in(names: frozenset[str], where: Callable[[], dict[str, str]]) -> bool:
    return not names & set(where())


def ts(text: str) -> float:
    return dt.datetime.fromisoformat(text).timestamp()


def finished(url: str) -> int:
    rows = q(url, "SELECT COUNT(*) FROM games WHERE match_id = 'ladder:main' AND status = 'finished'")
    return int(rows[0][0])


async def test_one_ladder_over_four_processes_survives_its_scheduler(fleet: Fleet) -> None:
    url = fleet.url
    procs = [ladder(fleet, 0)]
    await until(lambda: b"Taking over" in (fleet.tmp / "lad0.out").read_bytes(), 20)  # the first leads
    procs += [ladder(fleet, i) for i in range(1, PROCESSES)]
    await bots_evenly(fleet, 4, 2)
    settled = time.time()  # (each bot where it stays until the kill)
    await until(lambda: finished(url) >= 100, 180)
    epoch = q(url, "SELECT epoch FROM ladder_leaders WHERE name = 'main'")[0][0]
    at = {str(b): str(s) for b, s in q(url, "SELECT bot, server FROM connections")}
    spread = list(Counter(at.values()).values())
    procs[0].send_signal(signal.SIGKILL)
    killed = time.time()
    assert procs[0].wait(10) == -signal.SIGKILL
    await until(lambda: q(url, "SELECT COUNT(*) FROM fleet_assignments WHERE epoch > %s", epoch)[0][0], 30)
    first_new = q(url, "SELECT MIN(created) FROM fleet_assignments WHERE epoch > %s", epoch)[0][0]
    took_over_s = float(first_new) - killed
    assert sum(b"Taking over" in (fleet.tmp / f"lad{i}.out").read_bytes() for i in range(1, PROCESSES)) == 1
    n0 = finished(url)
    await until(lambda: finished(url) >= n0 + 30, 120)
    # A process that is not the scheduler, stopped (SIGTERM): it hands its games over.
    leading = [i for i in range(1, PROCESSES) if b"Taking over" in (fleet.tmp / f"lad{i}.out").read_bytes()]
    quitter = procs[next(i for i in range(1, PROCESSES) if i not in leading)]
    await until(lambda: bool(running_on(url, fleet.server_id(quitter))), 30)
    hosted = running_on(url, fleet.server_id(quitter))
    quitter.send_signal(signal.SIGTERM)
    assert await asyncio.to_thread(quitter.wait, 60) == 0
    await until(lambda: all_over(url, hosted), 60)
    handed = q(url, "SELECT status FROM games WHERE id = ANY(%s)", hosted)
    assert all(s == "finished" for (s,) in handed), handed
    n1 = finished(url)
    await until(lambda: finished(url) >= n1 + 10, 120)
    for p in procs[1:]:
        if p is quitter:
            continue
        p.send_signal(signal.SIGINT)
    await asyncio.gather(*(asyncio.to_thread(p.wait, 60) for p in procs[1:]))
    await fleet.told()

    rows = q(url, "SELECT g.id, g.seat0, g.seat1, g.created, r.finished, g.status FROM games g "
                  "JOIN results r ON r.game_id = g.id WHERE g.match_id = 'ladder:main' ORDER BY g.id")
    assert q(url, "SELECT game_id FROM results GROUP BY game_id HAVING COUNT(*) > 1") == []
    # --per-bot 1 across the fleet: no bot ever in two ladder games at once.
    spans: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for _gid, s0, s1, created, over, _status in rows:
        for b in (s0, s1):
            spans[b].append((ts(created), ts(over)))
    for b, ss in spans.items():
        ss.sort()
        for (_a0, a1), (b0, _b1) in zip(ss, ss[1:], strict=False):
            assert b0 >= a1 - 0.005, f"{b} played two ladder games at once: {ss}"
    # Cross-process games while the four processes ran, every bot in its place: the host of
    # seat 1 is not the referee of seat 2's bot. (Four bots on each process: pairing blind to
    # processes gives 80% on average.)
    started = q(url, "SELECT seat0, seat1, host, server1 FROM fleet_assignments WHERE status = 'started' "
                     "AND created >= %s AND created < %s", settled, killed)
    cross = sum(1 for _a, _b, h, s in started if h != s) / len(started)
    bots = sum(spread)
    expected = 1 - sum(n * (n - 1) for n in spread) / (bots * (bots - 1))
    # These games are no independent sample: the bots of games that end together are paired
    # among themselves (a pair often twice or more), so the share varies by about 5 points
    # from run to run, not the 4 of independent games. What pairing blind to the processes
    # gives with these very games: the bots' processes shuffled among them.
    pairs = [(str(a), str(b)) for a, b, _h, _s in started]
    blind = blind_shares(pairs, at, random.Random(44), 10000)
    low = blind[int(0.001 * len(blind))]
    # Pairing: after a game, how long a bot waited for its next one while another bot was free.
    waits = []
    for b, ss in spans.items():
        others = {o: oss for o, oss in spans.items() if o != b}
        for (_a0, a1), (b0, _b1) in zip(ss, ss[1:], strict=False):
            if killed - 1 <= b0 and a1 <= killed + LEASE_S + 20:
                continue  # (the kill's window: its games wait for their bots' reconnection)
            t = _first_free_other(a1, b0, others)
            if t is not None:
                waits.append(b0 - t)
    waits.sort()
    p99 = waits[int(0.99 * (len(waits) - 1))]
    print(f"\nbots per process {spread}: {expected:.0%} of games across processes expected")
    median = waits[len(waits) // 2]
    print(f"\n{len(rows)} ladder games over four processes; of the {len(started)} paired while every bot "
          f"was in its place ({len({frozenset(p) for p in pairs})} different pairs), {cross:.0%} between "
          f"bots on different processes (blind to processes, the same pairs give "
          f"{sum(blind) / len(blind):.0%} on average, under {low:.0%} once in a thousand); pairing wait "
          f"with an opponent free: median {median * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms ({len(waits)} "
          f"waits); the scheduler killed, the next assigned {took_over_s:.2f} s later; a process stopped "
          f"handed {len(hosted)} games over, all finished")
    assert sorted(spread) == [4] * PROCESSES and abs(expected - 0.8) < 1e-9
    assert cross >= low, "the ladder pairs bots of one process together more often than chance"
    assert p99 <= 1.0
    assert took_over_s <= LEASE_S
    st = open_storage(url)
    try:
        assert st.get_replay(rows[-1][0]) is not None
    finally:
        st.close()


def blind_shares(pairs: list[tuple[str, str]], at: dict[str, str], rng: random.Random,
                 n: int) -> list[float]:
    """The share of `pairs` between bots on different processes for `n` random placements of
    the bots (the processes of `at` shuffled among them), sorted: what the games would give if
    pairing were blind to where the bots are."""
    bots = sorted(at)
    index = {b: i for i, b in enumerate(bots)}
    games = [(index[a], index[b]) for a, b in pairs]
    places = [at[b] for b in bots]
    shares = []
    for _ in range(n):
        rng.shuffle(places)
        shares.append(sum(places[a] != places[b] for a, b in games) / len(games))
    return sorted(shares)


def _first_free_other(after: float, before: float,
                      others: dict[str, list[tuple[float, float]]]) -> float | None:
    """The first moment in [after, before) at which some other bot was in no ladder game, or None."""
    moments = sorted({after, *[x1 for ss in others.values() for _x0, x1 in ss if after <= x1 < before]})
    for t in moments:
        if any(not any(x0 <= t < x1 for x0, x1 in ss) for ss in others.values()):
            return t
    return None
