"""The sandbox without control groups (a host where maag may not write any): the limits fall
back to rlimits of the sandbox's own unprivileged uid (RLIMIT_AS per process, RLIMIT_NPROC
per uid) and freezing to SIGSTOP. Tried for real with the cgroups left out."""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from pathlib import Path

import pytest
from maag.server.sandbox.jail import Jail, JailConfig
from maag.server.sandbox.limits import Limits


def _need() -> None:
    if shutil.which("bwrap") is None or os.geteuid() != 0:
        if os.environ.get("CI"):
            pytest.fail("needs bubblewrap and root (CI)")
        pytest.skip("needs bubblewrap and root (a uid of its own per sandbox)")


def _run(tmp_path: Path, code: str, limits: Limits, wait: float = 30) -> tuple[int | None, str, Jail]:
    async def go() -> tuple[int | None, str, Jail]:
        j = Jail(JailConfig(["python3", "-c", code], tmp_path, {"PATH": "/usr/bin:/bin"}, limits), None,
                 tmp_path / "log.txt")
        await j.start()
        rc = await j.wait(wait)
        await j.close()
        return rc, (tmp_path / "log.txt").read_text(), j

    return asyncio.run(go())


def test_memory_is_capped_per_process_without_cgroups(tmp_path: Path) -> None:
    _need()
    code = ("try:\n    b = bytearray(600 * 1024 * 1024)\n    print('ALLOCATED')\n"
            "except MemoryError:\n    print('REFUSED')\n")
    rc, log, _ = _run(tmp_path, code, Limits(memory=256 * 1024**2))
    assert "REFUSED" in log and "ALLOCATED" not in log, log
    rc, log, _ = _run(tmp_path, code, Limits(memory=2 * 1024**3))
    assert "ALLOCATED" in log, log  # the same program under a larger limit: the limit did it


def test_processes_are_capped_per_uid_without_cgroups(tmp_path: Path) -> None:
    _need()
    code = ("import os, time\nn = 0\nfor _ in range(300):\n    try:\n        pid = os.fork()\n"
            "    except OSError:\n        break\n    if pid == 0:\n        time.sleep(5)\n"
            "        os._exit(0)\n    n += 1\nprint('FORKS', n, flush=True)\n")
    rc, log, _ = _run(tmp_path, code, Limits(pids=20))
    forks = int(log.split("FORKS")[1].split()[0])
    assert 5 <= forks < 20, log  # the python process itself is one of the 20


def test_freezing_without_cgroups_stops_the_processes(tmp_path: Path) -> None:
    _need()

    async def go() -> tuple[int, int, int]:
        j = Jail(JailConfig(["python3", "-c", "x = 0\nwhile True:\n    x += 1\n"], tmp_path,
                            {"PATH": "/usr/bin:/bin"}, Limits()), None, tmp_path / "log.txt")
        await j.start()
        try:
            await asyncio.sleep(0.5)
            j.freeze()
            await asyncio.sleep(0.2)
            a = j.cpu_ns()
            await asyncio.sleep(0.5)
            b = j.cpu_ns()
            j.thaw()
            await asyncio.sleep(0.5)
            c = j.cpu_ns()
            return a, b, c
        finally:
            await j.close()

    a, b, c = asyncio.run(go())
    assert b - a < 30_000_000, "a frozen bot used CPU"
    assert c - b > 100_000_000, "a thawed bot did not run"
    time.sleep(0.1)


def test_a_bot_may_use_multiprocessing(tmp_path: Path) -> None:
    """A bot's own /dev/shm: multiprocessing's locks and queues work under the sandbox's uid
    (bubblewrap's /dev/shm alone is root's, and a semaphore is refused)."""
    _need()
    code = ("import multiprocessing as m\nlock = m.Lock()\nq = m.Queue()\n"
            "p = m.get_context('fork').Process(target=q.put, args=(42,))\np.start()\n"
            "print('GOT', q.get(timeout=20), flush=True)\np.join()\n")
    rc, log, _ = _run(tmp_path, code, Limits(pids=20))
    assert "GOT 42" in log and rc == 0, log
