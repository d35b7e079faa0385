"""`maag bench soak`: does a referee's memory stay flat under a long load?

A referee (`maag serve`, SQLite in a temporary folder, no time limit, its abuse limits off)
and two client processes playing `games` concurrent games of random bots (those of `maag
bench server`) for `minutes`; the referee's resident memory (VmRSS) is sampled every
`sample_s` seconds. The verdict compares the last sample with the first one after the
warm-up (the first minute): within 10%, the memory is flat. Bounded: it ends after
`minutes`, so it can run unattended; it is not part of the test suite (ten minutes).
"""

from __future__ import annotations

import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["run", "rss_kib"]

WARMUP_S = 60.0


def rss_kib(pid: int) -> int:
    """Resident memory of process `pid` in KiB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for process {pid}")


def run(games: int = 200, minutes: float = 10.0, sample_s: float = 10.0,
        progress: Callable[[float, float], None] | None = None) -> dict[str, Any]:
    """Samples [(seconds since start, RSS KiB)], actions played, and the verdict."""
    from maag.server.bench.processes import bench_db, client_counts, start_clients, start_referee

    seconds = minutes * 60.0
    with tempfile.TemporaryDirectory(prefix="maag-soak-") as d:
        tmp = Path(d)
        db, tokens = bench_db(tmp, 2 * games, "s")
        server, port = start_referee(tmp, db, "referee")
        clients: list[subprocess.Popen[str]] = []
        samples: list[tuple[float, int]] = []
        try:
            clients = start_clients(tmp, port, tokens, 2, 0.0, seconds, "act")
            t0 = time.monotonic()
            while True:
                now = time.monotonic() - t0
                samples.append((round(now, 1), rss_kib(server.pid)))
                if progress:
                    progress(min(now, seconds), seconds)
                if now >= seconds or any(c.poll() is not None for c in clients):
                    break
                time.sleep(min(sample_s, max(0.0, seconds - now)))
            actions = 0
            for c in clients:
                out, err = c.communicate(timeout=300)
                if c.returncode != 0:
                    raise RuntimeError(f"soak client failed: {err[-2000:]}")
                actions += int(client_counts(out)["actions"])
        finally:
            for c in clients:
                if c.poll() is None:
                    c.kill()
            server.send_signal(signal.SIGTERM)
            server.wait(60)
    after_warmup = next((kib for t, kib in samples if t >= WARMUP_S), samples[0][1])
    last = samples[-1][1]
    return {"games": games, "minutes": minutes, "sample_s": sample_s, "samples": samples,
            "actions": actions, "rss_after_warmup_kib": after_warmup, "rss_end_kib": last,
            "growth": round(last / after_warmup - 1.0, 4), "flat": abs(last / after_warmup - 1.0) <= 0.10}
