"""Control groups for hosted bots (maag.server.sandbox.cgroups), on this machine's real
hierarchy (v1 or v2), with real processes:

- `probe()` finds maag's parent group and the controllers the sandbox needs;
- a bot's group: made in every controller, limited (the files say what was asked), a real
  process moved into it the way a jail does (writing "0" to the group's procs files before
  exec), its CPU time counted, frozen (the group says FROZEN and a spinning process's CPU time
  stands still), thawed (it runs again), killed (the group is empty) and removed (the folders
  are gone);
- `remove_stale()` empties and removes a group named after a maag process that is gone, and
  leaves one of a live process alone.

Needs root and cgroups: in CI ($CI set) a missing mechanism fails the tests; elsewhere they
are skipped, saying why.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from maag.server.sandbox import cgroups

NEEDED = {"memory", "pids", "cpu", "cpuacct", "freezer"}
SPIN = [sys.executable, "-c", "while True: pass"]


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _missing(why: str) -> None:
    if _in_ci():
        pytest.fail(f"cgroups: {why}")
    pytest.skip(why)


@pytest.fixture(scope="module")
def cg() -> cgroups.Cgroups:
    if os.geteuid() != 0:
        _missing("maag's control groups need root (or a delegated group)")
    found, problems = cgroups.probe()
    if found is None:
        _missing("no usable cgroups: " + "; ".join(problems))
    assert found is not None
    if not NEEDED <= found.controllers:
        lacking = " ".join(sorted(NEEDED - found.controllers))
        _missing(f"controllers missing: {lacking} ({'; '.join(problems)})")
    return found


@pytest.fixture
def group(cg: cgroups.Cgroups) -> Iterator[cgroups.BotGroup]:
    g = cg.new_group()
    yield g
    g.remove()


def _joiner(files: list[str]) -> Callable[[], None]:
    def join() -> None:  # in the child before exec, as Jail.start does
        for f in files:
            fd = os.open(f, os.O_WRONLY)
            os.write(fd, b"0")
            os.close(fd)
    return join


def _proc_cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def _proc_state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def _freezer_state(cg: cgroups.Cgroups, g: cgroups.BotGroup) -> str:
    if cg.version == 2:
        return "FROZEN" if "frozen 1" in (g.paths["freezer"] / "cgroup.events").read_text() else "THAWED"
    return (g.paths["freezer"] / "freezer.state").read_text().strip()


def _until(pred: Callable[[], bool], timeout: float = 5.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.02)
    return pred()


def _gone(pid: int) -> bool:
    """No such process, or only its zombie (its parent has not waited yet)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_probe_finds_maags_group_and_the_controllers(cg: cgroups.Cgroups) -> None:
    assert NEEDED <= cg.controllers
    assert cg.version in (1, 2)
    for c, parent in cg.parents.items():
        assert parent.name == cgroups.PARENT and parent.is_dir(), (c, parent)
        assert (parent / "cgroup.procs").exists()
    if cg.version == 1:
        # One parent per controller, each under this process's own group of that controller.
        assert NEEDED <= set(cg.parents)
        own = {}
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, ctrls, path = line.split(":", 2)
            for c in ctrls.split(","):
                own[c] = path
        for c in NEEDED:
            assert cg.parents[c] == cgroups.ROOT / c / own[c].lstrip("/") / cgroups.PARENT
    # Probing again finds the same (the parent groups are kept, not made twice).
    again, _ = cgroups.probe()
    assert again is not None and again.parents == cg.parents and again.controllers == cg.controllers


def test_a_bots_group_from_start_to_removal(cg: cgroups.Cgroups) -> None:
    g = cg.new_group()
    made = list(g.made)
    try:
        assert made and all(p.is_dir() and p.name.startswith(f"{os.getpid()}-") for p in made)
        assert {p.name for p in made} == {made[0].name}  # one name in every controller
        g.limit(memory=256 * 1024**2, pids=16, cpus=0.5, cores=[0])
        if cg.version == 1:
            assert int((g.paths["memory"] / "memory.limit_in_bytes").read_text()) == 256 * 1024**2
            assert (g.paths["pids"] / "pids.max").read_text().strip() == "16"
            assert (g.paths["cpu"] / "cpu.cfs_quota_us").read_text().strip() == "50000"
            assert (g.paths["cpu"] / "cpu.cfs_period_us").read_text().strip() == "100000"
            if "cpuset" in g.paths:
                assert (g.paths["cpuset"] / "cpuset.cpus").read_text().strip() == "0"
        else:
            p = made[0]
            assert (p / "memory.max").read_text().strip() == str(256 * 1024**2)
            assert (p / "pids.max").read_text().strip() == "16"
            assert (p / "cpu.max").read_text().split() == ["50000", "100000"]
        assert g.procs() == []
        g.limit(memory=256 * 1024**2, pids=16, cpus=1.0, cores=None)  # a whole core for the spinner

        proc = subprocess.Popen(SPIN, preexec_fn=_joiner(g.procs_files), stdin=subprocess.DEVNULL)
        try:
            assert g.procs() == [proc.pid]
            for p in made:  # in every controller's group
                assert proc.pid in [int(x) for x in (p / "cgroup.procs").read_text().split()], p
            # Its CPU time is counted.
            start = g.cpu_ns()
            assert _until(lambda: g.cpu_ns() - start > 50_000_000), (start, g.cpu_ns())

            # Frozen: the group says so, and a spinning process's CPU time stands still.
            g.freeze()
            assert g.frozen
            assert _until(lambda: _freezer_state(cg, g) == "FROZEN"), _freezer_state(cg, g)
            time.sleep(0.05)
            ticks, ns = _proc_cpu_ticks(proc.pid), g.cpu_ns()
            time.sleep(0.5)
            assert _proc_cpu_ticks(proc.pid) == ticks
            assert g.cpu_ns() - ns < 5_000_000, g.cpu_ns() - ns
            assert proc.poll() is None  # frozen, not dead
            assert _proc_state(proc.pid) != "R"  # a spinner that runs (or may) is always R

            # Thawed: it runs again.
            g.thaw()
            assert not g.frozen and _freezer_state(cg, g) == "THAWED"
            ns = g.cpu_ns()
            assert _until(lambda: g.cpu_ns() - ns > 50_000_000)
            assert _until(lambda: _proc_cpu_ticks(proc.pid) > ticks)
            assert _until(lambda: _proc_state(proc.pid) == "R")

            # Killed while frozen: kill thaws first, then nothing is left in the group.
            g.freeze()
            assert _until(lambda: _freezer_state(cg, g) == "FROZEN")
            g.kill()
            assert proc.wait(timeout=5) == -9
            assert g.procs() == []
            assert all((p / "cgroup.procs").read_text().split() == [] for p in made)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    finally:
        g.remove()
    assert not any(p.exists() for p in made), made
    g.remove()  # twice: nothing to do, no error


def test_remove_kills_what_is_left_and_deletes_the_group(cg: cgroups.Cgroups) -> None:
    g = cg.new_group()
    proc = subprocess.Popen(["sleep", "30"], preexec_fn=_joiner(g.procs_files))
    try:
        assert g.procs() == [proc.pid]
        g.freeze()
        g.remove()  # frozen, with a process: removed all the same
        assert proc.wait(timeout=5) == -9
        assert not any(p.exists() for p in g.made)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


STALE = """
import json, os, subprocess, sys
from maag.server.sandbox import cgroups

g = cgroups.detect().new_group()
def join():
    for f in g.procs_files:
        fd = os.open(f, os.O_WRONLY); os.write(fd, b"0"); os.close(fd)
# A bot's process that outlives this maag process (killed with -9: no clean-up at all).
p = subprocess.Popen(["sleep", "60"], preexec_fn=join, start_new_session=True, stdin=subprocess.DEVNULL,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(json.dumps({"made": [str(x) for x in g.made], "sleeper": p.pid}), flush=True)
os._exit(0)
"""


def test_remove_stale_removes_the_groups_of_dead_maag_processes_only(cg: cgroups.Cgroups) -> None:
    r = subprocess.run([sys.executable, "-c", STALE], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    left = json.loads(r.stdout)
    stale, sleeper = [Path(p) for p in left["made"]], left["sleeper"]
    live = cg.new_group()  # this (live) process's own
    try:
        assert all(p.is_dir() for p in stale)
        assert not _gone(sleeper)
        assert sleeper in [int(x) for x in (stale[0] / "cgroup.procs").read_text().split()]
        n = cg.remove_stale()
        assert n >= 1  # (other maag processes' stale groups may go too)
        assert not any(p.exists() for p in stale), stale
        assert _until(lambda: _gone(sleeper)), "the stale group's process survived"
        assert all(p.is_dir() for p in live.made)
        cg.remove_stale()  # again: the live group stays
        assert all(p.is_dir() for p in live.made)
    finally:
        live.remove()
        if not _gone(sleeper):
            os.kill(sleeper, 9)
