"""`maag bench fleet`: a fleet ladder's games per minute with 1, 2, 3... members.

Each point is one fleet of M `maag ladder --fleet --reuse-port --submitted also` processes
on one port and a fresh PostgreSQL database of its own (made on the server that `--db`
names, dropped afterwards), with the same participants whatever M:

- `hosted` submitted versions of the bench's random package (packages/random: one random
  legal action per message), active at once, each game a fresh sandboxed process on the
  member the scheduler places it on (at most `slots` hosted games per member);
- `bots` connected bots (`maag bot run random`, one game at a time), spread by the kernel
  over the members as they connect to the shared port.

With `netns` (`--netns`), the members are machines of the test bed instead (bench/netbed.py,
as tests/e2e/test_fleet_machines.py runs them): each in a network namespace of its own with
its own address, on port 7878, its hosted bots sandboxed inside it; the bots connect to
HAProxy in front of them, and the members reach the database through HAProxy too (root,
iproute2 and haproxy).

The point starts every member, waits until each has published its hosted slots (all up),
starts the bots, lets the ladder run `warmup` seconds, then counts the ladder games stored
as finished in the next `seconds` (from the database: those stored at the window's end less
those at its start, so a game counts once, where it ended), those of them with a hosted
seat, and the games aborted meanwhile.
Everything it started is stopped before the next point. The points alternate (1, 2, 3, 1,
2, 3, ...) so that a drift of the machine spreads over all of them; each is reported as the
median over `runs` and its spread (lowest, highest).

On a machine shared with other work the figures say little: the members, their hosted
processes and the bots share its cores (docs/benchmarks.md says which figures were taken
on a quiet machine).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from maag.server.bench.netbed import BOT_PORT, NetBed, need_bed

__all__ = ["FleetBench", "fresh_database", "run_point", "run_fleet_bench", "register_cli"]

PACKAGE = Path(__file__).resolve().parent / "packages" / "random"
MATCH_ID = "ladder:main"
UP_TIMEOUT_S = 60.0
"""How long the members may take to be up (listening, their hosted slots published)."""


@dataclass(frozen=True)
class FleetBench:
    """What every point of the bench runs (see the module)."""

    seconds: float = 60.0
    warmup: float = 10.0
    hosted: int = 4
    bots: int = 4
    slots: int = 2
    game: str = "heroes"
    tc: str = "1s"
    per_bot: int = 1
    netns: bool = False
    """Each member in a network namespace of its own behind HAProxy (see the module)."""


@contextlib.contextmanager
def fresh_database(server_url: str) -> Iterator[str]:
    """A new, empty database on the PostgreSQL server of `server_url` (its role may create
    databases), with maag's schema; yields its URL and drops it afterwards."""
    import psycopg
    from maag.server.storage.base import open_storage

    name = "maag_bench_fleet_" + uuid.uuid4().hex[:12]
    with psycopg.connect(server_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    url = urlsplit(server_url)._replace(path="/" + name).geturl()
    try:
        open_storage(url).close()  # the schema, before any member reads it
        yield url
    finally:
        with psycopg.connect(server_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _query(url: str, sql: str) -> list[tuple[Any, ...]]:
    from maag.server.storage.backend import open_database

    db = open_database(url)
    try:
        return [tuple(r) for r in db.query(sql)]
    finally:
        db.close()


def _participants(url: str, spec: FleetBench) -> list[str]:
    """Activate the hosted versions (h1@1...) and register the connected bots: their tokens."""
    from maag.server.hosting.api import pack, submit
    from maag.server.storage.base import open_storage
    from maag.server.storage.submissions import open_submission_store

    store = open_submission_store(url)
    try:
        data, pkg = pack(PACKAGE)
        for i in range(spec.hosted):  # active at once: the bench measures the fleet, not validation
            v = submit(store, f"h{i + 1}", data, pkg)
            if not store.move(f"h{i + 1}", v.version, ("pending",), "active"):
                raise RuntimeError(f"h{i + 1}: its version could not be made active")
    finally:
        store.close()
    st = open_storage(url)
    try:
        return [st.add_bot(f"c{i + 1}") for i in range(spec.bots)]
    finally:
        st.close()


def _reserve_port() -> socket.socket:
    """A socket bound (not listening) with SO_REUSEPORT to a free port: it keeps the port for
    the members, which bind it too, without taking any of their connections."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    s.bind(("127.0.0.1", 0))
    return s


class _Point:
    """The processes of one point: members and bots, their logs in `tmp`."""

    def __init__(self, url: str, spec: FleetBench, tmp: Path, bed: NetBed | None = None) -> None:
        self.url, self.spec, self.tmp, self.bed = url, spec, tmp, bed
        self.members: list[subprocess.Popen[bytes]] = []
        self.bots: list[subprocess.Popen[bytes]] = []

    def _spawn(self, args: list[str], log: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        with open(self.tmp / log, "wb") as err:  # (a file: a pipe nobody reads would block it)
            return subprocess.Popen([sys.executable, "-m", "maag.server", *args], env=env,  # noqa: S603
                                    stdout=subprocess.DEVNULL, stderr=err)

    def start_members(self, n: int, port: int) -> None:
        s, bed = self.spec, self.bed
        for k in range(n):
            args = ["--port-file", str(self.tmp / f"member{k}.port"), "--game", s.game, "--tc", s.tc,
                    "--per-bot", str(s.per_bot), "--submitted", "also", "--slots", str(s.slots),
                    "--max-games-per-minute", "0", "--rating-interval", "0",
                    "--log-dir", str(self.tmp / f"logs{k}"), "--spill-dir", str(self.tmp / f"spill{k}")]
            if bed is None:
                self.members.append(self._spawn(["ladder", "--fleet", "--db", self.url, "--reuse-port",
                                                 "--port", str(port), *args], f"member{k}.log"))
                continue
            m = bed.members[k]  # (its machine: its address, the database through HAProxy)
            argv = [sys.executable, "-m", "maag.server", "ladder", "--fleet", "--db", bed.db_url,
                    "--host", m.address, "--port", str(BOT_PORT), *args]
            self.members.append(bed.start(m, argv, self.tmp / f"member{k}.log"))

    def wait_up(self) -> None:
        """Until every member listens and has published its hosted slots (RuntimeError if one
        exits or UP_TIMEOUT_S passes)."""
        deadline = time.monotonic() + UP_TIMEOUT_S
        while True:
            self.check()
            files = [self.tmp / f"member{k}.port" for k in range(len(self.members))]
            ports = all(f.exists() and f.read_text().strip() for f in files)
            if ports and _query(self.url, "SELECT COUNT(*) FROM fleet_hosts")[0][0] >= len(self.members):
                if self.bed is not None:  # (HAProxy sends no bot to a member before its checks pass)
                    self.bed.wait_balanced(max(1.0, deadline - time.monotonic()))
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"the fleet's {len(self.members)} member(s) not up within "
                                   f"{UP_TIMEOUT_S:g} s")
            time.sleep(0.1)

    def start_bots(self, tokens: list[str], port: int) -> None:
        address = self.bed.bots_address if self.bed is not None else f"127.0.0.1:{port}"
        for i, token in enumerate(tokens):
            self.bots.append(self._spawn(
                ["bot", "run", "random", "--connect", address, "--concurrency", "1",
                 "--reconnect", "30"], f"bot{i}.log", env={**os.environ, "MAAG_TOKEN": token}))

    def check(self) -> None:
        for k, p in enumerate(self.members):
            if p.poll() is not None:
                tail = (self.tmp / f"member{k}.log").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"member {k} exited with status {p.returncode}:\n{tail}")

    def stop(self) -> None:
        """Stop the bots, then the members (Ctrl-C twice: stop pairing, abort what is left),
        killing whatever is still there after a while."""
        for p in self.bots:
            if p.poll() is None:
                p.terminate()
        for p in self.members:
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
        _wait_all(self.bots + self.members, 2.0)
        for p in self.members:
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
        _wait_all(self.members, 20.0)
        for p in self.bots + self.members:
            if p.poll() is None:
                p.kill()
                p.wait()


def _wait_all(procs: list[subprocess.Popen[bytes]], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    for p in procs:
        with contextlib.suppress(subprocess.TimeoutExpired):
            p.wait(max(0.0, deadline - time.monotonic()))


def _counts(url: str) -> tuple[int, int, int, dict[str, int]]:
    """Ladder games stored finished, aborted, finished with a hosted seat (NAME@VERSION), and
    finished per member (referee id)."""
    rows = _query(url, "SELECT server, status, STRPOS(seat0 || seat1, '@') > 0, COUNT(*) FROM games "
                       f"WHERE match_id = '{MATCH_ID}' GROUP BY 1, 2, 3")
    per: dict[str, int] = {}
    for server, status, _h, n in rows:
        if status == "finished":
            per[str(server)] = per.get(str(server), 0) + int(n)
    return (sum(per.values()), sum(int(n) for _s, st, _h, n in rows if st == "aborted"),
            sum(int(n) for _s, st, h, n in rows if st == "finished" and h), per)


def run_point(server_url: str, members: int, spec: FleetBench,
              tick: Callable[[float], None] | None = None) -> dict[str, Any]:
    """One point (see the module): games per minute of a fleet of `members` on a fresh
    database of the server `server_url`. `tick(f)`: the point's fraction done (0..1), told
    about every second of the warm-up and the window."""
    with fresh_database(server_url) as url, tempfile.TemporaryDirectory(prefix="maag-bench-fleet-") as tmp:
        tokens = _participants(url, spec)
        bed = None
        if spec.netns:
            if why := need_bed():
                raise RuntimeError(why)
            bed = NetBed(Path(tmp), members, url).up()
        point = _Point(url, spec, Path(tmp), bed)
        reserved = _reserve_port()
        port = reserved.getsockname()[1]
        try:
            t0 = time.monotonic()
            point.start_members(members, port)
            point.wait_up()
            up_s = time.monotonic() - t0
            point.start_bots(tokens, port)
            span = spec.warmup + spec.seconds
            start = time.monotonic()

            def wait_until(t: float) -> None:
                while (now := time.monotonic()) < t:
                    time.sleep(min(1.0, t - now))
                    point.check()
                    if tick is not None:
                        tick(min(1.0, (time.monotonic() - start) / span))

            wait_until(start + spec.warmup)
            done0, aborted0, hosted0, per0 = _counts(url)
            w0 = time.monotonic()
            wait_until(w0 + spec.seconds)
            done1, aborted1, hosted1, per1 = _counts(url)
            window = time.monotonic() - w0
        finally:
            point.stop()
            reserved.close()
            if bed is not None:
                bed.down()
        games = done1 - done0
        share = sorted((per1.get(s, 0) - per0.get(s, 0) for s in per1), reverse=True)
        return {"members": members, "games": games, "games_per_min": round(games * 60.0 / window, 2),
                "hosted_games": hosted1 - hosted0, "aborted": aborted1 - aborted0,
                "per_member": share + [0] * (members - len(share)),
                "window_s": round(window, 2), "up_s": round(up_s, 2)}


def run_fleet_bench(server_url: str, members: list[int], runs: int, spec: FleetBench,
                    progress: Callable[[float, str], None] | None = None) -> dict[str, Any]:
    """Every point `runs` times, alternating (see the module): each point's runs, median and
    spread. `progress(points done, what now)`, in points (fractions within one)."""
    points: dict[int, list[dict[str, Any]]] = {m: [] for m in members}
    done = 0
    for r in range(runs):
        for m in members:
            label = f"{m} member(s), run {r + 1}/{runs}"
            if progress is not None:
                progress(done, label)
            base = done

            def tick(f: float, base: int = base, label: str = label) -> None:
                if progress is not None:
                    progress(base + f, label)

            points[m].append(run_point(server_url, m, spec, tick))
            done += 1
    if progress is not None:
        progress(done, "done")
    out: list[dict[str, Any]] = []
    for m, rs in points.items():
        rates = [p["games_per_min"] for p in rs]
        out.append({"members": m, "games_per_min_median": round(statistics.median(rates), 2),
                    "games_per_min_low": min(rates), "games_per_min_high": max(rates),
                    "aborted": sum(p["aborted"] for p in rs),
                    "hosted_share": sum(p["hosted_games"] for p in rs) / max(1, sum(p["games"] for p in rs)),
                    "runs": rs})
    return {"spec": asdict(spec), "runs": runs, "points": out}


def _members(text: str) -> list[int]:
    try:
        ms = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        ms = []
    if not ms or any(m < 1 for m in ms):
        raise argparse.ArgumentTypeError(f"{text!r}: member counts separated by commas, each at least 1 "
                                         "(1,2,3)")
    return ms


def register_cli(bsub: Any, machine: Any) -> None:
    from maag.engine import registry

    p = bsub.add_parser("fleet", help="a fleet ladder's games per minute with 1, 2, 3 members (PostgreSQL)",
                        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--db", default=os.environ.get("MAAG_TEST_POSTGRES"), metavar="URL",
                   help="a PostgreSQL server (postgresql://USER:PASSWORD@HOST:PORT/DB) whose role may create "
                        "databases: each point gets a fresh database there, dropped afterwards "
                        "(default: $MAAG_TEST_POSTGRES)")
    p.add_argument("--members", type=_members, default=[1, 2, 3], metavar="M,M,...",
                   help="the fleet sizes measured (default 1,2,3)")
    p.add_argument("--runs", type=int, default=3, help="runs of each point, alternating (default 3)")
    p.add_argument("--seconds", type=float, default=60.0, help="the measured window of each run (default 60)")
    p.add_argument("--warmup", type=float, default=10.0,
                   help="seconds of play before the window, once all are up (default 10)")
    p.add_argument("--hosted", type=int, default=4, help="submitted versions hosted by the fleet (default 4)")
    p.add_argument("--bots", type=int, default=4, help="connected bots (`maag bot run random`, default 4)")
    p.add_argument("--slots", type=int, default=2, help="hosted games at once per member (default 2)")
    p.add_argument("--game", default=registry.default(), choices=registry.names(),
                   help=f"the game (default {registry.default()})")
    p.add_argument("--tc", default="1s", help="the ladder's time control (default 1s)")
    p.add_argument("--per-bot", type=int, default=1, help="the ladder's --per-bot (default 1)")
    p.add_argument("--netns", action="store_true",
                   help="each member in a network namespace of its own with its own address, behind HAProxy "
                        "(the test bed of tests/e2e/test_fleet_machines.py: root, iproute2, haproxy)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")

    def run(args: argparse.Namespace) -> int:
        import json

        from rich.console import Console
        from rich.progress import Progress
        from rich.table import Table

        if not args.db or not args.db.startswith(("postgresql://", "postgres://")):
            print("maag bench fleet: --db postgresql://... (a server whose role may create databases), "
                  "or $MAAG_TEST_POSTGRES", file=sys.stderr)
            return 2
        if args.runs < 1 or args.seconds <= 0 or args.warmup < 0 or args.hosted + args.bots < 2:
            print("maag bench fleet: --runs at least 1, --seconds positive, --warmup not negative, and "
                  "at least two participants (--hosted, --bots)", file=sys.stderr)
            return 2
        spec = FleetBench(args.seconds, args.warmup, args.hosted, args.bots, args.slots, args.game, args.tc,
                          args.per_bot, args.netns)
        total = args.runs * len(args.members)
        with Progress(*Progress.get_default_columns(), console=Console(stderr=True), transient=True) as prog:
            task = prog.add_task("bench fleet", total=total)
            try:
                res = run_fleet_bench(args.db, args.members, args.runs, spec,
                                      progress=lambda d, what: prog.update(
                                          task, completed=d, description=f"bench fleet: {what}"))
            except RuntimeError as e:
                print(f"maag bench fleet: {e}", file=sys.stderr)
                return 1
        res["machine"] = machine()
        if args.json:
            print(json.dumps(res))
            return 0
        console = Console()
        table = Table(title=f"maag bench fleet --game {args.game} --tc {args.tc}"
                            f"{' --netns' if args.netns else ''}: ladder games per "
                            f"minute, {args.hosted} hosted versions and {args.bots} connected bots, "
                            f"{args.slots} hosted slots per member, {args.seconds:g} s windows after "
                            f"{args.warmup:g} s of warm-up, {args.runs} run(s) each")
        for col in ("members", "games/min (median)", "spread (low-high)", "runs", "with a hosted seat",
                    "aborted", "games per member (last run)"):
            table.add_column(col, justify="right")
        for pt in res["points"]:
            table.add_row(str(pt["members"]), f"{pt['games_per_min_median']:,.1f}",
                          f"{pt['games_per_min_low']:,.1f}-{pt['games_per_min_high']:,.1f}",
                          ", ".join(f"{r['games_per_min']:,.1f}" for r in pt["runs"]),
                          f"{pt['hosted_share']:.0%}", str(pt["aborted"]),
                          " / ".join(map(str, pt["runs"][-1]["per_member"])))
        console.print(table)
        m = res["machine"]
        console.print(f"machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}; load average "
                      f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}", highlight=False)
        return 0

    p.set_defaults(func=run)
