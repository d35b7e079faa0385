"""When the runner is killed with -9, every process of its sandboxed bots is gone and nothing
outside their scratch space was written.

`maag match PACKAGE random --game nim` runs as a real process; the package's bot leaves a
double-forked daemon behind at start-up, writes to /scratch, tries to write everywhere else
it can name, and thinks slowly. Once the sandbox's processes are seen (a uid of the sandbox's
range, descending from the maag process), maag is killed with SIGKILL: within a few seconds
no process of those sandboxes may remain (the kernel ends a pid namespace with its init, and
bubblewrap dies with its parent); no file the bot named exists on the host, the package's
staged copy is unchanged; the control groups maag made are left empty, and the next host to
start removes them.

Needs root, bubblewrap and cgroups: in CI ($CI set) a missing one fails the test; elsewhere it
is skipped, saying why.
"""

from __future__ import annotations

import contextlib
import filecmp
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from maag.server.hosting.api import Host, HostOptions
from maag.server.net.server import RefereeServer, ServerConfig
from maag.server.sandbox import cgroups
from maag.server.sandbox.check import sandbox_check
from maag.server.sandbox.jail import SANDBOX_UID_BASE, SANDBOX_UIDS, sdk_paths
from maag.server.storage.base import open_storage

BOT = '''\
"""Leaves a daemon behind, writes to /scratch, tries to write everywhere else, thinks slowly."""
import os
import sys
import time

from maag.clients import Bot, TurnResult, run_bot_blocking

MARKER = open("marker.txt").read().strip()
PLACES = open("places.txt").read().split()


def try_write(folder):
    path = os.path.join(folder, MARKER)
    try:
        with open(path, "w") as f:
            f.write(MARKER)
        print("WROTE", path, flush=True)
    except OSError as e:
        print("REFUSED", path, e.strerror, flush=True)


for place in PLACES:
    try_write(place)

if os.fork() == 0:  # a daemon: double fork, new session, lives on its own
    os.setsid()
    if os.fork() == 0:
        while True:
            with open("/scratch/daemon-" + MARKER, "a") as f:
                f.write("x")
            time.sleep(0.1)
    os._exit(0)


class Slow(Bot):
    name = "slow"
    want_legal = True
    games = ("nim",)

    def choose_turn(self, observation, limit):
        with open("/scratch/turn-" + MARKER, "a") as f:
            f.write("turn\\n")
        time.sleep(0.6)
        return TurnResult([observation.legal[0]])


print("READY", flush=True)
run_bot_blocking(Slow, os.environ["MAAG_CONNECT"], token=os.environ["MAAG_TOKEN"])
'''


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


@pytest.fixture(scope="module")
def cg() -> cgroups.Cgroups:
    problems = [f"{m.name}: {m.detail}" for m in sandbox_check() if m.required and not m.active]
    if os.geteuid() != 0:
        problems.append("not root: sandboxed bots get no uid of their own")
    found, why = cgroups.probe()
    if found is None:
        problems.append("no usable cgroups: " + "; ".join(why))
    if problems:
        if _in_ci():
            pytest.fail("; ".join(problems))
        pytest.skip("; ".join(problems))
    assert found is not None
    return found


def _stat(pid: int) -> tuple[int, int, str] | None:
    """(ppid, start time in ticks, state) of a process, or None if there is none."""
    try:
        f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(f[1]), int(f[19]), f[0]


def _uid(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Uid:"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def _processes() -> dict[int, tuple[int, int, str]]:
    out = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            s = _stat(int(d))
            if s is not None:
                out[int(d)] = s
    return out


def _descendants(root: int) -> dict[int, int]:
    """pid -> start time of every live descendant of `root`."""
    procs = _processes()
    kids: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in procs.items():
        kids.setdefault(ppid, []).append(pid)
    out, todo = {}, list(kids.get(root, []))
    while todo:
        p = todo.pop()
        out[p] = procs[p][1]
        todo.extend(kids.get(p, []))
    return out


def _sandboxed(pid: int) -> bool:
    uid = _uid(pid)
    return uid is not None and SANDBOX_UID_BASE <= uid < SANDBOX_UID_BASE + SANDBOX_UIDS


def _alive(pid: int, start: int) -> bool:
    """The same process (not a reused pid) still exists, other than as a zombie."""
    s = _stat(pid)
    return s is not None and s[1] == start and s[2] != "Z"


def _until(pred: Callable[[], bool], timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.05)
    return pred()


def _groups_of(cg: cgroups.Cgroups, pid: int) -> list[Path]:
    return sorted(c for parent in set(cg.parents.values()) if parent.is_dir()
                  for c in parent.iterdir() if c.is_dir() and c.name.startswith(f"{pid}-"))


def test_a_runner_killed_with_sigkill_leaves_no_sandboxed_process_and_no_file(
        cg: cgroups.Cgroups, tmp_path: Path) -> None:
    marker = f"maag-killed-{secrets.token_hex(6)}"
    sdk = sdk_paths()
    python_root = Path(sys.base_prefix).resolve()
    # What the bot tries to write to (inside the sandbox), and where each is on the host.
    places = {"/scratch": None, "/tmp": None, "/": Path("/"), "/bot": None, "/usr": Path("/usr"),
              "/etc": Path("/etc"), "/var/tmp": Path("/var/tmp"), "/dev/shm": None,
              "/root": Path("/root"), "/run": Path("/run"),
              "/opt/maag/sdk/maag/clients": sdk["clients"], "/opt/maag/sdk/maag/protocol": sdk["protocol"],
              str(python_root): python_root, str(tmp_path): tmp_path}
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "maag-bot.toml").write_text('name = "slow"\nrun = "python3 bot.py"\n')
    (pkg / "bot.py").write_text(BOT)
    (pkg / "marker.txt").write_text(marker + "\n")
    (pkg / "places.txt").write_text("\n".join(places) + "\n")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "MAAG_DB": str(tmp_path / "maag.sqlite3")}
    err = open(tmp_path / "maag.err", "wb")  # closed in `finally`
    runner = subprocess.Popen([sys.executable, "-m", "maag.server", "match", str(pkg), "random",
                               "--game", "nim", "--games", "20", "--tc", "1s"], env=env, cwd=tmp_path,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=err)
    seen: dict[int, int] = {}   # every process descending from maag: pid -> start time
    try:
        # Wait for the bot and its daemon: two processes of a sandbox uid below maag.
        def sandbox_up() -> bool:
            seen.update(_descendants(runner.pid))
            return sum(1 for p in _descendants(runner.pid) if _sandboxed(p)) >= 2 or runner.poll() is not None

        assert _until(sandbox_up, 60), "no sandboxed process appeared"
        assert runner.poll() is None, (tmp_path / "maag.err").read_text()[-3000:]
        time.sleep(0.5)  # a turn or two: the bot thinking, the daemon writing
        seen.update(_descendants(runner.pid))
        boxed = {p: t for p, t in seen.items() if _sandboxed(p)}
        uids = {_uid(p) for p in boxed}
        groups = _groups_of(cg, runner.pid)
        assert groups, "maag made no control group for its bot"
        assert any(int(x) in boxed for g in groups for x in (g / "cgroup.procs").read_text().split())

        runner.send_signal(signal.SIGKILL)
        runner.wait(10)
        killed_at = time.monotonic()
        kill_ticks = int(float(Path("/proc/uptime").read_text().split()[0]) * os.sysconf("SC_CLK_TCK")) + 1

        # Every process of the sandboxes is gone (the daemon too), within a few seconds.
        def all_gone() -> bool:
            return not any(_alive(p, t) for p, t in boxed.items())

        assert _until(all_gone, 5), [(p, _stat(p)) for p, t in boxed.items() if _alive(p, t)]
        assert time.monotonic() - killed_at < 5
        # ...and no process of those uids that started before the kill (the uids are maag's
        # alone while it holds them; another maag may take them once it is gone).
        left = {p: s for p, s in _processes().items()
                if _uid(p) in uids and s[1] <= kill_ticks and s[2] != "Z"}
        assert not left, left

        # Nothing was written outside the sandbox's scratch space.
        for inside, host in places.items():
            if host is not None:
                assert not (host / marker).exists(), f"{inside} -> {host / marker} written"
        assert not (Path("/dev/shm") / marker).exists()  # the bot's /dev/shm is its own, not the host's
        for p in tmp_path.rglob("*"):
            assert marker not in p.name, p
        logs = list(tmp.glob("maag-match-*/slow-game*-seat*.log"))
        assert logs, list(tmp.rglob("*"))
        report = "".join(log.read_text(errors="replace") for log in logs)
        assert f"WROTE /scratch/{marker}" in report, report[-2000:]  # the bot did run and write
        assert f"WROTE /dev/shm/{marker}" in report, report[-2000:]  # (its own shared memory)
        for inside in places:
            if inside not in ("/scratch", "/tmp", "/dev/shm"):
                assert f"WROTE {os.path.join(inside, marker)}" not in report, report
        [staged] = [p for p in tmp.glob("maag-hosted-*/stage-*/bot")]
        cmp = filecmp.dircmp(pkg, staged)
        assert (cmp.left_only, cmp.right_only, cmp.diff_files) == ([], [], []), "the package was changed"

        # maag's groups are left behind, empty; the next host to start removes them.
        assert _until(lambda: all(not (g / "cgroup.procs").read_text().split()
                                  for g in groups if g.exists()), 5)
        srv = RefereeServer(ServerConfig(port=0, game="nim"),
                            open_storage(f"sqlite:///{tmp_path / 'h.sqlite3'}"))
        host = Host(srv, HostOptions(), log_dir=tmp_path / "logs")
        host.close()
        srv.storage.storage.close()
        assert _groups_of(cg, runner.pid) == []
        assert not any(g.exists() for g in groups)
    finally:
        err.close()
        if runner.poll() is None:
            runner.kill()
            runner.wait()
        for pid, start in seen.items():  # the unsandboxed opponent too: leave nothing running
            if _alive(pid, start):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
