"""Bots the host runs itself, in the sandbox (maag.server.sandbox): a participant's package,
or any command line with `--sandbox`. A hosted bot plays one game per process: for each
game the host starts a fresh sandboxed process, hands it one end of a socket pair (the
other end is attached to the referee), waits for its hello on a budget of its own (never
charged to the game clock), asks the referee for that game with exactly these connections,
and ends every process of it when the game is over.

Fair clocks: with `ponder="freeze"` a hosted bot's processes are frozen whenever the
referee is not waiting for it, and thawed just before its `your_turn` is written; each game
gets cores of its own when the machine has enough (the bots of one game share them: only
one of them thinks at a time); each seat's CPU time per turn, its CPU time off turn, and
whether the machine was overloaded while the game ran are kept in the replay (`host`).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import fcntl
import io
import logging
import os
import shutil
import socket
import tempfile
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from maag.server.net.server import Absence, GameNotStarted, GameSummary, RefereeServer
from maag.server.printable import printable
from maag.server.sandbox import cgroups, seccomp
from maag.server.sandbox.archive import unpack_tar
from maag.server.sandbox.environment import bot_environment
from maag.server.sandbox.jail import LOCK_DIR, Jail, JailConfig, stage_package
from maag.server.sandbox.limits import DEFAULT_LIMITS, Limits
from maag.server.sandbox.package import BotPackage, PackageError, is_package

__all__ = ["HostOptions", "Host", "HostedBot", "SandboxUnavailable", "PONDER", "safe_name", "sandbox_env",
           "sandbox_path", "launch_relayed", "hosted_bot", "build", "check_threads", "default_max_threads"]

LOG = logging.getLogger(__name__)
PONDER = ("allow", "freeze")
OVERLOAD_PRESSURE = 25.0
"""CPU pressure (% of the game's wall time with a task waiting for a CPU, from PSI's "some"
total) above which a game is marked as played on an overloaded machine."""
OVERLOAD_LAG_MS = 50.0
"""Event-loop lag of the referee (ms) above which a game is marked the same way."""


class SandboxUnavailable(RuntimeError):
    """The sandbox cannot run here (no bubblewrap, no namespaces): `maag sandbox check` says why."""


def default_max_threads() -> int:
    """The cores a package may ask for (`threads`) unless the host says otherwise: all of the
    machine's but one (kept for the referee), at least one."""
    return max(1, (os.cpu_count() or 1) - 1)


@dataclass(frozen=True, slots=True)
class HostOptions:
    limits: Limits = DEFAULT_LIMITS
    ponder: str = "allow"
    pass_env: tuple[str, ...] = ()
    sandbox_commands: bool = False
    """Run command-line bots in the sandbox too (`--sandbox`); packages always are."""
    pin_cores: bool = True
    max_threads: int = field(default_factory=default_max_threads)
    """The most `threads` a package may ask for (`--max-threads`); one asking for more is refused."""

    def to_dict(self) -> dict[str, Any]:
        """Plain data, for a Dask worker."""
        return {"limits": self.limits.to_dict(), "ponder": self.ponder, "pass_env": list(self.pass_env),
                "sandbox_commands": self.sandbox_commands, "pin_cores": self.pin_cores,
                "max_threads": self.max_threads}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> HostOptions:
        return cls(limits=Limits(**d["limits"]) if "limits" in d else DEFAULT_LIMITS,
                   ponder=d.get("ponder", "allow"), pass_env=tuple(d.get("pass_env", ())),
                   sandbox_commands=bool(d.get("sandbox_commands", False)),
                   pin_cores=bool(d.get("pin_cores", True)),
                   max_threads=int(d.get("max_threads") or default_max_threads()))


def check_threads(pkg: BotPackage, options: HostOptions, where: str = "") -> None:
    """PackageError when `pkg` asks for more cores than the host grants."""
    if pkg.threads > options.max_threads:
        raise PackageError(f"{where or pkg.name}: the package asks for threads = {pkg.threads}, but this "
                           f"host grants at most {options.max_threads} (--max-threads)")


@dataclass(slots=True)
class HostedBot:
    """A participant the host runs in the sandbox: the folder bound at /bot and the argv."""

    name: str
    folder: Path
    argv: list[str]
    threads: int = 1
    package: BotPackage | None = None


STORED_PREFIX = "package:sha256:"
"""A bot given as a stored package (a submitted version): `package:sha256:HEX`."""


def hosted_bot(spec: str, name: str, options: HostOptions, workdir: Path,
               db_url: str | None = None) -> HostedBot | None:
    """`spec` as a hosted bot when it is one (a package; a stored package, fetched from the
    database `db_url` by its hash and cached; a command line with sandboxing on), else None.
    A package is copied into `workdir` (readable by the sandbox's users)."""
    if spec.startswith(STORED_PREFIX):
        if db_url is None:
            raise ValueError(f"{name}: a stored package needs the database that holds it")
        from maag.server.compete.submissions import materialize
        from maag.server.storage.submissions import open_submission_store

        store = open_submission_store(db_url)
        try:
            spec = str(materialize(store, spec[len(STORED_PREFIX):]))
        finally:
            store.close()
    if is_package(spec):
        pkg = BotPackage.load(spec, unpack_to=workdir)
        check_threads(pkg, options, spec)
        stage = Path(tempfile.mkdtemp(prefix="stage-", dir=workdir))
        folder = stage_package(pkg.root, stage)
        return HostedBot(name, folder, pkg.argv, pkg.threads, pkg)
    if options.sandbox_commands and any(ch.isspace() for ch in spec.strip()):
        # The current folder, read-only at /bot; placeholders become the sandbox's variables.
        stage = Path(tempfile.mkdtemp(prefix="stage-", dir=workdir))
        folder = stage_package(Path.cwd(), stage) if _small(Path.cwd()) else Path.cwd()
        text = spec
        for k, v in {"connect": '"$MAAG_CONNECT"', "token": '"$MAAG_TOKEN"', "concurrency": "1",
                     "host": '""', "port": '""'}.items():
            text = text.replace("{" + k + "}", v)
        return HostedBot(name, folder, ["/bin/sh", "-c", text], 1, None)
    return None


def _small(folder: Path, limit: int = 50 * 1024 * 1024) -> bool:
    total = 0
    for dirpath, _, files in os.walk(folder):
        for f in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(dirpath, f)).st_size
            if total > limit:
                return False
    return True


BUILD_SPACE = 500 * 1000**2
"""Bytes a package's build may occupy (its source included): /bot is a space in memory this big."""


async def build(bot: HostedBot, options: HostOptions, cg: cgroups.Cgroups | None, log_dir: Path) -> None:
    """Run the package's `build` command once, in the sandbox (no network), on a copy of the
    package in a capped space in memory; what it leaves in /bot becomes the package the games
    run. Its output goes to `log_dir/NAME-build.log`. RuntimeError (with the log's tail) if
    it fails or runs out of its time (`limits.build_s`)."""
    pkg = bot.package
    if pkg is None or not pkg.build:
        return
    read_fd, write_fd = os.pipe()
    # Hard links are written as the files they name: the host refuses hard links in an archive.
    script = (f'cp -R /src/. /bot/ && {{ {pkg.build} ; }} && '
              f'tar --hard-dereference -C /bot -cf /proc/self/fd/{write_fd} .')
    env = {"PATH": sandbox_path(), "HOME": "/scratch", "TMPDIR": "/scratch", "LANG": "C.UTF-8",
           "PYTHONPATH": "/opt/maag/sdk", "MAAG_BOT": bot.name, "MAAG_BUILD": "1"}
    log_path = log_dir / f"{safe_name(bot.name)}-build.log"
    limits = dataclasses.replace(options.limits, log=max(options.limits.log, 4 * 1000**2))
    jail = Jail(JailConfig(["/bin/sh", "-c", script], bot.folder, env, limits, threads=max(1, bot.threads),
                           extra_fds=[write_fd], build_space=BUILD_SPACE), cg, log_path)
    if jail.slot.uid is not None:  # the sandbox's user opens the pipe by its /proc path
        os.fchown(write_fd, jail.slot.uid, -1)
    data = bytearray()
    loop = asyncio.get_running_loop()

    def drain() -> None:  # the built tree, read as the build writes it (capped)
        with os.fdopen(read_fd, "rb") as f:
            while chunk := f.read(1 << 16):
                if len(data) <= BUILD_SPACE:
                    data.extend(chunk)

    reader = loop.run_in_executor(None, drain)
    try:
        await jail.start()
        os.close(write_fd)
        write_fd = -1
        rc = await jail.wait(options.limits.build_s)
        if rc is None:
            raise RuntimeError(f"{bot.name}: the build ran over its {options.limits.build_s:g} s; "
                               f"its log {log_path} ends with:\n{printable(jail.log_tail())}")
    finally:
        if write_fd >= 0:
            os.close(write_fd)
        await jail.close()
        await reader
    if rc != 0:
        v = jail.verdict()
        raise RuntimeError(f"{bot.name}: the build failed ({v.detail if v else f'exit code {rc}'}); "
                           f"its log {log_path} ends with:\n{printable(jail.log_tail())}")
    built = bot.folder.parent / "built"
    try:
        # Made here (0755), every file 0755 or 0644, no link followed (maag.server.sandbox.archive).
        unpack_tar(io.BytesIO(data), built, max_bytes=BUILD_SPACE, what=f"{bot.name}'s build")
    except PackageError as e:
        raise RuntimeError(f"{bot.name}: the build's result is refused: {e}") from None
    shutil.rmtree(bot.folder)
    bot.folder = built
    LOG.info("%s: built (%d bytes); log %s", bot.name, len(data), log_path)


def safe_name(name: str) -> str:
    """`name` as a file name (bot logs): letters, digits, '-', '_' and '.', the rest '_'."""
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)


class _Monitor:
    """Samples the machine's CPU stall time and the event loop's lag, for `overload`: a game's
    CPU pressure is the share of its wall time in which some runnable task waited for a CPU
    (PSI's cumulative "some" total, differenced over the game), so a short burst before or
    after it does not count, as a ten-second average would."""

    def __init__(self) -> None:
        self.samples: deque[tuple[float, float | None, float]] = deque(maxlen=20_000)  # (t, stall s, lag ms)
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self.samples.append((time.monotonic(), _cpu_stall_s(), 0.0))
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        period = 0.25
        while True:
            t0 = time.monotonic()
            await asyncio.sleep(period)
            lag = max(0.0, (time.monotonic() - t0 - period) * 1000)
            self.samples.append((time.monotonic(), _cpu_stall_s(), lag))

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None

    def mark(self) -> tuple[float, float | None]:
        """(now, the stall total now): a game's start."""
        return time.monotonic(), _cpu_stall_s()

    def between(self, start: tuple[float, float | None]) -> dict[str, Any]:
        t0, stall0 = start
        t1, stall1 = self.mark()
        if stall0 is not None and stall1 is not None and t1 > t0:
            pressure = 100.0 * (stall1 - stall0) / (t1 - t0)
        else:  # without PSI: the load above the machine's cores, as a percentage
            pressure = max(0.0, (os.getloadavg()[0] / (os.cpu_count() or 1) - 1.0) * 100)
        lag = max((s[2] for s in self.samples if t0 <= s[0] <= t1 + 0.3), default=0.0)
        return {"cpu_pressure": round(pressure, 2), "referee_lag_ms_max": round(lag, 1),
                "overloaded": pressure > OVERLOAD_PRESSURE or lag > OVERLOAD_LAG_MS}


def _cpu_stall_s() -> float | None:
    """Seconds in which some runnable task waited for a CPU, since boot (PSI), or None."""
    try:
        with open("/proc/pressure/cpu") as f:
            first = f.readline().split()
        return float(first[4].split("=")[1]) / 1e6
    except (OSError, IndexError, ValueError):
        return None


@dataclass
class _Clock:
    """Each hosted seat's CPU time per turn, measured at every prompt."""

    jails: list[Jail | None]
    mover: int | None = None
    marks: list[int] = field(default_factory=lambda: [0, 0])
    turn_ns: list[int] = field(default_factory=lambda: [0, 0])
    turns: list[list[float]] = field(default_factory=lambda: [[], []])
    off_turn_ns: list[int] = field(default_factory=lambda: [0, 0])

    def start(self) -> None:
        self.marks = [j.cpu_ns() if j else 0 for j in self.jails]

    def advance(self, seat: int | None) -> None:
        if seat is not None and seat == self.mover:
            return  # the same turn goes on: nothing to read (the referee's cost per action stays)
        for i, j in enumerate(self.jails):
            if j is None:
                continue
            now = j.cpu_ns()
            delta, self.marks[i] = now - self.marks[i], now
            if i == self.mover:
                self.turn_ns[i] += delta
            else:
                self.off_turn_ns[i] += delta
        if seat != self.mover and self.mover is not None:
            self.turns[self.mover].append(round(self.turn_ns[self.mover] / 1e6, 2))
            self.turn_ns[self.mover] = 0
        self.mover = seat

    def report(self) -> dict[str, Any]:
        self.advance(None)
        return {"cpu_ms_per_turn": [t if j else None for t, j in zip(self.turns, self.jails, strict=True)],
                "cpu_ms_off_turn": [round(n / 1e6, 2) if j else None
                                    for n, j in zip(self.off_turn_ns, self.jails, strict=True)]}


class Host:
    """Runs hosted bots for one referee: detects the sandbox once, allots cores, plays games."""

    def __init__(self, server: RefereeServer, options: HostOptions, *, log_dir: Path,
                 require_cgroups: bool = False) -> None:
        if not Path(shutil.which("bwrap") or "/usr/bin/bwrap").exists():
            raise SandboxUnavailable("bubblewrap (bwrap) is not installed: apt-get install bubblewrap "
                                     "(`maag sandbox check` says what else is missing)")
        try:
            seccomp.bpf()  # built now, once: without the filter no bot may start, and the host says so here
        except seccomp.SeccompUnavailable as e:
            raise SandboxUnavailable(str(e)) from e
        if options.ponder not in PONDER:
            raise ValueError(f"--ponder must be one of {', '.join(PONDER)}")
        self.server = server
        self.options = options
        self.log_dir = log_dir
        self.cg, problems = cgroups.probe()
        if self.cg is None and require_cgroups:
            raise SandboxUnavailable("no usable cgroups: " + "; ".join(problems))
        if self.cg is not None:
            n = self.cg.remove_stale()
            if n:
                LOG.warning("removed %d sandbox group(s) left by maag processes that were killed", n)
        self.monitor = _Monitor()
        self.ncpu = len(os.sched_getaffinity(0))
        self._cores_busy: set[int] = set()
        self._core_locks: dict[int, int] = {}
        self.games = 0

    async def prepare(self, bots: Sequence[HostedBot]) -> None:
        """Build the packages that have a build command (once each, before any game)."""
        for b in bots:
            await build(b, self.options, self.cg, self.log_dir)

    def _take_cores(self, n: int) -> list[int] | None:
        """`n` cores no other game holds, in this process or another maag process on the host
        (each held with a lock file beside the sandbox uids'), or None when there are not enough."""
        if not self.options.pin_cores:
            return None
        got: list[int] = []
        for c in sorted(os.sched_getaffinity(0)):
            if len(got) == n:
                break
            if c in self._cores_busy:
                continue
            try:
                LOCK_DIR.mkdir(parents=True, exist_ok=True, mode=0o700)
                fd = os.open(LOCK_DIR / f"core-{c}.lock", os.O_CREAT | os.O_RDWR, 0o600)
            except OSError:
                return None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            self._core_locks[c] = fd
            got.append(c)
        if len(got) < n:
            self._release_cores(got)
            return None
        self._cores_busy.update(got)
        return got

    def _release_cores(self, cores: list[int]) -> None:
        for c in cores:
            self._cores_busy.discard(c)
            fd = self._core_locks.pop(c, None)
            if fd is not None:
                os.close(fd)

    async def play(self, seats: tuple[str, str], bots: Sequence[HostedBot | None], tokens: Sequence[str], *,
                   match_id: str | None = None, seed: int | None = None,
                   tags: dict[str, Any] | None = None, absence: Absence | None = None,
                   on_start: Callable[[int], None] | None = None) -> GameSummary:
        """Play one game between `seats` (names); a seat whose bot is hosted gets a fresh
        sandboxed process, the other is paired by name as usual (`absence`: how long it may
        be without a connection, RefereeServer.request_game; `on_start`: told the stored
        game's id when it begins). A hosted process that fails before the game (no hello in
        time, its connection closed) loses it by forfeit.

        Each hosted seat's log is `NAME-gameID-seatS.log`, ID the stored game's (as in `maag
        replay ID`, the web view and the ladder's lines): until the game has its id (the
        process starts first), `NAME-startN-seatS.log`, N this host's count."""
        jails: list[Jail | None] = [None, None]

        def begun(gid: int) -> None:
            self._name_logs(jails, gid)
            if on_start is not None:
                on_start(gid)

        summary = await self._play(seats, bots, tokens, jails, match_id=match_id, seed=seed, tags=tags,
                                   absence=absence, on_start=begun)
        self._name_logs(jails, summary.game_id)  # a forfeit before the game: named now
        return summary

    @staticmethod
    def _name_logs(jails: Sequence[Jail | None], gid: int) -> None:
        for j in jails:
            if j is None or "-start" not in j.log_path.name:
                continue
            head, _, tail = j.log_path.name.rpartition("-start")
            named = j.log_path.with_name(f"{head}-game{gid}-{tail.split('-', 1)[1]}")
            with contextlib.suppress(OSError):  # (the log is written through an open file: renamed under it)
                os.replace(j.log_path, named)
                j.log_path = named

    async def _play(self, seats: tuple[str, str], bots: Sequence[HostedBot | None], tokens: Sequence[str],
                    jails: list[Jail | None], *, match_id: str | None, seed: int | None,
                    tags: dict[str, Any] | None, absence: Absence | None,
                    on_start: Callable[[int], None]) -> GameSummary:
        self.monitor.start()
        self.games += 1
        n = self.games
        threads = max([b.threads for b in bots if b is not None] or [1])
        cores = self._take_cores(threads)
        handles: list[asyncio.Future[str] | None] = [None, None]
        ends: list[socket.socket] = []
        t_start = self.monitor.mark()

        def kept() -> dict[str, Any]:
            # A forfeit before the game: the end of each hosted process's log, for its owner
            # (`maag replay ID`), as a played game's replay keeps it (annotate, below).
            return {"sandboxed": [j is not None for j in jails],
                    "log_tail": [j.log_tail(20)[-2000:] if j is not None else None for j in jails]}

        try:
            for i, bot in enumerate(bots):
                if bot is None:
                    continue
                ours, theirs = socket.socketpair()
                ends.append(theirs)
                jail_ref: list[Jail] = []

                async def probe(ref: list[Jail] = jail_ref) -> tuple[str, str] | None:
                    j = ref[0]
                    await j.wait(2.0)
                    v = j.verdict()
                    return None if v is None else (v.kind, v.detail)

                handles[i] = self.server.attach(ours, probe=probe)
                env = sandbox_env(bot, tokens[i], self.server.config.game, theirs.fileno(), self.options)
                safe = safe_name(bot.name)
                jail = Jail(JailConfig(bot.argv, bot.folder, env, self.options.limits, threads=bot.threads,
                                       cores=cores, extra_fds=[theirs.fileno()]),
                            self.cg, self.log_dir / f"{safe}-start{n}-seat{i + 1}.log")
                jail_ref.append(jail)
                jails[i] = jail
                await jail.start()
            for e in ends:
                e.close()
            ends.clear()
            # Start-up: each hosted process must say hello within its own budget.
            for i, h in enumerate(handles):
                if h is None:
                    continue
                try:
                    await asyncio.wait_for(asyncio.shield(h), self.options.limits.hello_s)
                except (asyncio.TimeoutError, ConnectionError) as e:
                    j = jails[i]
                    assert j is not None
                    await j.wait(0.5)
                    v = j.verdict()
                    detail = (f"no hello within {self.options.limits.hello_s:g} s"
                              if isinstance(e, asyncio.TimeoutError) else "closed before its hello"
                              + ("" if str(e) == "closed before its hello" else f" ({e})"))
                    if v is not None:
                        detail += f"; {v.detail}"
                    LOG.warning("game %d: %s did not start: %s", n, seats[i], detail)
                    return await self.server.record_forfeit(seats, i, "startup", detail, match_id=match_id,
                                                            tags=tags, seed=seed, host=kept())
            clock = _Clock(list(jails))
            clock.start()
            freeze = self.options.ponder == "freeze"

            def on_prompt(seat: int) -> None:
                clock.advance(seat)
                if freeze:
                    mover, other = jails[seat], jails[1 - seat]
                    if mover is not None:
                        mover.thaw()
                    if other is not None and other.running:
                        other.freeze()

            if freeze:
                # Until its first prompt, a hosted bot has nothing to think about.
                for j in jails:
                    if j is not None:
                        j.freeze()

            def annotate() -> dict[str, Any]:
                # kept(): which seats are sandboxed and the end of each hosted bot's log, for
                # its owner (`maag replay ID`; the web view leaves it out).
                out: dict[str, Any] = {**kept(), "ponder": self.options.ponder, "cores": cores,
                                       **clock.report(), **self.monitor.between(t_start)}
                out["memory_peak"] = [j.group.memory_peak() if j is not None and j.group is not None else None
                                      for j in jails]
                out["log_truncated"] = [bool(j and j.log_truncated) for j in jails]
                return out

            fut = self.server.request_game(seats[0], seats[1], match_id=match_id, seed=seed, tags=tags,
                                           clients=(handles[0], handles[1]), on_prompt=on_prompt,
                                           annotate=annotate, requeue=False, absence=absence,
                                           on_start=on_start)
            try:
                return await fut
            except GameNotStarted as gone:
                # A hosted process said hello, then closed its connection (ended, or lives on
                # without it) before the game's first message: its seat forfeits the game,
                # which is stored like any other; the match or tournament goes on.
                blamed = gone.seat if gone.seat is not None else next(
                    (i for i, j in enumerate(jails) if j is not None and not j.running), None)
                if blamed is None:
                    raise  # (no seat to blame: the game could not be set up)
                j = jails[blamed]
                v = None
                if j is not None:
                    await j.wait(0.5)  # (a process that closed its socket to exit: its own verdict)
                    v = j.verdict()
                if j is None:  # the other seat, a bot process paired by name
                    kind, detail = "disconnect", "its connection closed before its game began"
                elif v is not None and v.kind != "outside":  # (killed from outside in these few ms
                    kind, detail = v.kind, v.detail           # before its game: a startup forfeit still)
                elif j.running:
                    kind, detail = "startup", "closed its connection after its hello, before its game began"
                else:
                    kind, detail = "startup", "ended after its hello, before its game began"
                LOG.warning("game %d: %s did not start: %s", n, seats[blamed], detail)
                return await self.server.record_forfeit(seats, blamed, kind, detail, match_id=match_id,
                                                        tags=tags, seed=seed, host=kept())
        finally:
            for end in ends:
                end.close()
            # Together: cancelled while closing the first, the second would not be closed.
            await asyncio.gather(*(j.close() for j in jails if j is not None), return_exceptions=True)
            if cores:
                self._release_cores(cores)

    def close(self) -> None:
        self.monitor.stop()


def sandbox_env(bot: HostedBot, token: str, game: str, fd: int, options: HostOptions) -> dict[str, str]:
    """A hosted bot's whole environment: the sandbox's own variables, the documented MAAG_*
    ones, and what the host passes on purpose (--pass-env), never over the former."""
    env = {"PATH": sandbox_path(), "HOME": "/scratch", "TMPDIR": "/scratch", "LANG": "C.UTF-8",
           "PYTHONPATH": "/opt/maag/sdk", "PYTHONDONTWRITEBYTECODE": "1",
           "MAAG_CONNECT": f"fd:{fd}", "MAAG_TOKEN": token, "MAAG_BOT": bot.name,
           "MAAG_CONCURRENCY": "1", "MAAG_GAME": game, "MAAG_THREADS": str(bot.threads)}
    passed = bot_environment({}, options.pass_env,
                             host={k: v for k, v in os.environ.items() if k in options.pass_env})
    return {**passed, **env}


class RelayedJail:
    """A hosted bot for a tool that connects bots over TCP (the bot kit): the bot runs in its
    sandbox with its socket pair as always, and the host relays that socket to an address.
    Looks like a process: returncode, terminate(), kill(), wait()."""

    def __init__(self, jail: Jail, pumps: list[asyncio.Task[None]]) -> None:
        self.jail = jail
        self.pumps = pumps

    @property
    def returncode(self) -> int | None:
        return None if self.jail.proc is None else self.jail.proc.returncode

    def terminate(self) -> None:
        self.jail.kill()

    def kill(self) -> None:
        self.jail.kill()

    async def wait(self) -> int | None:
        rc = await self.jail.wait()
        for t in self.pumps:
            t.cancel()
        await self.jail.close()
        return rc


async def launch_relayed(bot: HostedBot, options: HostOptions, cg: cgroups.Cgroups | None, address: str,
                         token: str, log_path: Path, game: str) -> RelayedJail:
    """Start `bot` in its sandbox and relay its connection to `address` (HOST:PORT)."""
    ours, theirs = socket.socketpair()
    env = sandbox_env(bot, token, game, theirs.fileno(), options)
    jail = Jail(JailConfig(bot.argv, bot.folder, env, options.limits, threads=bot.threads,
                           extra_fds=[theirs.fileno()]), cg, log_path)
    try:
        await jail.start()
    finally:
        theirs.close()
    host, _, port = address.rpartition(":")
    r1, w1 = await asyncio.open_connection(sock=ours)
    r2, w2 = await asyncio.open_connection(host, int(port))

    async def pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        try:
            while data := await src.read(1 << 16):
                dst.write(data)
                await dst.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            dst.close()

    loop = asyncio.get_running_loop()
    return RelayedJail(jail, [loop.create_task(pump(r1, w2)), loop.create_task(pump(r2, w1))])


def sandbox_path() -> str:
    """The sandbox's PATH: the bin folder of the Python that runs maag first (a virtualenv's,
    which has maag's dependencies, msgpack among them), then its base installation's, then
    the system's. A list, not a set: the order must not depend on the hash seed."""
    import sys

    bins: list[str] = []
    for prefix in (sys.prefix, sys.base_prefix):
        b = str(Path(prefix) / "bin")
        if not prefix.startswith("/usr") and b not in bins:
            bins.append(b)
    return ":".join([*bins, "/usr/local/bin", "/usr/bin", "/bin"])
