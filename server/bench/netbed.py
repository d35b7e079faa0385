"""A bed of machines on one machine (tests/e2e/test_fleet_machines.py's, issue 56): each
member of a fleet in a network namespace of its
own with an address of its own (`ip netns`, a veth pair, one bridge), PostgreSQL and Debian's
HAProxy in front on the bridge's address, as docs/competitions.md ("Running a fleet") tells a
host with several machines; and faults made the way machines fail, not the way processes do:

- `cut(m)`: the member's link goes down. Its packets are dropped, in both directions; no
  connection is closed: its bots' TCP connections through HAProxy stall, its database session
  lingers on the server (what a pulled cable or a dead switch port looks like);
- `mend(m)`: the link back;
- `freeze(m)` / `thaw(m)`: every process of the member stopped (SIGSTOP), as a machine that
  hangs; `kill(m)`: every process of the member killed (-9), as a machine that dies.

The database is reached through HAProxy as well (a TCP `listen` on the bridge's address in
front of the PostgreSQL the bed is given), so a member whose link is cut loses it too.
Needs root, iproute2 and haproxy (.ci/run installs them); `need_bed()` says what is missing.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

HAPROXY = shutil.which("haproxy") or "/usr/sbin/haproxy"
BOT_PORT = 7878


def need_bed() -> str | None:
    """Why the bed cannot be built here (None: it can)."""
    if os.geteuid() != 0:
        return "the network test bed needs root (network namespaces)"
    if not shutil.which("ip"):
        return "no `ip` (apt-get install iproute2)"
    if not os.access(HAPROXY, os.X_OK):
        return "no haproxy (apt-get install haproxy)"
    probe = f"maagprobe{os.getpid()}"
    r = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if r.returncode != 0:
        return f"network namespaces are refused here: {r.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


def _ip(*args: str, ns: str | None = None) -> None:
    argv = ["ip", *(["-n", ns] if ns else []), *args]
    r = subprocess.run(argv, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {r.stderr.strip()}")


def _descendants(roots: Sequence[int]) -> list[int]:
    """Every live descendant of `roots`, parents before children (read from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    out: list[int] = []
    todo = list(roots)
    while todo:
        pid = todo.pop(0)
        for c in children.get(pid, []):
            out.append(c)
            todo.append(c)
    return out


@dataclass
class Member:
    """One machine: a network namespace, its address, its processes."""

    index: int
    ns: str
    address: str
    host_end: str
    """The veth end on the bridge (taken down to cut the link)."""
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def alive(self) -> list[subprocess.Popen[bytes]]:
        return [p for p in self.procs if p.poll() is None]


class NetBed:
    """`members` machines on a bridge, HAProxy in front of their bot port and of PostgreSQL.

    Addresses are 10.231.K.0/24 with K from this process's id (two runs at once do not meet):
    the bridge (and HAProxy, the bots' address) is .1, member i is .(10 + i)."""

    def __init__(self, tmp: Path, members: int, postgres_url: str) -> None:
        self.tmp = tmp
        k = 1 + os.getpid() % 250
        self.tag = f"{k}"
        self.subnet = f"10.231.{k}"
        self.gateway = f"{self.subnet}.1"
        self.bridge = f"mgbr{k}"
        self.members = [Member(i, f"maag{k}m{i}", f"{self.subnet}.{10 + i}", f"mgv{k}m{i}")
                        for i in range(1, members + 1)]
        pg = urlsplit(postgres_url)
        self._pg_target = f"{pg.hostname}:{pg.port or 5432}"
        self.db_port = 15432 + k
        netloc = f"{pg.username}:{pg.password}@{self.gateway}:{self.db_port}"
        self.db_url = urlunsplit(pg._replace(netloc=netloc))
        """The database as the members reach it: through HAProxy on the bridge."""
        self.bots_address = f"{self.gateway}:{BOT_PORT}"
        """Where bots connect: HAProxy, which spreads them over the members."""
        self.haproxy: subprocess.Popen[bytes] | None = None
        self.haproxy_log = tmp / "haproxy.log"

    # -- building and tearing down -------------------------------------------------------
    def up(self) -> NetBed:
        self.down(quiet=True)  # what a killed run of the same pid may have left
        _ip("link", "add", self.bridge, "type", "bridge")
        _ip("addr", "add", f"{self.gateway}/24", "dev", self.bridge)
        _ip("link", "set", self.bridge, "up")
        for m in self.members:
            _ip("netns", "add", m.ns)
            inner = f"mgi{self.tag}m{m.index}"
            _ip("link", "add", m.host_end, "type", "veth", "peer", "name", inner)
            _ip("link", "set", inner, "netns", m.ns)
            _ip("link", "set", m.host_end, "master", self.bridge)
            _ip("link", "set", m.host_end, "up")
            _ip("addr", "add", f"{m.address}/24", "dev", inner, ns=m.ns)
            _ip("link", "set", inner, "up", ns=m.ns)
            _ip("link", "set", "lo", "up", ns=m.ns)
        self._start_haproxy()
        return self

    def _start_haproxy(self) -> None:
        servers = "\n".join(
            # A member whose health check fails is marked down and its sessions are shut: a bot
            # behind a cut link is disconnected by the balancer and reconnects to a live member
            # (docs/competitions.md's configuration).
            f"    server m{m.index} {m.address}:{BOT_PORT} check inter 500 fall 3 rise 2 "
            "on-marked-down shutdown-sessions" for m in self.members)
        cfg = self.tmp / "haproxy.cfg"
        cfg.write_text(f"""global
    maxconn 4096
defaults
    mode tcp
    timeout connect 2s
    timeout client 1h
    timeout server 1h
frontend bots
    bind {self.gateway}:{BOT_PORT}
    default_backend members
backend members
    balance leastconn
{servers}
listen database
    bind {self.gateway}:{self.db_port}
    server pg {self._pg_target}
""")
        r = subprocess.run([HAPROXY, "-c", "-f", str(cfg)], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"haproxy refused its configuration: {r.stdout}{r.stderr}")
        self.haproxy = subprocess.Popen([HAPROXY, "-db", "-f", str(cfg)], stdout=open(self.haproxy_log, "wb"),
                                        stderr=subprocess.STDOUT)
        time.sleep(0.3)
        if self.haproxy.poll() is not None:
            raise RuntimeError(f"haproxy did not start: {self.haproxy_log.read_text()[-2000:]}")

    def down(self, quiet: bool = False) -> None:
        for m in self.members:
            for p in m.procs:
                if p.poll() is None:
                    try:
                        os.killpg(p.pid, signal.SIGCONT)
                        os.killpg(p.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                    p.wait()
        if self.haproxy is not None and self.haproxy.poll() is None:
            self.haproxy.kill()
            self.haproxy.wait()
        for m in self.members:
            subprocess.run(["ip", "netns", "del", m.ns], capture_output=True)
            subprocess.run(["ip", "link", "del", m.host_end], capture_output=True)
        r = subprocess.run(["ip", "link", "del", self.bridge], capture_output=True, text=True)
        if r.returncode != 0 and not quiet and "Cannot find" not in r.stderr:
            raise RuntimeError(r.stderr)

    def wait_balanced(self, timeout: float = 30, up: Sequence[Member] | None = None) -> None:
        """Until HAProxy's health checks have every member up (before that, a bot it takes is
        closed at once: no member to send it to); with `up`, those members up and the others
        down (not started: HAProxy sends no bot there any more)."""
        want = {m.index: m in (self.members if up is None else up) for m in self.members}
        end = time.monotonic() + timeout
        while True:
            log = self.haproxy_log.read_text(errors="replace")
            state: dict[int, bool | None] = {m.index: None for m in self.members}
            for line in log.splitlines():
                for m in self.members:
                    if f"members/m{m.index} is UP" in line:
                        state[m.index] = True
                    elif f"members/m{m.index} is DOWN" in line:
                        state[m.index] = False
            # A server never reported is up (HAProxy starts it so) only if its check passed once.
            if all(state[i] is w for i, w in want.items()):
                return
            if time.monotonic() > end:
                raise RuntimeError(f"HAProxy does not see every member up: {log[-2000:]}")
            time.sleep(0.2)

    # -- processes -----------------------------------------------------------------------
    def start(self, m: Member, argv: Sequence[str], log: Path, env: dict[str, str] | None = None
              ) -> subprocess.Popen[bytes]:
        """A process on member `m` (in its namespace, its own process group)."""
        p = subprocess.Popen(["ip", "netns", "exec", m.ns, *argv], stdout=open(log, "wb"),
                             stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                             start_new_session=True)
        m.procs.append(p)
        return p

    # -- faults --------------------------------------------------------------------------
    def cut(self, m: Member) -> None:
        """Its link down: packets dropped both ways, nothing closed."""
        _ip("link", "set", m.host_end, "down")

    def mend(self, m: Member) -> None:
        _ip("link", "set", m.host_end, "up")

    def _signal(self, m: Member, sig: int) -> None:
        # Its process groups, then every descendant outside them: a hosted bot's sandbox runs it
        # in a session of its own (bwrap --new-session), and a machine that hangs or dies takes
        # those down too. Found before any is signalled (a killed parent's children move to
        # another), signalled parents first (a child forked meanwhile is found stopped).
        below = _descendants([p.pid for p in m.procs])
        for p in m.alive():
            try:
                os.killpg(p.pid, sig)
            except ProcessLookupError:
                pass
        for pid in below:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass

    def freeze(self, m: Member) -> None:
        self._signal(m, signal.SIGSTOP)

    def thaw(self, m: Member) -> None:
        self._signal(m, signal.SIGCONT)

    def kill(self, m: Member) -> None:
        self._signal(m, signal.SIGKILL)
        for p in m.procs:
            p.wait()
