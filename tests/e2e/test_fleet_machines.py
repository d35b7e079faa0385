"""A fleet across machines (issue 56's test bed, maag.server.bench.netbed): three `maag ladder
--fleet --submitted also --slots 1` members, each in a network namespace of its own with its
own address, on a PostgreSQL and behind a HAProxy as docs/competitions.md tells a host with
several machines; twelve submitted versions (the bench's random package), hosted on every
member, each game a fresh process in the sandbox (bubblewrap, inside the member's namespace);
four real SDK bots (tests/e2e/pacing_bot.py) connect to HAProxy and reconnect on their own, and
are restarted when they exit, as a host's service manager restarts them.

Before the faults, every member hosts its share of the games and at least a fifth of those
with a hosted bot; then a member not scheduling is stopped (SIGTERM: it hands its games over)
for a window that measures the two-member rate, and started again.

The scheduling member (it hosts games too, at least one with a hosted bot when it is lost) is
lost mid-ladder the ways machines are lost:

- `cut`: its link goes down, packets dropped, nothing closed (a pulled cable): its bots'
  connections stall until HAProxy's checks mark it down, links to it stall, its database
  sessions linger on the server, and with them the ladder's lock;
- `kill`: every process of it killed (-9), its sandboxed bots too: its sessions end at once;
- `freeze`: every process of it stopped (SIGSTOP), its sandboxed bots too, for three leases,
  then woken: its kernel still answers TCP, so nothing notices but its lease.

Each time, every game it hosted is finished by another member (a game with a hosted bot with
its hosted bots started again there) or aborted (not rated); no game anywhere is a forfeit
(this ladder's bots never forfeit on their own); none is stored twice; a frozen member, and a
cut one once mended, stores nothing more (fencing); and within a minute the ladder's rate is
back to within 10% of the two-member rate (measured before the faults, then after each fault
while its member was out: the machine's load drifts), as far as a dozen seconds' games can
tell: the test fails when their counts put the rate below 90% at the 5% level (`below_share`;
about 50 games a window: a fall to 60% of the rate is caught; 10% itself would take minutes).
The lost member is then brought back (link mended or woken, its process restarted as a
service manager would once it exits) for the next fault. One fleet for the three: the faults
run in the order given.

Last, the database restarted (`restart`: the bed's own PostgreSQL cluster, stopped with every
session cut and started again 3 s later): every lease lapsed meanwhile, yet no member exits
or loses its lease (a member back first once took the others' games, and they exited 3; two
exited with a traceback, status 1, reading the ladder's results from the absent database),
the games under way finish where they are and are stored once, none is rated against a bot,
and the three members' rate is back (measured before the restart, then after it).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import pytest
from maag.server.bench.netbed import Member, NetBed, need_bed
from maag.server.hosting.api import pack, submit
from maag.server.storage.base import open_storage
from maag.server.storage.submissions import open_submission_store

from tests.conftest import PrivatePostgres

LEASE_S = 2.0
BOTS = 4
HOSTED = 12
SLOTS = 1
BOT = str(Path(__file__).with_name("pacing_bot.py"))
RANDOM = Path(__file__).resolve().parents[2] / "server" / "bench" / "packages" / "random"
"""The bench's random package: one random legal action per message (a cheap hosted bot)."""
RESTARTED = r"game %d: \S+ started again here"
pytestmark = pytest.mark.timeout(300)


def q(url: str, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as conn:
        return conn.execute(sql, args).fetchall()  # type: ignore[arg-type]


def until(cond: Any, timeout: float, what: str) -> None:
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError(f"not within {timeout} s: {what}")
        time.sleep(0.2)


def finished(url: str) -> int:
    return int(q(url, "SELECT COUNT(*) FROM games WHERE status = 'finished'")[0][0])


@dataclass(frozen=True)
class Rate:
    """Games finished over a window of `seconds`."""

    games: int
    seconds: float

    def __format__(self, spec: str) -> str:
        return format(self.games / self.seconds, spec)


def rate(url: str, seconds: float = 12.0) -> Rate:
    """Games finished over the next `seconds`."""
    n0, t0 = finished(url), time.monotonic()
    time.sleep(seconds)
    return Rate(finished(url) - n0, time.monotonic() - t0)


def below_share(after: Rate, before: Rate, share: float = 0.9) -> float:
    """How likely so few games `after` if its true rate were `share` of `before`'s: the
    one-sided p-value of the count split (given both windows' total, the games of `after`
    are binomial under that rate ratio). A window of a dozen seconds holds about fifty games
    here, whose count alone varies by some 14%: comparing the two rates' ratio with 0.9
    directly failed a fleet that was back at full rate about one run in three."""
    from scipy.stats import binomtest

    a = share * after.seconds
    p0 = a / (a + before.seconds)
    n = after.games + before.games
    return float(binomtest(after.games, n, p0, alternative="less").pvalue) if n else 0.0


@dataclass
class Fleet:
    bed: NetBed
    url: str
    tmp: Path
    pg: PrivatePostgres
    starts: dict[int, int] = field(default_factory=dict)
    rate: Rate | None = None
    """The ladder's rate last measured (after the previous fault: the next one's baseline)."""

    def start(self, m: Member) -> subprocess.Popen[bytes]:
        n = self.starts[m.index] = self.starts.get(m.index, 0) + 1
        return self.bed.start(m, [
            sys.executable, "-m", "maag.server", "ladder", "--fleet", "--db", self.bed.db_url,
            "--host", m.address, "--port", "7878", "--map", "a-tiny", "--option", "turn_limit=8",
            "--tc", "5s", "--grace", "20s",
            "--lease", str(LEASE_S), "--max-games-per-minute", "0", "--per-bot", "1", "-v",
            "--submitted", "also", "--slots", str(SLOTS), "--rating-interval", "0",
            "--log-dir", str(self.tmp / f"logs{m.index}"),
            "--spill-dir", str(self.tmp / f"spill{m.index}")], self.tmp / f"member{m.index}.{n}.log")

    def restarted(self, gid: int, but: Member) -> bool:
        """Whether a member other than `but` started a hosted bot of game `gid` again."""
        pattern = (RESTARTED % gid).encode()
        return any(re.search(pattern, log.read_bytes()) for log in self.tmp.glob("member*.log")
                   if not log.name.startswith(f"member{but.index}."))

    def servers(self) -> dict[str, str]:
        """Live referees: link host -> server id."""
        rows = q(self.url, "SELECT id, link FROM servers WHERE revoked = 0 AND link IS NOT NULL")
        return {str(link).rsplit(":", 1)[0]: str(sid) for sid, link in rows}

    def scheduler(self) -> tuple[Member, str]:
        """The member holding the ladder's lock (its session is named after its referee)."""
        def holder() -> str | None:
            rows = q(self.url, "SELECT substr(a.application_name, 13) FROM pg_locks l "
                     "JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.granted "
                     "AND left(a.application_name, 12) = 'maag-ladder:'")
            return str(rows[0][0]) if rows else None

        until(lambda: holder() in self.servers().values(), 30, "a scheduler")
        sid = holder()
        host = next(h for h, s in self.servers().items() if s == sid)
        return next(m for m in self.bed.members if m.address == host), str(sid)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory, _private_cluster: PrivatePostgres) -> Iterator[Fleet]:
    why = need_bed()
    if why:
        if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
            pytest.fail(why)
        pytest.skip(why)
    # A PostgreSQL cluster of the module's own (tests/conftest.py): the shared one serves
    # other tests, and the last fault restarts this one.
    pg = _private_cluster
    url = pg.url
    tmp = tmp_path_factory.mktemp("machines")
    bed = NetBed(tmp, 3, url).up()
    bots: list[subprocess.Popen[bytes]] = []
    try:
        st = open_storage(url)
        try:
            tokens = [st.add_bot(f"bot{i}") for i in range(BOTS)]
        finally:
            st.close()
        store = open_submission_store(url)
        try:  # active at once: the submissions tests build and validate packages
            data, pkg = pack(RANDOM)
            for i in range(HOSTED):
                v = submit(store, f"h{i}", data, pkg)
                assert store.move(f"h{i}", v.version, ("pending",), "active")
        finally:
            store.close()
        f = Fleet(bed, url, tmp, pg)
        for m in bed.members:
            f.start(m)
        until(lambda: len(f.servers()) == 3, 60, "three members")
        bed.wait_balanced()
        for i, t in enumerate(tokens):
            # Restarted when it exits (a bot leaves when its connection closes between games).
            loop = (f"while :; do {sys.executable} {BOT} {bed.bots_address} --delay-ms 40 --reconnect 60 "
                    f"2>>{tmp / f'bot{i}.log'}; sleep 0.3; done")
            bots.append(subprocess.Popen(["sh", "-c", loop], env={**os.environ, "MAAG_TOKEN": t},
                                         stdout=subprocess.DEVNULL, start_new_session=True))
        # Every member hosts its share of the games (HAProxy spread the bots), and of the games
        # with a hosted bot (the scheduler places them by free slots, on the connected
        # opponent's member first): at least a tenth each. (A fifth of 20 failed once in a
        # whole suite's run, 8, 9 and 4, the machine loaded: games are placed in bursts, not
        # one by one; a member that hosts none, what this is about, still fails.)
        until(lambda: sum(hosted_per_member(url).values()) >= 30, 120, "30 games with a hosted bot")
        per = dict(q(url, "SELECT server, COUNT(*) FROM games WHERE status = 'finished' GROUP BY server"))
        assert len(per) == 3 and all(n >= sum(per.values()) / 10 for n in per.values()), per
        hosted = hosted_per_member(url)
        assert len(hosted) == 3 and all(n >= sum(hosted.values()) / 10 for n in hosted.values()), hosted
        # The two-member rate, the first fault's baseline (a fleet that lost one of three is to
        # play within 10% of it): a member not scheduling stopped (SIGTERM: its games handed
        # over), a window with two, then back.
        lead, _ = f.scheduler()
        third = next(m for m in bed.members if m is not lead)
        proc = third.alive()[0]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
        bed.wait_balanced(up=[m for m in bed.members if m is not third])
        f.rate = rate(url)
        f.start(third)
        until(lambda: len(f.servers()) == 3, 60, "the member back")
        bed.wait_balanced()
        print(f"\nthree members: {per} games, {hosted} with a hosted bot, per member; two: "
              f"{f.rate:.2f} games/s")
        yield f
    finally:
        stop(bots)
        bed.down()


def hosted_per_member(url: str, since: int = 0) -> dict[str, int]:
    """Finished games with a hosted seat (a submitted version, `name@version`) per member, of
    the games after game `since`."""
    return dict(q(url, "SELECT server, COUNT(*) FROM games WHERE status = 'finished' AND id > %s "
                       "AND (strpos(seat0, '@') > 0 OR strpos(seat1, '@') > 0) GROUP BY server", since))


def bots_connected(url: str, but: str) -> bool:
    """Whether each of the BOTS SDK bots has a connection recorded by a referee other than `but`."""
    rows = q(url, "SELECT DISTINCT bot FROM connections WHERE server <> %s", but)
    return {str(b) for (b,) in rows} >= {f"bot{i}" for i in range(BOTS)}


def stop(bots: list[subprocess.Popen[bytes]]) -> None:
    for b in bots:
        try:
            os.killpg(b.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        b.wait()
    bots.clear()


def wrote(url: str, server: str, games: list[int]) -> tuple[frozenset[Any], ...]:
    """What `server` has stored: results, game rows it holds, the batches it logged of `games`
    (the games it hosted; epoch 0: before they were taken over)."""
    return (frozenset(q(url, "SELECT game_id FROM results WHERE server = %s", server)),
            frozenset(q(url, "SELECT id FROM games WHERE server = %s", server)),
            frozenset(q(url, "SELECT game_id, seq FROM game_actions WHERE epoch = 0 AND game_id = ANY(%s)",
                        games)))


@pytest.mark.parametrize("how", ["cut", "kill", "freeze"])
def test_a_lost_member_costs_no_bot_a_game(fleet: Fleet, how: str) -> None:
    url, bed = fleet.url, fleet.bed
    before = fleet.rate  # (two members: the window before the faults, or after the previous fault)
    assert before is not None
    victim, sid = fleet.scheduler()
    running = "SELECT id FROM games WHERE server = %s AND status = 'running'"
    # A game with a hosted bot under way (its start written: one lost in its first 100 ms cannot
    # be resumed anywhere and is aborted, docs/competitions.md).
    hosted = running + " AND (strpos(seat0, '@') > 0 OR strpos(seat1, '@') > 0) AND logged > 2"
    until(lambda: bool(q(url, hosted, sid)), 30, "a game with a hosted bot under way on the member to lose")
    on_victim = [g for (g,) in q(url, running, sid)]
    proc = victim.alive()[0]
    lost_at = time.monotonic()
    {"cut": bed.cut, "kill": bed.kill, "freeze": bed.freeze}[how](victim)
    try:
        lost(fleet, how, victim, sid, proc, on_victim, lost_at, before)
    finally:  # back for the next fault: mended or woken (it finds its lease revoked and exits 3), restarted
        if how == "cut":
            bed.mend(victim)
        bed.thaw(victim)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            bed.kill(victim)
        fleet.start(victim)
        until(lambda: len(fleet.servers()) == 3, 60, "the member back")
        bed.wait_balanced()


def lost(fleet: Fleet, how: str, victim: Member, sid: str, proc: subprocess.Popen[bytes],
         on_victim: list[int], lost_at: float, before: float) -> None:
    url, bed = fleet.url, fleet.bed

    def settled() -> bool:
        rows = q(url, "SELECT status FROM games WHERE id = ANY(%s)", on_victim)
        return all(s in ("finished", "aborted") for (s,) in rows)

    if how == "freeze":
        time.sleep(3 * LEASE_S)  # past its lease: the others revoked it and took its games
        until(lambda: q(url, "SELECT revoked FROM servers WHERE id = %s", sid) == [(1,)], 10,
              "its lease revoked")
        kept = wrote(url, sid, on_victim)
        bed.thaw(victim)
        assert proc.wait(30) == 3  # it finds its lease revoked, drops its games and stops
        now = wrote(url, sid, on_victim)
        assert all(x <= y for x, y in zip(now, kept, strict=True)), (kept, now)  # nothing stored
    until(settled, 60, f"the games of the lost member ({on_victim}) finished elsewhere or aborted")
    # Finished by another member, or aborted (unrated); none with a verdict against a bot; a
    # game with a hosted bot finished only with its hosted bots started again on another member.
    st = open_storage(url)
    restarted = aborted = 0
    try:
        for gid in on_victim:
            g = st.get_game(gid)
            assert g is not None
            assert g.status == "aborted" or (g.verdict is None and g.reason not in ("time", "disconnect")), g
            aborted += g.status == "aborted"
            if g.status == "finished" and any("@" in seat for seat in g.seats):
                if q(url, "SELECT server FROM games WHERE id = %s", gid) == [(sid,)]:
                    continue  # it ended there just before the loss (a game lasts about a second;
                    # a lost member stores nothing, which the fencing checks hold)
                until(lambda gid=gid: fleet.restarted(gid, victim), 5,
                      f"game {gid}'s hosted bots started again elsewhere")
                restarted += 1
    finally:
        st.close()
    assert q(url, "SELECT game_id FROM results GROUP BY game_id HAVING COUNT(*) > 1") == []
    # Nor one of another member's games (a seat linked from the lost member, a bot behind its
    # link): this ladder's bots never forfeit on their own, so no game anywhere is a forfeit.
    assert q(url, "SELECT game_id, reason, verdict FROM results "
                  "WHERE verdict IS NOT NULL OR reason IN ('time', 'disconnect')") == []
    pairs = q(url, "SELECT COUNT(*), COUNT(DISTINCT game_id) FROM fleet_assignments "
                   "WHERE game_id IS NOT NULL")
    assert pairs[0][0] == pairs[0][1], pairs
    # Within a minute of the loss, the ladder's rate is back within 10% of the two-member rate:
    # measured once the fleet is as it was when that rate was measured (HAProxy sends no bot to
    # the lost member any more, and every bot is connected to one of the others), not after a
    # fixed wait.
    bed.wait_balanced(up=[m for m in bed.members if m is not victim])
    until(lambda: bots_connected(url, but=sid), 30, "every bot connected to a member still up")
    after_rate = fleet.rate = rate(url)
    # (rejected when the counts say, at 5%, that the rate is below 90% of the two members')
    assert below_share(after_rate, before) >= 0.05, (how, before, after_rate)
    assert time.monotonic() - lost_at < 60
    print(f"\n{how}: {len(on_victim)} game(s) on the lost member settled ({restarted} finished with "
          f"hosted bots started again elsewhere, {aborted} aborted); {before:.2f} games/s before, "
          f"{after_rate:.2f} after")
    if how == "cut":  # mended: it finds its lease revoked and stops, having stored nothing more
        kept = wrote(url, sid, on_victim)
        bed.mend(victim)
        assert proc.wait(60) == 3
        now = wrote(url, sid, on_victim)
        assert all(x <= y for x, y in zip(now, kept, strict=True)), (kept, now)


def test_a_database_restart_costs_no_bot_a_game(fleet: Fleet) -> None:
    """The database restarted mid-ladder (stopped, every session cut, started again a few
    seconds later): every member rides it out (none exits, none has its lease revoked: the
    leases all lapsed during the outage, and a member back first must not take the others'
    games), the games under way finish where they are and are stored once, none is rated
    against a bot, and the rate of the three members is back (after the faults above)."""
    url, bed, pg = fleet.url, fleet.bed, fleet.pg
    until(lambda: len(fleet.servers()) == 3, 60, "three members")
    sids = set(fleet.servers().values())
    procs = [m.alive()[0] for m in bed.members]
    three = rate(url, 10.0)
    until(lambda: bool(q(url, "SELECT id FROM games WHERE status = 'running' AND logged > 2")), 30,
          "a game under way")
    running = [g for (g,) in q(url, "SELECT id FROM games WHERE status = 'running'")]
    pg.stop()  # (a fast shutdown: every session is cut)
    stopped_at = time.monotonic()
    time.sleep(3.0)
    pg.start()
    back = time.monotonic()
    # The games under way at the stop (they ended during the outage, or after), stored once back.
    until(lambda: all(s == "finished" for (s,) in q(url, "SELECT status FROM games WHERE id = ANY(%s)",
                                                     running)),
          30, f"the games under way at the restart ({running}) finished")
    assert [p.poll() for p in procs] == [None, None, None], "a member exited (its log: member*.log)"
    assert q(url, "SELECT id FROM servers WHERE revoked = 1 AND id = ANY(%s)", list(sids)) == []
    assert set(fleet.servers().values()) == sids
    assert q(url, "SELECT game_id FROM results GROUP BY game_id HAVING COUNT(*) > 1") == []
    assert q(url, "SELECT game_id, reason, verdict FROM results "
                  "WHERE verdict IS NOT NULL OR reason IN ('time', 'disconnect')") == []
    assert not [p for i in (1, 2, 3) for p in (fleet.tmp / f"spill{i}").glob("*.jsonl")]
    after = rate(url, 10.0)
    assert below_share(after, three) >= 0.05, (three, after)
    print(f"\nrestart: {len(running)} game(s) under way finished; {three:.2f} games/s before, {after:.2f} "
          f"after (the database back {back - stopped_at:.1f} s after its stop)")
