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
import fcntl
import logging
import os
import shutil
import socket
import tempfile
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from maag.server.hosting.builder import build
from maag.server.hosting.clocks import Clock, Monitor
from maag.server.hosting.options import (
    PONDER,
    STORED_PREFIX,
    HostedBot,
    HostOptions,
    SandboxUnavailable,
    check_threads,
    safe_name,
    sandbox_env,
)
from maag.server.hosting.store import package_store
from maag.server.net.server import Absence, GameNotStarted, GameSummary, RefereeServer
from maag.server.sandbox import cgroups, seccomp
from maag.server.sandbox.jail import LOCK_DIR, Jail, JailConfig, stage_package
from maag.server.sandbox.package import BotPackage, is_package
from maag.server.storage.submissions import open_submission_store

__all__ = ["Host", "hosted_bot"]

LOG = logging.getLogger(__name__)


def hosted_bot(spec: str, name: str, options: HostOptions, workdir: Path,
               db_url: str | None = None) -> HostedBot | None:
    """`spec` as a hosted bot when it is one (a package; a stored package, fetched from the
    database `db_url` by its hash into the package store; a command line with sandboxing
    on), else None. A package is copied into `workdir` (readable by the sandbox's users)."""
    if spec.startswith(STORED_PREFIX):
        if db_url is None:
            raise ValueError(f"{name}: a stored package needs the database that holds it")
        store = open_submission_store(db_url)
        try:
            spec = str(package_store().fetch(store, spec[len(STORED_PREFIX):]))
        finally:
            store.close()
    if is_package(spec):
        path = Path(spec).expanduser()
        # An archive is unpacked once per machine, into the package store; a folder is read where it is.
        pkg = BotPackage.from_folder(package_store().put(path.read_bytes(), name=spec)
                                     if path.is_file() else path)
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
        self.monitor = Monitor()
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
                   on_start: Callable[[int], None] | None = None,
                   pins: Sequence[asyncio.Future[str] | None] = (None, None),
                   on_request: Callable[[asyncio.Future[GameSummary]], None] | None = None,
                   handover: bool = False) -> GameSummary:
        """Play one game between `seats` (names); a seat whose bot is hosted gets a fresh
        sandboxed process, the other is paired by name as usual, or takes the connection of
        its `pins` entry (a fleet's link: RefereeServer.request_game's `clients`) (`absence`:
        how long it may be without a connection, RefereeServer.request_game; `on_start`: told
        the stored game's id when it begins; `on_request`: told the referee's request once the
        hosted processes said hello, so that a caller may call it off; `handover`: a fleet's
        game, which this referee may hand over at its stop, RefereeServer.request_game: its
        processes end here and the member taking it starts its hosted seats again, `restart`).
        A hosted process that fails before the game (no hello in time, its connection closed)
        loses it by forfeit.

        Each hosted seat's log is `NAME-gameID-seatS.log`, ID the stored game's (as in `maag
        replay ID`, the web view and the ladder's lines): until the game has its id (the
        process starts first), `NAME-startN-seatS.log`, N this host's count."""
        jails: list[Jail | None] = [None, None]

        def begun(gid: int) -> None:
            self._name_logs(jails, gid)
            if on_start is not None:
                on_start(gid)

        summary = await self._play(seats, bots, tokens, jails, match_id=match_id, seed=seed, tags=tags,
                                   absence=absence, on_start=begun, pins=pins, on_request=on_request,
                                   handover=handover)
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
                    on_start: Callable[[int], None], pins: Sequence[asyncio.Future[str] | None],
                    on_request: Callable[[asyncio.Future[GameSummary]], None] | None,
                    handover: bool) -> GameSummary:
        self.monitor.start()
        self.games += 1
        n = self.games
        threads = max([b.threads for b in bots if b is not None] or [1])
        cores = self._take_cores(threads)
        handles: list[asyncio.Future[str] | None] = [pins[0] if bots[0] is None else None,
                                                     pins[1] if bots[1] is None else None]
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
                if h is None or bots[i] is None:
                    continue
                try:
                    await asyncio.wait_for(asyncio.shield(h), self.options.limits.hello_s)
                except (asyncio.TimeoutError, ConnectionError) as e:
                    if self.server.stopping:  # (refused as the referee stops: not the bot's failure)
                        raise GameNotStarted("the referee stops") from e
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
            clock = Clock(list(jails))
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
                                           on_start=on_start, handover=handover)
            if on_request is not None:
                on_request(fut)
            try:
                return await fut
            except GameNotStarted as gone:
                # A hosted process said hello, then closed its connection (ended, or lives on
                # without it) before the game's first message: its seat forfeits the game,
                # which is stored like any other; the match or tournament goes on.
                blamed = gone.seat if gone.seat is not None else next(
                    (i for i, j in enumerate(jails) if j is not None and not j.running), None)
                if blamed is None or (bots[blamed] is None and pins[blamed] is not None):
                    # (no seat to blame: the game could not be set up; or a fleet's link
                    # closed before the game: not the bot's doing, it may still be connected)
                    raise
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

    async def restart(self, bot: HostedBot, token: str, gid: int,
                      seat: int) -> tuple[asyncio.Future[str], Callable[[], Awaitable[None]]]:
        """A fresh sandboxed process of `bot` for `seat` of running game `gid` (one that this
        referee took over from a lost one: fleet/takeover.py): its connection, attached like a
        game's, and the future of its hello (ConnectionError if it fails first); the caller
        seats it as after a reconnection, and awaits the returned `close` once the game is
        over. No fair clock: the game was set up elsewhere; its cores are not pinned."""
        ours, theirs = socket.socketpair()
        jail_ref: list[Jail] = []

        async def probe() -> tuple[str, str] | None:
            j = jail_ref[0]
            await j.wait(2.0)
            v = j.verdict()
            return None if v is None else (v.kind, v.detail)

        try:
            hello = self.server.attach(ours, probe=probe)
            env = sandbox_env(bot, token, self.server.config.game, theirs.fileno(), self.options)
            jail = Jail(JailConfig(bot.argv, bot.folder, env, self.options.limits, threads=bot.threads,
                                   cores=None, extra_fds=[theirs.fileno()]),
                        self.cg, self.log_dir / f"{safe_name(bot.name)}-game{gid}-seat{seat + 1}-again.log")
            jail_ref.append(jail)
            await jail.start()
        finally:
            theirs.close()
        return hello, jail.close

    def close(self) -> None:
        self.monitor.stop()
