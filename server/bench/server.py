"""`maag bench server`: referee throughput and latency on loopback.

For each level (1, 10 and 100 concurrent games), a fresh referee runs as its own process
(`maag serve`, SQLite in a temporary folder, no time limit, no rate limit) and one client
process (two from 10 games on) opens two connections per game: random bots that ask for the legal actions and
answer every `your_turn` with one `act` (the most messages per action a bot can make).
With `c_bots` the act bots are instead one C program per client process
(server/bench/c/bench_bot.c, built with the system's C compiler on first use and kept in
~/.cache/maag): the same moves at a few microseconds each, so that on a machine of few cores
the referees, not their bots, bound the throughput.
(`mode` "turn": bots that send each whole random turn as one `turn` message instead,
played out on the engine's copy of the observation; "lean": act bots that decode only the keys
they use and the legal action they pick, skipping the observation unread, for measuring what
several referee processes gain on a machine too small for ordinary bots to keep them busy.)
The referee pairs them and they play
game after game. Once every bot is logged in, after a warm-up, for `seconds`:

- actions_per_s: actions the referee accepted, counted by the bots, per second;
- p50_ms / p99_ms: referee time, measured inside the referee from the moment a bot's
  message is read to the moment its replies (result, events, the next your_turn) are
  written, for every act or turn (wall clock: it includes any time the referee's process
  was not running because other processes had the cores);
- cpu_p50_ms / cpu_p99_ms: the same interval in CPU time of the referee's thread (the
  work itself, without preemption);
- rtt_p50_ms / rtt_p99_ms: the same seen by the bots, from writing an act to reading the
  next your_turn of that game (includes both processes' event loops and the kernel);
- cpu_load, bots_cpu_load: the cores the referee processes, and the bots' processes, used
  over the window (CPU seconds per second); other_cpu_load: the cores the rest of the
  machine used meanwhile (/proc/stat's busy time less those two: interrupts, and whatever
  else runs; near 0.1 on a quiet machine, it says whether a run shared the cores);
- cpu_us_per_message: the referee process's whole CPU time (user and system, all threads:
  /proc) per bot message (`act` or `turn`) over the measured window; messages_per_core_s:
  the messages one referee core takes per second at that cost;
- bare_cpu_us_per_message and cpu_ratio: each run of the referee is followed by one of the
  bare exchange (server/bench/bare.py: an asyncio server on the same event loop that decodes
  each frame and answers it with a ready-made `your_turn`) with the same bots; the ratio of
  the referee's CPU per message to the bare exchange's is taken per run, then the median
  (`--no-bare` leaves it out);
- floor_cpu_us_per_message and floor_ratio (`--floor`): each bare run is followed by one of the
  two-write exchange (the bare exchange that also writes an action `event` to the other
  connection of a pair for every frame: the least any referee does for an act, two writes to
  two sockets) and its CPU per message over the bare exchange's, the median of the runs'
  ratios: how much of `cpu_ratio` is the I/O a referee cannot skip.

`--servers K` runs K referee processes on one port (SO_REUSEPORT) and one database; the
bots' connections spread over them and each pairs its own. `--nice-bots` starts the bots'
processes at the lowest scheduling priority, so that on a machine whose cores the bots
share the referees have them first: what K processes gain over one is then theirs.

With `spectators` N > 0 the referee also serves its web view (`--web`) and one more process
holds N WebSocket spectators of the running games (server/bench/spectators.py), started
before the bots at the lowest scheduling priority (people's browsers run on their own
machines, not on the referee's cores); `spectator_frames_per_s` counts the snapshots they
were pushed per second during the bots' measured window. `maag bench server --spectators N`
measures each level without and with them, alternating, and reports the ratio of the
throughputs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import msgpack

LEVELS = (1, 10, 100)
LOGIN_TIMEOUT = 60.0  # seconds for every bench bot to be logged in before the warm-up starts


def _pct(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


# -- the client process ---------------------------------------------------------------------

class _Bot:
    def __init__(self, token: str, rng: random.Random, stats: dict[str, Any], mode: str) -> None:
        self.token, self.rng, self.stats, self.mode = token, rng, stats, mode
        self.sent_at: dict[str, float] = {}
        self.games: dict[str, Any] = {}

    async def run(self, port: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"MAAG 1 msgpack\n")
        self._send(writer, {"type": "hello", "v": 1, "name": "bench", "token": self.token,
                            "games": ["heroes"], "want_legal": self.mode in ("act", "lean")})
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
                self._send(writer, {"type": "act", "v": 1, "game_id": gid, "action": action})
            else:
                self._send(writer, {"type": "turn", "v": 1, "game_id": gid, "actions": self._turn(gid, m)})
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


async def _client(port: int, tokens: list[str], warmup: float, seconds: float, mode: str) -> dict[str, Any]:
    stats: dict[str, Any] = {"measuring": False, "actions": 0, "messages": 0, "rtt": [], "errors": 0,
                             "bots": len(tokens),
                             "welcomed": 0, "all_welcomed": asyncio.Event()}
    rng = random.Random(1)
    tasks = [asyncio.create_task(_Bot(t, random.Random(rng.random()), stats, mode).run(port)) for t in tokens]
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


# -- one level --------------------------------------------------------------------------------

def bench_db(tmp: Path, bots: int, prefix: str) -> tuple[Path, list[str]]:
    """An SQLite database in `tmp` with `bots` registered bots; returns it and their tokens."""
    from maag.server.storage.base import SQLiteStorage

    db = tmp / "bench.sqlite3"
    st = SQLiteStorage(db)
    try:
        return db, [st.add_bot(f"{prefix}{i}") for i in range(bots)]
    finally:
        st.close()


def start_referee(tmp: Path, db: Path, name: str, port: int = 0,
                  *extra: str) -> tuple[subprocess.Popen[bytes], int]:
    """A `maag serve` process for a benchmark, with no time limit and none of its limits
    against abuse (message rate, games per minute, connections before hello), on `port` (0:
    any free one); returns it once it listens, and its port."""
    port_file = tmp / f"{name}.port"
    proc = subprocess.Popen(
        [sys.executable, "-m", "maag.server", "serve", "--port", str(port), "--port-file", str(port_file),
         "--db", str(db), "--tc", "inf", "--max-rate", "0", "--max-games-per-minute", "0",
         "--max-pending-per-address", "0", "--max-pending", "0", "--spill-dir", str(tmp / "spill"), "-q",
         *extra], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    end = time.monotonic() + 30
    while not (port_file.exists() and port_file.read_text().strip()):
        if time.monotonic() > end or proc.poll() is not None:
            proc.kill()
            proc.wait()
            raise RuntimeError("the referee did not start")
        time.sleep(0.05)
    return proc, int(port_file.read_text())


def c_bench_bot() -> Path:
    """The C bench bot (server/bench/c/bench_bot.c) as an executable, built with the system's C
    compiler the first time and kept in the user's cache folder under its source's hash."""
    src = Path(__file__).with_name("c") / "bench_bot.c"
    code = src.read_bytes()
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "maag"
    exe = cache / f"bench_bot-{hashlib.sha256(code).hexdigest()[:16]}"
    if exe.exists():
        return exe
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise RuntimeError(f"--c-bots needs a C compiler (cc or gcc, or $CC) to build {src}")
    cache.mkdir(parents=True, exist_ok=True)
    tmp = exe.with_name(f"{exe.name}.{os.getpid()}")
    done = subprocess.run([cc, "-O2", "-Wall", "-Wextra", "-o", str(tmp), str(src)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"building {src} failed:\n{done.stderr[-2000:]}")
    tmp.replace(exe)  # (atomic: two benches building at once both end with a whole file)
    return exe


def start_clients(tmp: Path, port: int, tokens: list[str], k: int, warmup: float, seconds: float,
                  mode: str, nice: bool = False, c_bots: bool = False) -> list[subprocess.Popen[str]]:
    """`k` bench client processes sharing `tokens` (two connections per game), playing on
    `port` for `warmup` then `seconds`; each prints its counts as JSON when it ends. `nice`:
    at the lowest scheduling priority (they get the cores the referees leave); `c_bots`: the
    C bench bot (act mode only) instead of Python's."""
    if c_bots and mode != "act":
        raise ValueError(f"the C bench bots play act mode only, not {mode!r}")
    exe = c_bench_bot() if c_bots else None
    clients = []
    for i in range(k):
        part = tmp / f"tokens{i}.json"
        if exe is not None:
            part.write_text("".join(f"{t}\n" for t in tokens[i::k]))
            cmd = [str(exe), str(port), str(part), str(warmup), str(seconds)]
        else:
            part.write_text(json.dumps(tokens[i::k]))
            cmd = [sys.executable, "-m", "maag.server.bench.server", "--client",
                   str(port), str(part), str(warmup), str(seconds), mode]
        clients.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                        preexec_fn=_lowest_priority if nice else None))
    return clients


def client_counts(out: str) -> dict[str, Any]:
    """What a bench client printed at its end: its counts, the JSON object on its last line
    (after its `measuring` line, if the caller has not read that already)."""
    return dict(json.loads(next(x for x in reversed(out.splitlines()) if x.startswith("{"))))


def _expect_line(proc: subprocess.Popen[str], line: str, what: str) -> None:
    """Wait for `proc` to print `line` (it prints nothing else before it)."""
    assert proc.stdout is not None
    got = proc.stdout.readline().strip()
    if got != line:
        proc.kill()
        err = proc.stderr.read() if proc.stderr else ""
        raise RuntimeError(f"{what} failed before its {line!r} line: {got!r} {err[-2000:]}")


def start_bare(tmp: Path, events: bool = False) -> tuple[subprocess.Popen[bytes], int]:
    """The bare exchange (server/bench/bare.py) as its own process, with `events` the two-write
    exchange; returns it once it listens, and its port."""
    port_file = tmp / "bare.port"
    proc = subprocess.Popen([sys.executable, "-m", "maag.server.bench.bare", str(port_file),
                             *(["--events"] if events else [])],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    end = time.monotonic() + 30
    while not (port_file.exists() and port_file.read_text().strip()):
        if time.monotonic() > end or proc.poll() is not None:
            proc.kill()
            proc.wait()
            raise RuntimeError("the bare exchange did not start")
        time.sleep(0.05)
    return proc, int(port_file.read_text())


def process_cpu_s(pid: int) -> float:
    """CPU time (user and system) process `pid` has used, in seconds (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_busy_s() -> float:
    """CPU time the whole machine has been busy (every core, anything but idle and waiting for
    I/O), in seconds (Linux /proc/stat)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(fields[:8]) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _lowest_priority() -> None:
    os.setpriority(os.PRIO_PROCESS, 0, 19)


def run_level(games: int, warmup: float, seconds: float, mode: str = "act",
              servers: int = 1, spectators: int = 0, bare: bool = False,
              nice_bots: bool = False, c_bots: bool = False, events: bool = False) -> dict[str, Any]:
    """One measurement at `games` concurrent games (see the module docstring), refereed by
    `servers` processes on one port (SO_REUSEPORT) and one database, watched by
    `spectators` WebSocket spectators (through the first referee's web view); with `bare`,
    the same bots against the bare exchange (server/bench/bare.py) instead of a referee, with
    `events` too the two-write exchange."""
    with tempfile.TemporaryDirectory(prefix="maag-bench-") as d:
        tmp = Path(d)
        db, tokens = bench_db(tmp, 2 * games, "b")
        procs: list[subprocess.Popen[bytes]] = []
        stats_files = [tmp / f"stats{i}.json" for i in range(servers)]
        port = 0
        try:
            web = _free_port() if spectators > 0 and not bare else 0
            if bare:
                proc, port = start_bare(tmp, events)
                procs.append(proc)
                stats_files = []
            for i in range(servers if not bare else 0):
                proc, port = start_referee(tmp, db, f"referee{i}", port, "--stats-out", str(stats_files[i]),
                                           *(["--reuse-port"] if servers > 1 else []),
                                           *(["--web", f"127.0.0.1:{web}"] if web and i == 0 else []))
                procs.append(proc)
            # The bots' work is spread over two processes from 10 games on, so that they do
            # not become the bottleneck on a 2-core machine.
            k = 2 if games >= 10 else 1
            watchers = None
            if spectators > 0:
                cmd = [sys.executable, "-m", "maag.server.bench.spectators", f"http://127.0.0.1:{web}",
                       str(spectators), "-"]
                # People's browsers run on their own machines; here the spectators share the
                # two cores with the referee and the bots, so they run at the lowest priority
                # and take only the time the measured processes leave (docs/benchmarks.md).
                watchers = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            stderr=subprocess.PIPE, text=True, preexec_fn=_lowest_priority)
                _expect_line(watchers, "ready", "bench spectators")
            clients = start_clients(tmp, port, tokens, k, warmup, seconds, mode, nice_bots, c_bots)
            for c in clients:  # each prints `measuring` when its window opens
                _expect_line(c, "measuring", "bench client")
            cpu0, t0 = sum(process_cpu_s(p.pid) for p in procs), time.perf_counter()
            bots0, machine0 = sum(process_cpu_s(c.pid) for c in clients), machine_busy_s()
            if watchers is not None:
                assert watchers.stdin is not None
                watchers.stdin.write("measure\n")
                watchers.stdin.flush()
            for c in clients:  # and `stopped` when it closes
                _expect_line(c, "stopped", "bench client")
            cpu_s = sum(process_cpu_s(p.pid) for p in procs) - cpu0
            cpu_window = time.perf_counter() - t0
            # (A client that has already exited is a zombie until waited for: /proc still has
            # its final times.)
            bots_cpu_s = sum(process_cpu_s(c.pid) for c in clients) - bots0
            other_cpu_s = machine_busy_s() - machine0 - cpu_s - bots_cpu_s
            res: dict[str, Any] = {"actions": 0, "messages": 0, "seconds": 0.0, "rtt": [], "errors": 0}
            for c in clients:
                # (Not communicate(): readline may already hold the rest of its output.)
                assert c.stdout is not None and c.stderr is not None
                out, err = c.stdout.read(), c.stderr.read()
                c.wait(120)
                if c.returncode != 0:
                    raise RuntimeError(f"bench client failed: {err[-2000:]}")
                r = client_counts(out)
                res["actions"] += r["actions"]
                res["messages"] += r["messages"]
                res["seconds"] = max(res["seconds"], r["seconds"])
                res["rtt"] += r["rtt"]
                res["errors"] += r["errors"]
            if watchers is not None:
                out, err = watchers.communicate(timeout=120)  # closes its stdin: it stops counting
                if watchers.returncode != 0:
                    raise RuntimeError(f"bench spectators failed: {err[-2000:]}")
                watched = json.loads(out)
                res["spectator_frames_per_s"] = watched["frames"] / watched["seconds"]
        finally:
            for server in procs:
                server.send_signal(signal.SIGTERM)
            for server in procs:
                server.wait(60)
        lat: list[float] = []
        cpu: list[float] = []
        for f in stats_files:
            stats = json.loads(f.read_text())
            lat += stats["latencies_ms"]
            cpu += stats["cpu_ms"]
    rtt = res["rtt"]
    # The server's CPU per bot message: its processes' CPU per second over the window
    # (read by this process, so the two windows differ by a few milliseconds) over the
    # messages per second the bots sent in theirs.
    per_s = res["messages"] / res["seconds"]
    cpu_us = (cpu_s / cpu_window) / per_s * 1e6 if per_s else float("nan")
    return {"actions_per_s": res["actions"] / res["seconds"], "messages_per_s": per_s,
            "cpu_us_per_message": cpu_us, "cpu_load": cpu_s / cpu_window,
            "bots_cpu_load": bots_cpu_s / cpu_window, "other_cpu_load": other_cpu_s / cpu_window,
            "p50_ms": _pct(lat, 0.5),
            "p99_ms": _pct(lat, 0.99), "cpu_p50_ms": _pct(cpu, 0.5), "cpu_p99_ms": _pct(cpu, 0.99),
            "rtt_p50_ms": _pct(rtt, 0.5), "rtt_p99_ms": _pct(rtt, 0.99),
            "errors": res["errors"], "spectators": spectators,
            "spectator_frames_per_s": res.get("spectator_frames_per_s", 0.0)}


def _median(xs: list[float]) -> float:
    return sorted(xs)[len(xs) // 2]


def run(levels: tuple[int, ...] = LEVELS, runs: int = 1, warmup: float = 1.0, seconds: float = 5.0,
        progress: Callable[[int, int], None] | None = None, mode: str = "act",
        servers: int = 1, spectators: int = 0, bare: bool = True,
        nice_bots: bool = False, c_bots: bool = False, floor: bool = False) -> dict[str, dict[str, float]]:
    """Medians over `runs` runs of each level, keyed by the number of games (as a string).
    With `bare`, each run of the referee is followed by one of the bare exchange with the
    same bots (server/bench/bare.py): `bare_cpu_us_per_message` and `cpu_ratio`, the median
    of the runs' ratios of the referee's CPU per message to the bare exchange's; with `floor`
    too, each bare run is followed by one of the two-write exchange: `floor_cpu_us_per_message`
    and `floor_ratio` (the median of its runs' ratios to the bare exchange's)."""
    floor = floor and bare
    out: dict[str, dict[str, float]] = {}
    done = 0
    steps = len(levels) * runs * (1 + bare + floor)
    for g in levels:
        results = []
        bares = []
        floors = []
        for _ in range(runs):
            results.append(run_level(g, warmup, seconds, mode, servers, spectators, nice_bots=nice_bots,
                                     c_bots=c_bots))
            done += 1
            if progress:
                progress(done, steps)
            if bare:
                bares.append(run_level(g, warmup, seconds, mode, bare=True, nice_bots=nice_bots,
                                       c_bots=c_bots))
                done += 1
                if progress:
                    progress(done, steps)
            if floor:
                floors.append(run_level(g, warmup, seconds, mode, bare=True, nice_bots=nice_bots,
                                        c_bots=c_bots, events=True))
                done += 1
                if progress:
                    progress(done, steps)
        level = {k: round(_median([r[k] for r in results]), 3) for k in results[0]}
        # Messages a referee core would take per second: the throughput over the referee's
        # CPU load (whole turns in turn mode).
        level["messages_per_core_s"] = round(_median([r["messages_per_s"] / r["cpu_load"]
                                                      for r in results if r["cpu_load"] > 0] or [0.0]), 1)
        if bare:
            level["bare_cpu_us_per_message"] = round(_median([b["cpu_us_per_message"] for b in bares]), 3)
            level["bare_messages_per_s"] = round(_median([b["messages_per_s"] for b in bares]), 1)
            level["cpu_ratio"] = round(_median([r["cpu_us_per_message"] / b["cpu_us_per_message"]
                                                for r, b in zip(results, bares, strict=True)]), 2)
        if floor:
            level["floor_cpu_us_per_message"] = round(_median([f["cpu_us_per_message"] for f in floors]), 3)
            level["floor_ratio"] = round(_median([f["cpu_us_per_message"] / b["cpu_us_per_message"]
                                                  for f, b in zip(floors, bares, strict=True)]), 2)
        out[str(g)] = level
    return out


def run_watched(levels: tuple[int, ...], spectators: int, runs: int = 1, warmup: float = 1.0,
                seconds: float = 5.0, progress: Callable[[int, int], None] | None = None, mode: str = "act",
                servers: int = 1) -> dict[str, dict[str, dict[str, float]]]:
    """Each level without and with `spectators`, the two runs alternating (so that a change in
    the machine's load falls on both alike); medians under "plain" and "watched", and per
    level the ratio of the throughputs under "ratio"."""
    out: dict[str, dict[str, dict[str, float]]] = {"plain": {}, "watched": {}, "ratio": {}}
    done = 0
    for g in levels:
        both: dict[str, list[dict[str, Any]]] = {"plain": [], "watched": []}
        for _ in range(runs):
            for kind, n in (("plain", 0), ("watched", spectators)):
                both[kind].append(run_level(g, warmup, seconds, mode, servers, n))
                done += 1
                if progress:
                    progress(done, 2 * len(levels) * runs)
        for kind, rs in both.items():
            out[kind][str(g)] = {k: round(sorted(r[k] for r in rs)[len(rs) // 2], 3) for k in rs[0]}
        plain = out["plain"][str(g)]["actions_per_s"]
        out["ratio"][str(g)] = {"actions_per_s": round(out["watched"][str(g)]["actions_per_s"] / plain, 3)
                                if plain else float("nan")}
    return out


def _client_main(argv: list[str]) -> int:
    port, tokens_file, warmup, seconds, mode = int(argv[0]), argv[1], float(argv[2]), float(argv[3]), argv[4]
    tokens = json.loads(Path(tokens_file).read_text())
    res = asyncio.run(_client(port, tokens, warmup, seconds, mode))
    print(json.dumps(res))
    return 0


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--client", nargs=5, required=True,
                   metavar=("PORT", "TOKENS", "WARMUP", "SECONDS", "MODE"))
    sys.exit(_client_main(p.parse_args().client))


# -- the command line (`maag bench server`, registered by cmd_bench) ---------------------------

def register_cli(bsub: Any, machine: Callable[[], dict[str, Any]]) -> None:
    p = bsub.add_parser("server", help="referee throughput and latency on loopback", description=__doc__,
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--games", default=",".join(map(str, LEVELS)), metavar="N,N,...",
                   help="concurrent games per level (default 1,10,100)")
    p.add_argument("--mode", choices=("act", "turn", "lean", "both"), default="both",
                   help="bots send one act per your_turn, whole turns, or both in turn (default both); "
                        "lean: act bots that decode only what they use (a fraction of the CPU: on a small "
                        "machine, what --servers K gains is then the referees')")
    p.add_argument("--runs", type=int, default=1, help="runs per figure; the median is reported (default 1)")
    p.add_argument("--seconds", type=float, default=5.0, help="measured seconds per run (default 5)")
    p.add_argument("--servers", type=int, default=1, metavar="K",
                   help="referee processes sharing one port (SO_REUSEPORT) and one database (default 1); "
                        "a bot is paired only within its process, so a level needs several games each")
    p.add_argument("--nice-bots", action="store_true",
                   help="run the bots' processes at the lowest scheduling priority, so that the referee "
                        "processes have the cores first (to see how throughput grows with --servers on a "
                        "machine whose cores the bots share)")
    p.add_argument("--c-bots", action="store_true",
                   help="act mode: the bots are the C bench bot (server/bench/c/bench_bot.c, built with cc "
                        "on first use), a few microseconds per action, so that on a machine of few cores the "
                        "referees, not the bots, bound what --servers K plays")
    p.add_argument("--spectators", type=int, default=0, metavar="N",
                   help="also measure each level with N WebSocket spectators of the live games (the referee "
                        "serves its web view); reports both throughputs and their ratio (default 0: none)")
    p.add_argument("--no-bare", action="store_true",
                   help="leave out the bare exchange (by default each run of the referee is followed by one "
                        "of a bare asyncio server answering the same bots, and the CPU per message of both "
                        "is reported with their ratio)")
    p.add_argument("--floor", action="store_true",
                   help="also measure the two-write exchange after each bare run (the bare exchange writing "
                        "an event to a second connection for every frame, as a referee must for an act): its "
                        "CPU per message and its ratio to the bare exchange's")
    p.add_argument("--json", action="store_true",
                   help="one JSON object keyed by the number of games (act mode; turn mode under 'turn'; "
                        "with --spectators, the watched runs under 'watched')")
    p.set_defaults(func=lambda args: _run_cli(args, machine))


def _run_cli(args: argparse.Namespace, machine: Callable[[], dict[str, Any]]) -> int:
    from rich.console import Console
    from rich.progress import Progress
    from rich.table import Table

    levels = tuple(int(x) for x in args.games.split(","))
    modes = ("act", "turn") if args.mode == "both" else (args.mode,)
    if args.c_bots and modes != ("act",):
        raise SystemExit("maag bench server: --c-bots plays act mode only: add --mode act")
    if args.c_bots and args.spectators > 0:
        raise SystemExit("maag bench server: --c-bots is not measured with --spectators")
    results: dict[str, dict[str, dict[str, float]]] = {}
    console = Console(stderr=args.json)
    if args.spectators > 0:
        return _run_watched_cli(args, levels, modes, console, machine)
    with Progress(console=console, transient=True) as prog:
        per_mode = len(levels) * args.runs * (1 if args.no_bare else 3 if args.floor else 2)
        task = prog.add_task("bench server", total=per_mode * len(modes))
        for i, mode in enumerate(modes):
            base = i * per_mode

            def step(done: int, _total: int, base: int = base) -> None:
                prog.update(task, completed=base + done)

            results[mode] = run(levels, args.runs, 1.0, args.seconds, mode=mode, progress=step,
                                servers=args.servers, bare=not args.no_bare, nice_bots=args.nice_bots,
                                c_bots=args.c_bots, floor=args.floor)
    if args.json:
        first = results[modes[0]]
        out: dict[str, Any] = {**first, "mode": modes[0], "machine": machine()}
        if len(modes) > 1:
            out["turn"] = results["turn"]
        print(json.dumps(out))
        return 0
    nan = float("nan")
    for mode in modes:
        t = Table(title=f"maag bench server ({mode} mode, {args.servers} referee process(es)): medians of "
                        f"{args.runs} run(s) of {args.seconds:g} s")
        for col in ("games", "actions/s", f"{mode}s per referee core/s", "referee CPU µs per " + mode,
                    "bare CPU µs per message", "ratio", "two-write floor ratio", "referee p50 ms",
                    "referee p99 ms", "cpu p50 ms", "cpu p99 ms", "bot rtt p50 ms", "bot rtt p99 ms"):
            t.add_column(col, justify="right")
        for g, r in results[mode].items():
            t.add_row(g, f"{r['actions_per_s']:,.0f}", f"{r['messages_per_core_s']:,.0f}",
                      f"{r['cpu_us_per_message']:.1f}", f"{r.get('bare_cpu_us_per_message', nan):.1f}",
                      f"{r.get('cpu_ratio', nan):.2f}", f"{r.get('floor_ratio', nan):.2f}",
                      f"{r['p50_ms']:.3f}", f"{r['p99_ms']:.3f}",
                      f"{r['cpu_p50_ms']:.3f}", f"{r['cpu_p99_ms']:.3f}",
                      f"{r['rtt_p50_ms']:.2f}", f"{r['rtt_p99_ms']:.2f}")
        console.print(t)
    m = machine()
    console.print(f"machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}")
    return 0


def _run_watched_cli(args: argparse.Namespace, levels: tuple[int, ...], modes: tuple[str, ...], console: Any,
                     machine: Callable[[], dict[str, Any]]) -> int:
    """`--spectators N`: each level without and with N spectators, alternating."""
    from rich.progress import Progress
    from rich.table import Table

    results: dict[str, dict[str, dict[str, dict[str, float]]]] = {}
    with Progress(console=console, transient=True) as prog:
        task = prog.add_task("bench server", total=2 * len(levels) * args.runs * len(modes))
        for i, mode in enumerate(modes):
            base = i * 2 * len(levels) * args.runs

            def step(done: int, _total: int, base: int = base) -> None:
                prog.update(task, completed=base + done)

            results[mode] = run_watched(levels, args.spectators, args.runs, 1.0, args.seconds, step, mode,
                                        args.servers)
    if args.json:
        print(json.dumps({**results[modes[0]], "mode": modes[0], "spectators": args.spectators,
                          **({"turn": results["turn"]} if len(modes) > 1 else {}), "machine": machine()}))
        return 0
    for mode in modes:
        r = results[mode]
        t = Table(title=f"maag bench server ({mode} mode) without and with {args.spectators} spectators: "
                        f"medians of {args.runs} run(s) of {args.seconds:g} s")
        for col in ("games", "actions/s", f"actions/s, {args.spectators} watching", "ratio",
                    "referee p99 ms", "referee p99 ms watched", "frames pushed/s"):
            t.add_column(col, justify="right")
        for g in r["plain"]:
            p, w = r["plain"][g], r["watched"][g]
            t.add_row(g, f"{p['actions_per_s']:,.0f}", f"{w['actions_per_s']:,.0f}",
                      f"{r['ratio'][g]['actions_per_s']:.3f}", f"{p['p99_ms']:.3f}", f"{w['p99_ms']:.3f}",
                      f"{w['spectator_frames_per_s']:,.0f}")
        console.print(t)
    m = machine()
    console.print(f"machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}")
    return 0
