"""The processes of `maag bench server`, started and measured: the bench database, a
referee (`maag serve` without its limits), the bots' processes (server/bench/clients.py, or
the C bench bot of c/bench_bot.c), the bare exchange (bare.py), and the CPU time of a process
and of the whole machine (Linux /proc)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["bench_db", "start_referee", "c_bench_bot", "start_clients", "client_counts", "expect_line",
           "start_bare", "process_cpu_s", "machine_busy_s", "free_port", "lowest_priority"]


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
                  mode: str, nice: bool = False, c_bots: bool = False,
                  events: str = "turn") -> list[subprocess.Popen[str]]:
    """`k` bench client processes sharing `tokens` (two connections per game), playing on
    `port` for `warmup` then `seconds`; each prints its counts as JSON when it ends. `nice`:
    at the lowest scheduling priority (they get the cores the referees leave); `c_bots`: the
    C bench bot (act mode only) instead of Python's; `events`: what their hello asks, the
    opponent's actions once a turn ("turn") or each as applied ("action")."""
    if c_bots and mode != "act":
        raise ValueError(f"the C bench bots play act mode only, not {mode!r}")
    exe = c_bench_bot() if c_bots else None
    clients = []
    for i in range(k):
        part = tmp / f"tokens{i}.json"
        if exe is not None:
            part.write_text("".join(f"{t}\n" for t in tokens[i::k]))
            cmd = [str(exe), str(port), str(part), str(warmup), str(seconds), events]
        else:
            part.write_text(json.dumps(tokens[i::k]))
            cmd = [sys.executable, "-m", "maag.server.bench.clients", "--client",
                   str(port), str(part), str(warmup), str(seconds), mode, events]
        clients.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                        preexec_fn=lowest_priority if nice else None))
    return clients


def client_counts(out: str) -> dict[str, Any]:
    """What a bench client printed at its end: its counts, the JSON object on its last line
    (after its `measuring` line, if the caller has not read that already)."""
    return dict(json.loads(next(x for x in reversed(out.splitlines()) if x.startswith("{"))))


def expect_line(proc: subprocess.Popen[str], line: str, what: str) -> None:
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


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def lowest_priority() -> None:
    os.setpriority(os.PRIO_PROCESS, 0, 19)

