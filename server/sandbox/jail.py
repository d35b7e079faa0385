"""One hosted bot process in its sandbox: Linux namespaces through bubblewrap, its control
group (cgroups.py) or rlimits, an unprivileged user of its own, and its output captured with
a cap. The referee connection is handed in as an inherited socket (`MAAG_CONNECT=fd:N`): the
sandbox has no network at all.

What the bot sees: the system's runtimes read-only (/usr and the Python installation that
runs maag), the Python SDK (`maag.clients`, `maag.protocol`) under /opt/maag/sdk, its
package read-only at /bot (its working folder), a private /scratch of capped size (also /tmp
and $HOME), its own /proc (only its own processes) and a minimal /dev. Its environment holds
only PATH, HOME, LANG, TMPDIR and the documented MAAG_* variables. It has no capabilities (an
empty bounding set, no_new_privs), runs under the system call filter of seccomp.py (no
namespaces, mounts, keyring, tracing...), in a session keyring of its own (keyring.py), and is
killed with its parent: when maag ends the bwrap process (or dies), the kernel ends every
process in the bot's pid namespace, a double-forked daemon included.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import resource
import shutil
import signal
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from maag.server.sandbox import keyring, seccomp
from maag.server.sandbox.cgroups import BotGroup, Cgroups
from maag.server.sandbox.limits import Limits

__all__ = ["JailConfig", "Jail", "Verdict", "stage_package", "sdk_paths", "BWRAP"]

BWRAP = shutil.which("bwrap") or "/usr/bin/bwrap"
SETPRIV = shutil.which("setpriv") or "/usr/bin/setpriv"
SANDBOX_UID_BASE = int(os.environ.get("MAAG_SANDBOX_UID_BASE", "61000"))
SANDBOX_UIDS = 512
INNER_UID = 1000
LOCK_DIR = Path(os.environ.get("MAAG_SANDBOX_STATE", "/run/maag" if os.geteuid() == 0 else
                               os.path.join(tempfile.gettempdir(), f"maag-{os.getuid()}")))


OUTSIDE = "outside"
"""Verdict kind of a process killed from outside (not a verdict against the bot: its game is aborted)."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """What ended a hosted bot's process, as a verdict of the referee's list
    (maag.server.referee.session.VERDICTS: here `memory` or `crash`), or `outside` (OUTSIDE:
    killed by SIGKILL from outside, which the bot is not charged for), with a human detail
    (the signal, the exit code, the limit)."""

    kind: str
    detail: str = ""

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "detail": self.detail}


@dataclass(slots=True)
class JailConfig:
    argv: list[str]
    folder: Path
    """Bound at /bot, read-only (read-write for a build)."""
    env: dict[str, str]
    limits: Limits
    threads: int = 1
    cores: list[int] | None = None
    writable_folder: bool = False
    extra_fds: list[int] = field(default_factory=list)
    build_space: int | None = None
    """For a build: /bot is a fresh space in memory of this many bytes (the package is read-only
    at /src), so that a build can fill neither the host's disk nor more than its share."""


def sdk_paths() -> dict[str, Path]:
    """The folders of the Python SDK (maag.protocol and maag.clients), wherever maag is
    installed: the SDK's folder lies beside the protocol's, in a checkout (clients/ beside
    protocol/) as in site-packages (maag/clients beside maag/protocol). The server does not
    import the SDK (tests/test_layers.py): it only lends its files to sandboxes."""
    import maag.protocol

    protocol = Path(maag.protocol.__file__).resolve().parent
    clients = protocol.parent / "clients"
    if not (clients / "__init__.py").is_file():
        raise RuntimeError(f"the Python SDK (maag.clients) is not beside {protocol}")
    return {"protocol": protocol, "clients": clients}


def _python_roots() -> list[Path]:
    """The Python installation that runs maag, when it is not under /usr (pyenv, a venv)."""
    out: list[Path] = []
    for p in {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve()}:
        if not str(p).startswith("/usr/") and p.is_dir():
            out.append(p)
    return sorted(out)


def stage_package(folder: Path, into: Path) -> Path:
    """A copy of `folder` that every sandbox user may read (and no one else may change):
    the sandbox runs as an unprivileged user, and the host's copy may change under a match."""
    import stat

    dest = into / "bot"
    shutil.copytree(folder, dest, symlinks=True)  # links copied as links, never followed
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC

    def modes(dir_fd: int) -> None:
        # Each folder and file opened by its folder's descriptor with O_NOFOLLOW and changed
        # through its own (fchmod): a link, wherever it points, is left alone.
        os.fchmod(dir_fd, 0o755)
        for entry in os.scandir(dir_fd):
            if entry.is_symlink():
                continue
            fd = os.open(entry.name, flags, dir_fd=dir_fd)
            try:
                st = os.fstat(fd)
                if stat.S_ISDIR(st.st_mode):
                    modes(fd)
                elif stat.S_ISREG(st.st_mode):
                    os.fchmod(fd, 0o755 if st.st_mode & 0o111 else 0o644)
            finally:
                os.close(fd)

    top = os.open(dest, flags | os.O_DIRECTORY)
    try:
        modes(top)
    finally:
        os.close(top)
    os.chmod(into, 0o755)
    return dest


class _UidSlot:
    """An unprivileged uid of its own for one sandbox (when maag runs as root): held with a
    lock file, so that several maag processes on one host never share one."""

    def __init__(self) -> None:
        self.uid: int | None = None
        self._fd: int | None = None
        if os.geteuid() != 0:
            return
        LOCK_DIR.mkdir(parents=True, exist_ok=True, mode=0o700)
        for k in range(SANDBOX_UIDS):
            fd = os.open(LOCK_DIR / f"uid-{SANDBOX_UID_BASE + k}.lock", os.O_CREAT | os.O_RDWR, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            self.uid, self._fd = SANDBOX_UID_BASE + k, fd
            return
        raise RuntimeError(f"all {SANDBOX_UIDS} sandbox uids from {SANDBOX_UID_BASE} are in use")

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _rlimits(limits: Limits, cg: Cgroups | None, own_uid: bool) -> list[tuple[int, int]]:
    """The rlimits of a sandbox: always no core dumps, files no larger than the scratch space;
    without the cgroup controllers, processes per uid (`own_uid`: the sandbox's own uid,
    whose processes are the bot's alone; else maag's, where bubblewrap's count too) and
    address space per process."""
    out = [(resource.RLIMIT_CORE, 0), (resource.RLIMIT_FSIZE, limits.scratch), (resource.RLIMIT_NOFILE, 1024)]
    if cg is None or "pids" not in cg.controllers:
        out.append((resource.RLIMIT_NPROC, limits.pids if own_uid else limits.pids + 4))
    if cg is None or "memory" not in cg.controllers:
        out.append((resource.RLIMIT_AS, limits.memory))
    return out


class Jail:
    """A running sandboxed process. `await start()`, `await wait()`, then `verdict()`;
    `kill()` ends every process of it; `close()` also removes its group and uid."""

    def __init__(self, cfg: JailConfig, cg: Cgroups | None, log_path: Path) -> None:
        self.cfg = cfg
        self.cg = cg
        self.log_path = log_path
        self.group: BotGroup | None = None
        self.proc: asyncio.subprocess.Process | None = None
        self.slot = _UidSlot()
        self.log_bytes = 0
        self.log_truncated = False
        self._pump: asyncio.Task[None] | None = None
        self.returncode: int | None = None
        self.killed_by_host = False

    # -- the command -------------------------------------------------------------------
    def _bwrap_argv(self, seccomp_fd: int) -> list[str]:
        cfg = self.cfg
        uid = self.slot.uid
        a = [BWRAP, "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
             "--unshare-cgroup-try", "--die-with-parent", "--new-session", "--hostname", "maag-bot"]
        if uid is None:
            # maag is not root: bubblewrap makes a user namespace, the bot keeps maag's uid
            # outside it (rlimits then count all of that user's processes).
            a += ["--unshare-user", "--uid", str(INNER_UID), "--gid", str(INNER_UID), "--disable-userns",
                  "--cap-drop", "ALL"]
        else:
            # maag is root: bubblewrap sets the namespaces up with root's rights, then
            # setpriv drops to the sandbox's own uid with no capabilities at all. It needs
            # CAP_SETPCAP to empty the bounding set: without it, setpriv's --bounding-set=-all
            # fails silently and the bot keeps the host's whole bounding set.
            a += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID",
                  "--cap-add", "CAP_SETPCAP"]
        a += ["--ro-bind", "/usr", "/usr"]
        for d in ("bin", "lib", "lib64", "sbin"):
            p = Path("/") / d
            if p.is_symlink():
                a += ["--symlink", os.readlink(p), f"/{d}"]
            elif p.is_dir():
                a += ["--ro-bind", str(p), f"/{d}"]
        # /etc made by hand, readable by the sandbox's user (bubblewrap would make it root's
        # only, and then neither the loader's cache nor /etc/alternatives, e.g. cc, is reachable).
        a += ["--perms", "0755", "--dir", "/etc", "--perms", "0755", "--dir", "/etc/ssl"]
        for f in ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
                  "/etc/localtime", "/etc/ssl/certs"):
            a += ["--ro-bind-try", f, f]
        made: set[str] = set()

        def parents(dest: str) -> list[str]:
            # bubblewrap makes a bind's missing parent folders readable by root only: the
            # sandbox's user must be able to walk through them.
            out = []
            for anc in reversed(Path(dest).parents[:-1]):
                if str(anc) not in made and str(anc) not in ("/usr", "/etc"):
                    made.add(str(anc))
                    out += ["--perms", "0755", "--dir", str(anc)]
            return out

        for p in _python_roots():
            a += [*parents(str(p)), "--ro-bind", str(p), str(p)]
        for k, p in sdk_paths().items():
            a += [*parents(f"/opt/maag/sdk/maag/{k}"), "--ro-bind", str(p), f"/opt/maag/sdk/maag/{k}"]
        # The filter applies to bubblewrap's command (setpriv, then the bot) and all it starts.
        a += ["--seccomp", str(seccomp_fd)]
        a += ["--proc", "/proc", "--dev", "/dev",
              "--size", str(cfg.limits.scratch), "--perms", "0777", "--tmpfs", "/scratch",
              # POSIX shared memory and semaphores (Python's multiprocessing locks and queues):
              # bubblewrap's /dev/shm is root's; the bot's own, sticky like the host's, in the
              # same memory cap as /scratch.
              "--size", str(cfg.limits.scratch), "--perms", "1777", "--tmpfs", "/dev/shm"]
        if "/tmp" not in made:
            a += ["--symlink", "/scratch", "/tmp"]
        # else the Python lives under /tmp (a venv there): /tmp is then a folder holding only it,
        # read-only to the bot, whose temporary files go to $TMPDIR, /scratch.
        if cfg.build_space is not None:
            a += ["--ro-bind", str(cfg.folder), "/src", "--size", str(cfg.build_space), "--perms", "0777",
                  "--tmpfs", "/bot", "--chdir", "/bot", "--"]
        else:
            a += ["--bind" if cfg.writable_folder else "--ro-bind", str(cfg.folder), "/bot",
                  "--chdir", "/bot", "--"]
        if uid is not None:
            a += [SETPRIV, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--no-new-privs",
                  "--inh-caps=-all", "--bounding-set=-all", "--"]
        return a + list(cfg.argv)

    # -- running ------------------------------------------------------------------------
    async def start(self) -> None:
        cfg = self.cfg
        try:
            if self.cg is not None:
                self.group = self.cg.new_group()
                self.group.limit(memory=cfg.limits.memory, pids=cfg.limits.pids,
                                 cpus=float(cfg.threads), cores=cfg.cores)
            procs_files = self.group.procs_files if self.group is not None else []
            rl = _rlimits(cfg.limits, self.cg, self.slot.uid is not None)
            new_keyring = keyring.fresh_session_keyring()
            if self.slot.uid is not None:
                # Whatever an earlier user of this uid left (one of another maag version, or of
                # a maag killed before its close) is gone before this bot starts.
                await keyring.clear_user_keyrings(self.slot.uid)
            # No filter, no bot: SeccompUnavailable says what the host lacks.
            filter_fd = seccomp.bpf_fd()

            def prepare() -> None:  # in the child, before exec: plain os calls only
                for f in procs_files:
                    fd = os.open(f, os.O_WRONLY)
                    os.write(fd, b"0")
                    os.close(fd)
                for res, val in rl:
                    resource.setrlimit(res, (val, val))
                new_keyring()  # the host's session keyring (maag's) is not the bot's

            try:
                argv = self._bwrap_argv(filter_fd)
                self.log_path.parent.mkdir(parents=True, exist_ok=True)
                spawn = asyncio.ensure_future(asyncio.create_subprocess_exec(
                    *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                    # The bot's environment is bwrap's own, which bwrap passes on: given as
                    # --setenv arguments, its token and any --pass-env secret would be in bwrap's
                    # command line, which every user of the host reads (`ps`, /proc/PID/cmdline).
                    stderr=asyncio.subprocess.STDOUT, env=dict(cfg.env),
                    pass_fds=[*cfg.extra_fds, filter_fd], preexec_fn=prepare, close_fds=True))
            except BaseException:
                os.close(filter_fd)
                raise
            # Closed when the spawn is over (the child has its copy by then, or never will),
            # not before: the task forks only once this coroutine awaits.
            spawn.add_done_callback(lambda _: os.close(filter_fd))
            try:
                # Shielded: cancelled while its pipes connect, asyncio would kill bwrap alone
                # and then wait, with no time limit, for the pipes to close; the sandbox's
                # init could outlive bwrap (its parent-death signal not yet set) and hold
                # them open for ever. Let the start finish; the group then kills them all.
                self.proc = await asyncio.shield(spawn)
            except asyncio.CancelledError:
                # asyncio.wait, not wait_for: on its time limit wait_for would cancel the start,
                # the very path that can wait for ever.
                done, _ = await asyncio.wait({spawn}, timeout=5)
                if done and not spawn.cancelled() and spawn.exception() is None:
                    self.proc = spawn.result()
                raise
        except BaseException:
            self.kill()
            self.close_sync()
            raise
        self._pump = asyncio.get_running_loop().create_task(self._read_log())

    async def _read_log(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        cap = self.cfg.limits.log
        with open(self.log_path, "ab") as log:
            while True:
                try:
                    data = await self.proc.stdout.read(65536)
                except (OSError, ValueError):
                    return
                if not data:
                    return
                room = cap - self.log_bytes
                if room > 0:
                    log.write(data[:room])
                    log.flush()
                self.log_bytes += len(data)
                if self.log_bytes > cap and not self.log_truncated:
                    self.log_truncated = True
                    log.write(f"\n[maag: the log was cut at {cap} bytes; the rest of the bot's output "
                              "is dropped]\n".encode())
                    log.flush()

    @property
    def pid(self) -> int | None:
        return None if self.proc is None else self.proc.pid

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    async def wait(self, timeout: float | None = None) -> int | None:
        """The exit status of the bot (bwrap passes the bot's on: 128+N for signal N), or None
        if it is still running after `timeout`."""
        if self.proc is None:
            return None
        try:
            rc = await asyncio.wait_for(self.proc.wait(), timeout)
        except asyncio.TimeoutError:
            return None
        self.returncode = rc
        return rc

    def verdict(self) -> Verdict | None:
        """What ended the process, if it did not simply exit: memory (the kernel killed it
        at its memory limit), a crash (a signal, or a non-zero exit code), or `outside`
        (SIGKILL from neither maag nor its memory limit)."""
        if self.group is not None and self.group.oom_kills() > 0:
            return Verdict("memory", f"killed at its memory limit of {self.cfg.limits.memory} bytes")
        rc = self.returncode if self.returncode is not None else (self.proc.returncode if self.proc else None)
        if rc is None or self.killed_by_host:
            return None
        if rc < 0 or rc > 128:
            sig = -rc if rc < 0 else rc - 128
            try:
                name = signal.Signals(sig).name
            except ValueError:
                name = f"signal {sig}"
            if sig == signal.SIGKILL:
                # Not maag (killed_by_host), not its memory limit (no OOM kill in its group; a
                # memory rlimit fails allocations, it sends no signal): another program on the
                # host, an administrator's `kill -9` or the machine's OOM killer. The bot is not
                # charged: the referee aborts its game, unrated (docs/competitions.md).
                return Verdict(OUTSIDE, f"killed by {name} from outside its sandbox (not by maag, not at "
                                        "its memory limit: an administrator or the machine's OOM killer)")
            return Verdict("crash", f"killed by {name}")
        if rc != 0:
            return Verdict("crash", f"exited with code {rc}")
        return None

    def freeze(self) -> None:
        """Stop every process of the bot (cgroup freezer, else SIGSTOP to each)."""
        if self.group is not None and "freezer" in self.group.paths:
            self.group.freeze()
        else:
            for pid in self._tree():
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGSTOP)

    def thaw(self) -> None:
        if self.group is not None and "freezer" in self.group.paths:
            self.group.thaw()
        else:
            for pid in self._tree():
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGCONT)

    def cpu_ns(self) -> int:
        """CPU time of every process of the bot so far."""
        if self.group is not None and ("cpuacct" in self.group.paths or self.cg and self.cg.version == 2):
            return self.group.cpu_ns()
        tick = os.sysconf("SC_CLK_TCK")
        total = 0
        for pid in self._tree():
            with contextlib.suppress(OSError, ValueError, IndexError):
                f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                total += sum(int(x) for x in f[11:15])
        return total * 1_000_000_000 // tick

    def _tree(self) -> list[int]:
        """bwrap and its descendants, from /proc (the fallback without a group)."""
        if self.proc is None:
            return []
        kids: dict[int, list[int]] = {}
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            with contextlib.suppress(OSError, ValueError, IndexError):
                ppid = int(Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()[1])
                kids.setdefault(ppid, []).append(int(d))
        out, todo = [], [self.proc.pid]
        while todo:
            p = todo.pop()
            out.append(p)
            todo.extend(kids.get(p, []))
        return out

    def kill(self) -> None:
        """End every process of the bot now (its pid namespace dies with bwrap's init)."""
        if self.proc is not None and self.proc.returncode is None:
            self.killed_by_host = True
            if self.group is not None:
                self.group.kill()
            else:
                self.thaw()
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()

    async def close(self) -> None:
        """Kill, wait for the process and its output, empty the uid's keyrings, remove the
        group, free the uid."""
        self.kill()
        try:
            if self.proc is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(self.proc.wait(), 5)
            if self._pump is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(self._pump, 2)
            if self.slot.uid is not None and self.proc is not None:
                # The filter refuses every keyring call, so nothing should be there: emptied
                # anyway, while the uid is still held, in case a key got there another way.
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(keyring.clear_user_keyrings(self.slot.uid), 5)
        finally:  # even when the caller is cancelled meanwhile (a match stopped with Ctrl-C)
            self.close_sync()

    def close_sync(self) -> None:
        if self.group is not None:
            self.group.remove()
            self.group = None
        self.slot.release()

    def log_tail(self, n: int = 20) -> str:
        try:
            with open(self.log_path, "rb") as f:
                f.seek(0, os.SEEK_END)
                size = f.tell()
                f.seek(max(0, size - 8192))
                text = f.read().decode(errors="replace")
        except OSError:
            return ""
        # Lines end at \n only: a lone \r (a bot faking a line over another) stays in the text,
        # for maag.server.printable to show as \r (splitlines would make it a line break).
        return "\n".join(text.rstrip("\n").split("\n")[-n:])
