"""The cgroup v2 code path on a machine whose controllers are on v1: the v2 hierarchy of a
hybrid machine (/sys/fs/cgroup/unified) has no controllers, but every v2 group can be frozen
(cgroup.freeze), killed (cgroup.kill) and accounted (cpu.stat): those are tested for real
here, with a real sandboxed process. Memory, pids and CPU limits on v2 need the controllers
(current distributions); this machine kind tests them on v1 (test_cgroups.py, the hostile
suite)."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest
from maag.server.sandbox import cgroups
from maag.server.sandbox.jail import Jail, JailConfig
from maag.server.sandbox.limits import Limits

UNIFIED = Path("/sys/fs/cgroup/unified")


def _v2() -> cgroups.Cgroups:
    if os.geteuid() != 0 or not (UNIFIED / "cgroup.controllers").exists():
        pytest.skip("needs root and a cgroup v2 hierarchy at /sys/fs/cgroup/unified (a hybrid machine)")
    cg, problems = cgroups.probe(UNIFIED)
    if cg is None:
        pytest.skip(f"cgroup v2 not writable here: {problems}")
    return cg


def _procs_of_uid_range() -> set[int]:
    out = set()
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                lines = Path(f"/proc/{d}/status").read_text().splitlines()
                uid_line = next(x for x in lines if x.startswith("Uid:"))
            except (OSError, StopIteration):
                continue
            if 61000 <= int(uid_line.split()[1]) < 61512:
                out.add(int(d))
    return out


def test_v2_group_freezes_accounts_and_kills_a_sandboxed_process(tmp_path: Path) -> None:
    cg = _v2()
    assert cg.version == 2

    async def go() -> None:
        spin = ("import os\nfor _ in range(3):\n    if os.fork() == 0:\n        break\n"
                "x = 0\nwhile True:\n    x += 1\n")
        j = Jail(JailConfig(["python3", "-c", spin], tmp_path, {"PATH": "/usr/bin:/bin"}, Limits()), cg,
                 tmp_path / "log.txt")
        await j.start()
        try:
            assert j.group is not None
            group_dir = j.group.made[0]
            assert group_dir.parent.name == cgroups.PARENT
            await asyncio.sleep(0.5)
            assert len(j.group.procs()) >= 4  # bwrap, its init, the spinner and its children
            a = j.cpu_ns()
            await asyncio.sleep(0.3)
            b = j.cpu_ns()
            assert b > a  # running: CPU time grows (cpu.stat's usage_usec)
            j.freeze()
            assert (group_dir / "cgroup.freeze").read_text().strip() == "1"
            await asyncio.sleep(0.3)  # freezing may take a moment
            c = j.cpu_ns()
            await asyncio.sleep(0.5)
            d = j.cpu_ns()
            assert d - c < 20_000_000, f"a frozen group used {(d - c) / 1e6:.1f} ms of CPU in 0.5 s"
            j.thaw()
            await asyncio.sleep(0.3)
            assert j.cpu_ns() > d
            pids.update(j.group.procs())
        finally:
            await j.close()
        assert not group_dir.exists()

    pids: set[int] = set()
    asyncio.run(go())
    assert pids
    deadline = time.monotonic() + 5
    while pids & _procs_of_uid_range() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not pids & _procs_of_uid_range(), "a process of the sandbox outlived it"


def test_v2_stale_groups_of_a_dead_maag_are_removed() -> None:
    cg = _v2()
    parent = cg.parents[""]
    dead = parent / "999999999-1"  # no process has this pid
    live = parent / f"{os.getpid()}-999999"
    dead.mkdir()
    live.mkdir()
    try:
        assert cg.remove_stale() >= 1
        assert not dead.exists()
        assert live.exists()
    finally:
        for p in (dead, live):
            if p.exists():
                p.rmdir()
