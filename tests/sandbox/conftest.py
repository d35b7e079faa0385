"""The hostile bot suite's tools: the sandbox's mechanisms (missing ones fail the tests in CI,
skip them elsewhere), a hostile package played through `maag match` as a real process, a
companion match of a well-behaved package played beside every hostile one, and the checks
that follow each: no process or control group of the bot remains, the host's memory, disk
and mounts are as before."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from maag.server.sandbox import cgroups
from maag.server.sandbox.check import sandbox_check
from maag.server.sandbox.jail import SANDBOX_UID_BASE, SANDBOX_UIDS
from maag.server.storage.base import SQLiteStorage

MAAG = [sys.executable, "-m", "maag.server"]
HERE = Path(__file__).resolve().parent
HOSTILE = HERE / "hostile"
HONEST = HERE / "honest"
NONCE = secrets.token_hex(4)
SECRETS = {
    # What a host's environment holds that no bot may see (each value has SECRET in it).
    "MAAG_DB": f"postgresql://maag:SECRET-{NONCE}@127.0.0.1:5432/maag",
    "DATABASE_URL": f"postgres://admin:SECRET-{NONCE}@db.internal/prod",
    "MAAG_ADMIN_TOKEN": f"maag_admin_SECRET{NONCE}",
    "GITHUB_TOKEN": f"ghp_SECRET{NONCE}",
    "AWS_SECRET_ACCESS_KEY": f"SECRET/{NONCE}",
}
NORMAL_REASONS = ("rules", "turn_limit")
MEMORY_MARGIN = 1024**3   # MemAvailable: the machine is shared, so only a gross leak shows
BOTS_MEMORY_MARGIN = 64 * 1024**2   # what maag's parent group of bot groups holds
DISK_MARGIN = 500 * 1000**2


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


@pytest.fixture(scope="session")
def sandbox() -> cgroups.Cgroups:
    """The cgroups maag will use; every mechanism the suite needs checked first: bubblewrap's
    namespaces, a uid per bot (maag runs as root), cgroups with memory, pids, cpu, cpuacct and
    freezer. Missing: fail in CI, skip elsewhere."""
    problems = [f"{m.name}: {m.detail}" for m in sandbox_check()
                if not m.active and (m.required or m.name.startswith(("an unprivileged uid", "cgroups")))]
    cg, why = cgroups.probe()
    need = {"memory", "pids", "cpu", "cpuacct", "freezer"}
    if cg is None:
        problems.append("no usable cgroups: " + "; ".join(why))
    elif not need <= cg.controllers:
        problems.append(f"cgroup controllers missing: {' '.join(sorted(need - cg.controllers))}")
    if problems:
        text = "the sandbox cannot run here: " + "; ".join(problems)
        if in_ci():
            pytest.fail(text)
        pytest.skip(text)
    assert cg is not None
    return cg


# -- the host's state -----------------------------------------------------------------------------

def _meminfo(key: str) -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(key)


def _mounts() -> set[tuple[str, str]]:
    out = set()
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        out.add((left.split()[4], right.split()[0]))
    return out


def bots_memory(cg: cgroups.Cgroups) -> int:
    """Bytes charged to maag's parent group of bot groups (where the charges of a removed
    group go, a tmpfs of a bot's that outlived it included)."""
    if cg.version == 2:
        f = cg.parents[""] / "memory.current"
    else:
        f = cg.parents["memory"] / "memory.usage_in_bytes"
    return int(f.read_text())


@dataclass
class HostState:
    mem_available: int
    bots_memory: int
    disk_free: dict[str, int]
    mounts: set[tuple[str, str]]

    @classmethod
    def now(cls, cg: cgroups.Cgroups, tmp: Path) -> HostState:
        return cls(_meminfo("MemAvailable"), bots_memory(cg),
                   {p: shutil.disk_usage(p).free for p in ("/", str(tmp))}, _mounts())

    def assert_back(self, cg: cgroups.Cgroups, tmp: Path) -> None:
        """Memory, disk and the mount table as before (give a few seconds for memory the
        kernel frees late, and for other users' noise to settle)."""
        deadline = time.monotonic() + 15
        while True:
            now = HostState.now(cg, tmp)
            problems = []
            if now.mem_available < self.mem_available - MEMORY_MARGIN:
                problems.append(f"MemAvailable {self.mem_available >> 20} -> {now.mem_available >> 20} MiB")
            if now.bots_memory > self.bots_memory + BOTS_MEMORY_MARGIN:
                problems.append(f"bot groups' memory {self.bots_memory >> 20} -> {now.bots_memory >> 20} MiB")
            for p, free in self.disk_free.items():
                if now.disk_free[p] < free - DISK_MARGIN:
                    problems.append(f"free disk at {p} {free >> 20} -> {now.disk_free[p] >> 20} MiB")
            new_mounts = now.mounts - self.mounts
            if new_mounts:
                problems.append(f"new mounts on the host: {sorted(new_mounts)}")
            if not problems:
                return
            if time.monotonic() > deadline:
                raise AssertionError("the host is not as before: " + "; ".join(problems))
            time.sleep(0.5)


def _proc_status(pid: str) -> dict[str, str]:
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        k, _, v = line.partition(":")
        out[k] = v.strip()
    return out


def _group_owner(cgroup_text: str) -> int | None:
    """The pid of the maag process whose bot group a process is in (from /proc/PID/cgroup)."""
    for line in cgroup_text.splitlines():
        path = line.split(":", 2)[2]
        if f"/{cgroups.PARENT}/" in path:
            head = path.split(f"/{cgroups.PARENT}/", 1)[1].split("/", 1)[0].split("-", 1)[0]
            if head.isdigit():
                return int(head)
    return None


def leftovers(maag_pid: int) -> list[str]:
    """Processes that belong to the bots of the maag process `maag_pid` (gone by now): those
    in its bot groups, and any process of a sandbox uid that is in no bot group at all (one
    that got out of its group: no bot's process ever may)."""
    uids = range(SANDBOX_UID_BASE, SANDBOX_UID_BASE + SANDBOX_UIDS)
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            cg_text = Path(f"/proc/{d}/cgroup").read_text()
            status = _proc_status(d)
        except (OSError, IndexError):
            continue  # gone meanwhile
        owner = _group_owner(cg_text)
        uid = int(status.get("Uid", "0").split()[0])
        if owner == maag_pid or (uid in uids and owner is None):
            out.append(f"pid {d} uid {uid} {status.get('Name')} (group of maag pid {owner})")
    return out


def groups_left(cg: cgroups.Cgroups, maag_pid: int) -> list[str]:
    return [str(child) for parent in set(cg.parents.values()) if parent.is_dir()
            for child in parent.iterdir() if child.is_dir() and child.name.startswith(f"{maag_pid}-")]


# -- a match as a real process ----------------------------------------------------------------------

@dataclass
class Match:
    cmd: list[str]
    returncode: int
    stdout: str
    stderr: str
    pid: int
    db: Path
    tmpdir: Path
    started: float
    ended: float
    games: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)

    def logs(self, prefix: str) -> list[Path]:
        """The log files of the bot named `prefix` (a hosted bot: one per game)."""
        return sorted(self.tmpdir.glob(f"maag-match-*/{prefix}*.log"))

    def probes(self, prefix: str) -> list[dict[str, Any]]:
        """Every `PROBE {...}` line the bot printed, over all its games."""
        out = []
        for p in self.logs(prefix):
            for line in p.read_text(errors="replace").splitlines():
                if line.startswith("PROBE "):
                    out.append(json.loads(line[6:]))
        return out

    def seat_of(self, game: dict[str, Any], name: str) -> int:
        """1 or 2: the seat of bot `name` in `game`."""
        return 1 if game["seat1"] == name else 2

    def stored(self) -> list[tuple[Any, dict[str, Any] | None]]:
        """(record, replay) of every game in the match's database."""
        st = SQLiteStorage(self.db)
        try:
            return [(g, st.get_replay(g.id)) for g in sorted(st.list_games(), key=lambda g: g.id)]
        finally:
            st.close()

    def describe(self) -> str:
        return (f"$ {' '.join(self.cmd)}\nexit {self.returncode}\nstdout:\n{self.stdout[-3000:]}\n"
                f"stderr:\n{self.stderr[-3000:]}")


class Running:
    """A `maag match` process under way (see `launch`)."""

    def __init__(self, cmd: list[str], env: dict[str, str], tmp: Path, db: Path, tmpdir: Path) -> None:
        self.cmd, self.tmp, self.db, self.tmpdir = cmd, tmp, db, tmpdir
        self.started = time.monotonic()
        with open(tmp / "stdout", "wb") as out, open(tmp / "stderr", "wb") as err:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env)

    def finish(self, watch: Callable[[], None] | None = None, timeout: float = 180.0) -> Match:
        """Wait for the match to end (calling `watch` every 50 ms meanwhile) and read it."""
        try:
            while self.proc.poll() is None:
                if watch is not None:
                    watch()
                if time.monotonic() - self.started > timeout:
                    raise AssertionError(f"maag match ran over {timeout} s: {' '.join(self.cmd)}")
                time.sleep(0.05)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        m = Match(self.cmd, self.proc.returncode, (self.tmp / "stdout").read_text(),
                  (self.tmp / "stderr").read_text(), self.proc.pid, self.db, self.tmpdir, self.started,
                  time.monotonic())
        for line in m.stdout.splitlines():
            with contextlib.suppress(ValueError):
                obj = json.loads(line)
                if obj.get("event") == "game":
                    m.games.append(obj)
                elif "games" in obj:
                    m.summary = obj
        return m


def launch(tmp: Path, bot: str, opponent: str = "random", *, games: int = 1, tc: str = "300ms",
           args: tuple[str, ...] = (), targets: dict[str, Any] | None = None,
           env: dict[str, str] | None = None, prefix: tuple[str, ...] = ()) -> Running:
    """Start `maag match BOT OPPONENT` on nim as its own process, with the host's secrets in
    its environment and its temporary files (bot logs included) under `tmp`. BOT is the name
    of a package under hostile/ (copied, with `targets` as its targets.json) or a command line.
    `prefix`: a command that runs maag's (and ends by exec'ing it)."""
    tmp.mkdir(parents=True, exist_ok=True)
    if " " not in bot:
        pkg = tmp / "pkg" / bot
        shutil.copytree(HOSTILE / bot, pkg)
        (pkg / "targets.json").write_text(json.dumps(targets or {}))
        spec = str(pkg)
    else:
        spec = bot
    tmpdir = tmp / "tmp"
    tmpdir.mkdir(exist_ok=True)
    db = tmp / "match.sqlite3"
    cmd = [*prefix, *MAAG, "match", spec, opponent, "--game", "nim", "--games", str(games), "--tc", tc,
           "--db", str(db), "--json", "--max-illegal", "1", *args]
    return Running(cmd, {**os.environ, **SECRETS, "TMPDIR": str(tmpdir), **(env or {})}, tmp, db, tmpdir)


def play(tmp: Path, bot: str, opponent: str = "random", *, watch: Callable[[], None] | None = None,
         **kw: Any) -> Match:
    """`launch`, then `finish`."""
    return launch(tmp, bot, opponent, **kw).finish(watch)


def command_line(tmp: Path, name: str, targets: dict[str, Any]) -> str:
    """Hostile package `name` as a command line (run outside the sandbox), with its targets."""
    pkg = tmp / "cmd" / name
    shutil.copytree(HOSTILE / name, pkg)
    (pkg / "targets.json").write_text(json.dumps(targets))
    return f"{sys.executable} {pkg / 'bot.py'}"


# -- the companion: a well-behaved package's match beside every hostile one ----------------------------

def _stuck_state(pid: int) -> str:
    """What a process that outlived its Ctrl-C is doing: its signal masks (SigIgn with bit 1
    set: SIGINT ignored; SigBlk: blocked), each thread's state and the kernel function it
    waits in, and its children."""
    out = []
    with contextlib.suppress(OSError):
        out += [line for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                if line.startswith(("State", "Sig", "Shd", "Threads"))]
    with contextlib.suppress(OSError):
        for tid in sorted(os.listdir(f"/proc/{pid}/task")):
            with contextlib.suppress(OSError):
                stat = Path(f"/proc/{pid}/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()[0]
                name = Path(f"/proc/{pid}/task/{tid}/comm").read_text().strip()
                wchan = Path(f"/proc/{pid}/task/{tid}/wchan").read_text().strip()
                out.append(f"thread {tid} {name}: {stat} in {wchan or '-'}")
    with contextlib.suppress(OSError):
        kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        out += [f"child {k}: " + Path(f"/proc/{k}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:200]
                for k in kids if Path(f"/proc/{k}").exists()]
    return "\n".join(out)


def _ignores_sigint(pid: int) -> bool:
    """Whether process `pid` has SIGINT ignored (bit 1 of SigIgn in /proc/PID/status)."""
    return bool(int(_proc_status(str(pid))["SigIgn"], 16) & 1 << (signal.SIGINT - 1))


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Companion:
    """`maag match honest random` (the honest bot hosted in the sandbox too), many games long,
    in its own process and database; its finished games are read as they are printed."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        (tmp / "tmp").mkdir(parents=True, exist_ok=True)
        self.db = tmp / "companion.sqlite3"
        self.cmd = [*MAAG, "match", str(HONEST), "random", "--game", "nim", "--games", "100000",
                    "--tc", "300ms", "--db", str(self.db), "--json"]
        self.err = open(tmp / "companion.stderr", "wb")  # noqa: SIM115 (closed in stop())
        # A user's shell starts maag with Ctrl-C at its default. A test run started as a
        # background job of a script or a non-interactive shell (`pytest ... &`) has SIGINT and
        # SIGQUIT ignored (POSIX, for a job without job control); a child inherits an ignored
        # SIGINT through exec and Python then installs no KeyboardInterrupt handler, so the
        # companion would play on after its Ctrl-C (two whole-suite runs lost 60 s twice each
        # so, its bots' groups left; a lone match started right keeps Ctrl-C working through
        # 1,500 games). Started as a shell would start it, whatever the test process's own.
        self.sigint_in_tests = signal.getsignal(signal.SIGINT)
        self.proc = subprocess.Popen(self.cmd, stdout=subprocess.PIPE, stderr=self.err,
                                     stdin=subprocess.DEVNULL, preexec_fn=_default_sigint,
                                     env={**os.environ, **SECRETS, "TMPDIR": str(tmp / "tmp")})
        self.games: list[tuple[float, dict[str, Any]]] = []
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with contextlib.suppress(ValueError):
                obj = json.loads(line)
                if obj.get("event") == "game":
                    with self._lock:
                        self.games.append((time.monotonic(), obj))

    def finished_since(self, t: float) -> list[dict[str, Any]]:
        with self._lock:
            return [g for at, g in self.games if at >= t]

    def assert_fine_beside(self, m: Match) -> None:
        """The companion went on while the hostile match ran: it is still running, the game it
        was playing when the hostile match ended finished (wait for it), and every game that
        finished since the hostile match started ended normally, with no verdict."""
        deadline = time.monotonic() + 60
        while not self.finished_since(m.ended):
            assert self.proc.poll() is None, f"the companion match ended: {self.stderr_tail()}"
            assert time.monotonic() < deadline, f"no companion game finished in 60 s: {self.stderr_tail()}"
            time.sleep(0.05)
        beside = self.finished_since(m.started)
        bad = [g for g in beside if g["verdict"] is not None or g["reason"] not in NORMAL_REASONS]
        assert not bad, f"the companion's games beside the hostile one: {bad}"

    def stderr_tail(self) -> str:
        return (self.tmp / "companion.stderr").read_text(errors="replace")[-2000:]

    def stop(self) -> int:
        """Stop it as a user would (Ctrl-C); returns its pid."""
        stuck = False
        state = ""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                stuck = True
                state = _stuck_state(self.proc.pid)
                self.proc.kill()
                self.proc.wait()
        self._reader.join(10)
        self.err.close()
        if stuck:
            tail = (self.tmp / "companion.stderr").read_bytes()[-3000:].decode(errors="replace")
            raise AssertionError(f"the companion did not stop within 60 s of Ctrl-C (SIGINT in the test "
                                 f"process: {self.sigint_in_tests!r}; reader thread alive: "
                                 f"{self._reader.is_alive()}); its state:\n{state}\nits stderr:\n{tail}")
        return self.proc.pid


@pytest.fixture(scope="module")
def companion(sandbox: cgroups.Cgroups, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Companion]:
    c = Companion(tmp_path_factory.mktemp("companion"))
    try:
        deadline = time.monotonic() + 60
        while not c.games:  # playing before the first hostile match starts
            assert c.proc.poll() is None, f"the companion match did not start: {c.stderr_tail()}"
            assert time.monotonic() < deadline, f"the companion played no game in 60 s: {c.stderr_tail()}"
            time.sleep(0.05)
        # Its Ctrl-C must work (Companion's start): said now, not as a 60 s wait at the end.
        assert not _ignores_sigint(c.proc.pid), \
            f"the companion ignores SIGINT: {_proc_status(str(c.proc.pid)).get('SigIgn')}"
        yield c
    finally:
        pid = c.stop()
    # Afterwards: every game it stored finished normally (only the one Ctrl-C stopped may
    # be stored as aborted), and none of its bots' processes or groups remain.
    st = SQLiteStorage(c.db)
    try:
        records = st.list_games(limit=100_000)
        verdicts = [(g.id, (st.get_replay(g.id) or {}).get("result", {}).get("verdict")) for g in records
                    if g.status == "finished"]
    finally:
        st.close()
    assert len(records) >= len(c.games) > 0
    assert sum(g.status == "aborted" for g in records) <= 1, [(g.id, g.status, g.reason) for g in records]
    assert all(g.reason in NORMAL_REASONS for g in records if g.status == "finished"), \
        [(g.id, g.reason) for g in records]
    assert all(v is None for _, v in verdicts), [x for x in verdicts if x[1] is not None]
    assert not leftovers(pid) and not groups_left(sandbox, pid)
