"""Control groups for hosted bots: one group per bot process (one game), under one group of
maag's own, for memory, processes, CPU (quota and cores), freezing, CPU accounting and
killing everything inside. Both hierarchies are supported:

- cgroup v2 (the unified hierarchy of current distributions): maag's group is made beside
  the group it runs in (`<current>/maag-bots`, which needs the current group delegated to
  maag: systemd's `Delegate=yes`, or root in a VM); freezing is `cgroup.freeze`, killing
  `cgroup.kill`.
- cgroup v1 (separate controllers mounted under /sys/fs/cgroup/<controller>): one
  `maag-bots` group under the current group of each of memory, pids, cpu, cpuacct, cpuset
  and freezer.

maag never writes to a group it did not create. Each bot's group is named
`<maag's pid>-<n>`; on start, groups of maag processes that are gone (killed with -9) are
emptied and removed.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Cgroups", "BotGroup", "detect"]

ROOT = Path("/sys/fs/cgroup")
PARENT = "maag-bots"
_V1_CONTROLLERS = ("memory", "pids", "cpu", "cpuacct", "cpuset", "freezer")
_counter = itertools.count(1)


def _read(p: Path) -> str:
    try:
        return p.read_text()
    except OSError:
        return ""


def _write(p: Path, value: str) -> None:
    with open(p, "w") as f:
        f.write(value)


def _own_paths() -> dict[str, str]:
    """controller (or "" for v2) -> the path of this process's group in that hierarchy."""
    out: dict[str, str] = {}
    for line in _read(Path("/proc/self/cgroup")).splitlines():
        _, ctrls, path = line.split(":", 2)
        if ctrls == "":
            out[""] = path
        for c in ctrls.split(","):
            if c:
                out[c] = path
    return out


@dataclass
class Cgroups:
    """The mechanism found on this machine: `version` 1 or 2, and the parent group per
    controller (v1) or the one parent (v2, key "")."""

    version: int
    parents: dict[str, Path]
    controllers: set[str]
    problems: list[str] = field(default_factory=list)

    def new_group(self) -> BotGroup:
        name = f"{os.getpid()}-{next(_counter)}"
        if self.version == 2:
            path = self.parents[""] / name
            path.mkdir()
            return BotGroup(self, {c: path for c in self.controllers | {"freezer", "cpuacct"}}, [path])
        paths: dict[str, Path] = {}
        made: list[Path] = []
        try:
            for c, parent in self.parents.items():
                p = parent / name
                p.mkdir()
                made.append(p)
                paths[c] = p
                if c == "cpuset":  # a v1 cpuset is empty until given cores and memory nodes
                    for f in ("cpuset.cpus", "cpuset.mems"):
                        _write(p / f, _read(parent / f).strip())
        except OSError:
            for p in made:
                with contextlib.suppress(OSError):
                    p.rmdir()
            raise
        return BotGroup(self, paths, made)

    def remove_stale(self) -> int:
        """Empty and remove the groups left by maag processes that no longer run; returns
        how many were removed."""
        n = 0
        seen: set[str] = set()
        for parent in self.parents.values():
            if parent in seen or not parent.is_dir():
                continue
            seen.add(str(parent))
            for child in parent.iterdir():
                if not child.is_dir():
                    continue
                owner = child.name.split("-", 1)[0]
                if owner.isdigit() and not _alive(int(owner)):
                    _kill_procs(child)
                    with contextlib.suppress(OSError):
                        child.rmdir()
                        n += 1
        return n


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A pid reused by another program is alive too; a group of maag's is named after maag's
    # own pid, so the worst case is a stale group kept until that program ends.
    return True


def _procs(path: Path) -> list[int]:
    return [int(x) for x in _read(path / "cgroup.procs").split()]


def _kill_procs(path: Path) -> None:
    if (path / "cgroup.kill").exists():
        with contextlib.suppress(OSError):
            _write(path / "cgroup.kill", "1")
    for _ in range(50):
        pids = _procs(path)
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, 9)
        time.sleep(0.01)


class BotGroup:
    """One bot process's group (in each v1 controller, or one v2 group)."""

    def __init__(self, cg: Cgroups, paths: dict[str, Path], made: list[Path]) -> None:
        self.cg = cg
        self.paths = paths
        self.made = made
        self.frozen = False

    @property
    def procs_files(self) -> list[str]:
        """The files a new process writes "0" to, to join this group (before it drops its
        privileges and runs the bot)."""
        return [str(p / "cgroup.procs") for p in self.made]

    def limit(self, *, memory: int, pids: int, cpus: float, cores: list[int] | None) -> None:
        if self.cg.version == 2:
            p = self.made[0]
            c = self.cg.controllers
            if "memory" in c:
                _write(p / "memory.max", str(memory))
                with contextlib.suppress(OSError):
                    _write(p / "memory.swap.max", "0")
                with contextlib.suppress(OSError):
                    _write(p / "memory.oom.group", "1")
            if "pids" in c:
                _write(p / "pids.max", str(pids))
            if "cpu" in c:
                _write(p / "cpu.max", f"{int(cpus * 100_000)} 100000")
            if "cpuset" in c and cores:
                _write(p / "cpuset.cpus", ",".join(map(str, cores)))
            return
        if "memory" in self.paths:
            m = self.paths["memory"]
            _write(m / "memory.limit_in_bytes", str(memory))
            with contextlib.suppress(OSError):  # only where swap accounting is on
                _write(m / "memory.memsw.limit_in_bytes", str(memory))
        if "pids" in self.paths:
            _write(self.paths["pids"] / "pids.max", str(pids))
        if "cpu" in self.paths:
            _write(self.paths["cpu"] / "cpu.cfs_period_us", "100000")
            _write(self.paths["cpu"] / "cpu.cfs_quota_us", str(int(cpus * 100_000)))
        if "cpuset" in self.paths and cores:
            _write(self.paths["cpuset"] / "cpuset.cpus", ",".join(map(str, cores)))

    def set_cores(self, cores: list[int]) -> None:
        p = self.paths.get("cpuset")
        if p is not None:
            with contextlib.suppress(OSError):
                _write(p / "cpuset.cpus", ",".join(map(str, cores)))

    def freeze(self) -> None:
        self._freeze(True)

    def thaw(self) -> None:
        self._freeze(False)

    def _freeze(self, on: bool) -> None:
        if self.frozen == on:
            return
        p = self.paths.get("freezer")
        if p is None:
            raise OSError(errno.ENOTSUP, "no freezer")
        if self.cg.version == 2:
            _write(p / "cgroup.freeze", "1" if on else "0")
        else:
            _write(p / "freezer.state", "FROZEN" if on else "THAWED")
        self.frozen = on

    def cpu_ns(self) -> int:
        """CPU time used by every process of the group so far, in nanoseconds."""
        if self.cg.version == 2:
            for line in _read(self.made[0] / "cpu.stat").splitlines():
                if line.startswith("usage_usec"):
                    return int(line.split()[1]) * 1000
            return 0
        p = self.paths.get("cpuacct")
        if p is None:
            return 0
        text = _read(p / "cpuacct.usage").strip()
        return int(text) if text.isdigit() else 0

    def oom_kills(self) -> int:
        """How many processes of the group the kernel killed for memory."""
        if self.cg.version == 2:
            f = self.made[0] / "memory.events"
        else:
            p = self.paths.get("memory")
            if p is None:
                return 0
            f = p / "memory.oom_control"
        for line in _read(f).splitlines():
            if line.startswith("oom_kill "):
                return int(line.split()[1])
        return 0

    def memory_peak(self) -> int:
        if self.cg.version == 2:
            t = _read(self.made[0] / "memory.peak").strip()
        else:
            p = self.paths.get("memory")
            t = _read(p / "memory.max_usage_in_bytes").strip() if p else ""
        return int(t) if t.isdigit() else 0

    def procs(self) -> list[int]:
        out: set[int] = set()
        for p in self.made:
            out.update(_procs(p))
        return sorted(out)

    def kill(self) -> None:
        """Kill every process in the group (thawed first: a frozen process cannot die)."""
        with contextlib.suppress(OSError):
            self._freeze(False)
        for p in self.made:
            _kill_procs(p)

    def remove(self) -> None:
        self.kill()
        for p in self.made:
            for _ in range(100):
                try:
                    p.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)


def detect() -> Cgroups | None:
    """The control groups maag can use here, or None (then `problems` of the returned value
    are lost: see `sandbox_check` for the reasons)."""
    cg, _ = probe()
    return cg


def probe(unified_root: Path | None = None) -> tuple[Cgroups | None, list[str]]:
    """What this machine's cgroups allow maag: the mechanism (or None) and what is missing.
    `unified_root`: use the cgroup v2 hierarchy mounted there (e.g. the v2 part of a hybrid
    machine, /sys/fs/cgroup/unified, for tests) instead of looking at /sys/fs/cgroup."""
    problems: list[str] = []
    own = _own_paths()
    unified = unified_root or (ROOT if (ROOT / "cgroup.controllers").exists() else None)
    if unified is not None:
        cur = unified / own.get("", "/").lstrip("/")
        avail = set(_read(cur / "cgroup.controllers").split())
        want = {"memory", "pids", "cpu", "cpuset"} & avail
        parent = cur / PARENT
        try:
            parent.mkdir(exist_ok=True)
            # The v2 rule "no processes in inner groups": controllers are enabled for the
            # children of maag's own parent group, which holds no process.
            enabled = set(_read(cur / "cgroup.subtree_control").split())
            if not want <= enabled:
                problems.append(f"controllers {' '.join(sorted(want - enabled))} are not enabled for "
                                f"{cur}'s children (delegate the group to maag: systemd Delegate=yes)")
            want &= enabled
            if want:
                _write(parent / "cgroup.subtree_control", " ".join("+" + c for c in sorted(want)))
        except OSError as e:
            problems.append(f"cannot create {parent}: {e.strerror} (run maag as root in a VM or a "
                            "privileged container, or as a systemd service with Delegate=yes)")
            return None, problems
        missing = {"memory", "pids", "cpu"} - want
        if missing:
            problems.append(f"cgroup v2 controllers missing: {' '.join(sorted(missing))}")
        return Cgroups(2, {"": parent}, want | {"freezer", "cpuacct"}, problems), problems
    parents: dict[str, Path] = {}
    for c in _V1_CONTROLLERS:
        mount = ROOT / c
        if not (mount / "cgroup.procs").exists():
            problems.append(f"cgroup v1 controller {c} is not mounted at {mount}")
            continue
        parent = mount / own.get(c, "/").lstrip("/") / PARENT
        try:
            parent.mkdir(exist_ok=True)
            if c == "cpuset":
                for f in ("cpuset.cpus", "cpuset.mems"):
                    if not _read(parent / f).strip():
                        _write(parent / f, _read(parent.parent / f).strip())
            parents[c] = parent
        except OSError as e:
            problems.append(f"cannot create {parent}: {e.strerror}")
    if not parents:
        return None, problems
    return Cgroups(1, parents, set(parents), problems), problems
