"""A fleet's ladder on one database: who is free where, and the games its one scheduler pairs.

- Presence (`fleet_bots`): each referee publishes, for each bot connected to it, its free
  game slots and since when it has been free (fleet/member.py, whenever that changes); and
  (`fleet_hosts`) how many more games of the ladder's hosted bots (`--submitted`) it can run
  in its sandbox now.
- The scheduler's epoch (`ladder_leaders`): the process that takes a ladder's lock (a
  session advisory lock, compete/ladder.py) raises the epoch; an assignment is written only
  with the current epoch, so a scheduler that lost its lock without knowing it (its session
  died, another took over) cannot pair anyone any more.
- Assignments (`fleet_assignments`): a game between two bots, hosted by a referee (`host`):
  the referee of seat 1's bot when both are connected bots, else one with a free hosted slot
  that starts the hosted seats' sandboxed processes itself (`hosted`: a bit per seat). A seat
  whose bot is connected to another referee (`server0`, `server1`; NULL server0: the host) is
  carried there by that referee through a link (fleet/links.py), authenticated by the
  assignment's `secret`; at most one seat of a game is linked. Each referee takes its own
  assignments once (`take`), then says how they went (`settle`: the game's id, or failed).
  An assignment that nobody settled within ASSIGNMENT_TTL_S is forgotten (its referee died).
- Waking (PostgreSQL): writing assignments, and taking them as host, announces the referees
  concerned on CHANNEL (NOTIFY, delivered at commit); a referee waits on it (`Listener`) rather
  than asking every few milliseconds. SQLite has no such thing: its referees ask.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

from maag.server.storage.base import Storage

__all__ = ["Assignment", "StaleScheduler", "Listener", "ASSIGNMENT_TTL_S", "CHANNEL", "publish_presence",
           "presence", "hosts", "lead", "assign", "take", "settle", "ladder_load", "finished_after",
           "listener"]

CHANNEL = "maag_assignments"
"""The PostgreSQL channel on which the referees concerned by new assignments are named."""
ASSIGNMENT_TTL_S = 20.0
"""An assignment not settled by then is not counted (its referee died before starting it)."""
LIVE = "s.heartbeat + s.lease_s >= NOW AND s.revoked = 0"


class StaleScheduler(Exception):
    """Another process leads this ladder now (its epoch is higher): nothing was assigned."""


@dataclass(frozen=True, slots=True)
class Assignment:
    id: int
    ladder: str
    host: str
    seats: tuple[str, str]
    server1: str
    secret: str
    seed: int | None
    link: str | None
    """The host's link address (for the referee that carries a seat there)."""
    server0: str
    """The referee of seat 1's bot (the host when it is there, or hosted)."""
    hosted: int
    """The seats whose bots the host runs in its sandbox: bit 1 seat 1, bit 2 seat 2."""

    def linked_seat(self) -> int | None:
        """The seat another referee carries to the host through a link (None: both are here)."""
        if self.server0 != self.host and not self.hosted & 1:
            return 0
        if self.server1 != self.host and not self.hosted & 2:
            return 1
        return None

    def hosted_seats(self) -> tuple[bool, bool]:
        """Whether each seat's bot is run by the host in its sandbox."""
        return bool(self.hosted & 1), bool(self.hosted & 2)


def publish_presence(st: Storage, server: str, rows: list[tuple[str, int, float]],
                     hosting: int | None = None) -> None:
    """Replace `server`'s presence with `rows`: (bot, free slots, free since: Unix time); and
    its free hosted slots with `hosting` (None: it runs no hosted bots)."""
    def tx(cur: Any) -> None:
        st.db.execute(cur, "DELETE FROM fleet_bots WHERE server = ?", (server,))
        for bot, free, since in rows:
            st.db.execute(cur, "INSERT INTO fleet_bots (server, bot, free, idle_since) VALUES (?, ?, ?, ?)",
                          (server, bot, int(free), float(since)))
        st.db.execute(cur, "DELETE FROM fleet_hosts WHERE server = ?", (server,))
        if hosting is not None:
            st.db.execute(cur, "INSERT INTO fleet_hosts (server, free) VALUES (?, ?)", (server, int(hosting)))

    st.db.tx(tx)


def presence(st: Storage) -> list[tuple[str, str, int, float]]:
    """(server, bot, free slots, free since) on every live referee that takes links."""
    rows = st.db.query("SELECT f.server, f.bot, f.free, f.idle_since FROM fleet_bots f JOIN servers s "
                       f"ON s.id = f.server WHERE {LIVE} AND s.link IS NOT NULL AND f.free > 0 "
                       "ORDER BY f.server, f.bot")
    return [(str(a), str(b), int(c), float(d)) for a, b, c, d in rows]


def hosts(st: Storage) -> dict[str, int]:
    """Free hosted slots of every live referee that takes links and runs hosted bots, less the
    hosted games assigned to it and not taken yet (the slots they will take: a referee's
    presence is published after it started them)."""
    rows = st.db.query("SELECT h.server, h.free FROM fleet_hosts h JOIN servers s ON s.id = h.server "
                       f"WHERE {LIVE} AND s.link IS NOT NULL ORDER BY h.server")
    free = {str(a): int(b) for a, b in rows}
    for host, n in st.db.query("SELECT host, COUNT(*) FROM fleet_assignments WHERE status = 'new' "
                               "AND hosted != 0 AND created > NOW - ? GROUP BY host", (ASSIGNMENT_TTL_S,)):
        if str(host) in free:
            free[str(host)] -= int(n)
    return {k: v for k, v in free.items() if v > 0}


def lead(st: Storage, ladder: str) -> int:
    """Raise `ladder`'s scheduler epoch (the caller holds its lock): the new epoch."""
    def tx(cur: Any) -> int:
        st.db.execute(cur, "INSERT INTO ladder_leaders (name, epoch) VALUES (?, 1) ON CONFLICT (name) "
                      "DO UPDATE SET epoch = ladder_leaders.epoch + 1 RETURNING epoch", (ladder,))
        return int(cur.fetchone()[0])

    return st.db.tx(tx)


def assign(st: Storage, ladder: str, epoch: int,
           games: list[tuple[str, tuple[str, str], str, str, int | None]],
           placed: list[tuple[str, int]] | None = None) -> list[int]:
    """Write the games (host, seats, server of seat 2, secret, seed) paired by the scheduler of
    `epoch`, in one transaction; StaleScheduler if that epoch is not the ladder's any more.
    `placed`, one per game: (server of seat 1, hosted seats' bits); without it seat 1 is the
    host's and no seat is hosted."""
    where = placed if placed is not None else [(g[0], 0) for g in games]
    if len(where) != len(games):
        raise ValueError("one placement per game")
    def tx(cur: Any) -> list[int]:
        lock = " FOR UPDATE" if st.db.DIALECT == "postgresql" else ""  # (SQLite's writes are serial)
        st.db.execute(cur, "SELECT epoch FROM ladder_leaders WHERE name = ?" + lock, (ladder,))
        row = cur.fetchone()
        if row is None or int(row[0]) != epoch:
            raise StaleScheduler(f"ladder {ladder!r} is scheduled by epoch {row and row[0]}, not {epoch}")
        ids: list[int] = []
        for k in range(0, len(games), 500):  # a few statements, not one per game (round trips)
            chunk = list(zip(games[k:k + 500], where[k:k + 500], strict=True))
            values = ", ".join(["(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'new', NOW)"] * len(chunk))
            args = [x for (host, seats, server1, secret, seed), (server0, hosted) in chunk
                    for x in (ladder, epoch, host, seats[0], seats[1], server1, secret,
                              None if seed is None else str(seed), server0, int(hosted))]
            st.db.execute(cur, "INSERT INTO fleet_assignments (ladder, epoch, host, seat0, seat1, server1, "
                          f"secret, seed, server0, hosted, status, created) VALUES {values} RETURNING id",
                          args)
            ids += sorted(int(r[0]) for r in cur.fetchall())
        st.db.execute(cur, "DELETE FROM fleet_assignments WHERE created < NOW - 3600")
        _announce(st, cur, {g[0] for g in games})
        return ids

    return st.db.tx(tx)


def take(st: Storage, server: str) -> tuple[list[Assignment], list[Assignment]]:
    """`server`'s new assignments, each taken once: (the games it hosts, the seats it links to
    a host that has taken the game: it expects the link then)."""
    cols = ("a.id, a.ladder, a.host, a.seat0, a.seat1, a.server1, a.secret, a.seed, s.link, a.server0, "
            "a.hosted")

    def tx(cur: Any) -> tuple[list[Assignment], list[Assignment]]:
        since = ASSIGNMENT_TTL_S
        st.db.execute(cur, f"SELECT {cols} FROM fleet_assignments a JOIN servers s ON s.id = a.host "
                      "WHERE a.status = 'new' AND a.host = ? AND a.created > NOW - ?", (server, since))
        hosted = [_assignment(r) for r in cur.fetchall()]
        for a in hosted:
            st.db.execute(cur, "UPDATE fleet_assignments SET status = 'taken' WHERE id = ?", (a.id,))
        carriers = {(a.server0, a.server1)[s] for a in hosted if (s := a.linked_seat()) is not None}
        _announce(st, cur, carriers)  # they may link now
        st.db.execute(cur, f"SELECT {cols} FROM fleet_assignments a JOIN servers s ON s.id = a.host "
                      "WHERE a.linked = 0 AND (a.server1 = ? OR a.server0 = ?) AND a.host != ? "
                      "AND a.status = 'taken' AND a.created > NOW - ?", (server, server, server, since))
        linked = [x for x in map(_assignment, cur.fetchall())
                  if (s := x.linked_seat()) is not None and (x.server0, x.server1)[s] == server]
        for a in linked:
            st.db.execute(cur, "UPDATE fleet_assignments SET linked = 1 WHERE id = ?", (a.id,))
        return hosted, linked

    return st.db.tx(tx)


def _announce(st: Storage, cur: Any, servers: set[str]) -> None:
    if servers and st.db.DIALECT == "postgresql":
        st.db.execute(cur, "SELECT pg_notify(?, ?)", (CHANNEL, ",".join(sorted(servers))))


class Listener:
    """A PostgreSQL connection listening on CHANNEL for one referee (see the module)."""

    def __init__(self, url: str, server: str) -> None:
        from maag.server.storage.postgres import connect

        self.server = server
        self.conn = connect(url)
        self.conn.execute(f"LISTEN {CHANNEL}")

    def wait(self, timeout: float) -> bool:
        """Block until this referee is named (True) or `timeout` passes (False)."""
        for n in self.conn.notifies(timeout=timeout):
            if self.server in n.payload.split(","):
                return True
        return False

    def close(self) -> None:
        self.conn.close()


def listener(st: Storage, server: str) -> Listener | None:
    """A Listener for `server` on `st`'s database, or None (SQLite: the referees ask)."""
    return Listener(st.db.url, server) if st.db.DIALECT == "postgresql" else None


def _assignment(r: tuple[Any, ...]) -> Assignment:
    return Assignment(int(r[0]), str(r[1]), str(r[2]), (str(r[3]), str(r[4])), str(r[5]), str(r[6]),
                      None if r[7] is None else int(r[7]), None if r[8] is None else str(r[8]),
                      str(r[2]) if r[9] is None else str(r[9]), int(r[10] or 0))


def settle(st: Storage, assignment: int, game_id: int | None) -> None:
    """The host started the game (`game_id`) or could not (None: failed)."""
    st.db.tx(lambda cur: st.db.execute(
        cur, "UPDATE fleet_assignments SET status = ?, game_id = ? WHERE id = ?",
        ("started" if game_id is not None else "failed", game_id, assignment)))


def ladder_load(st: Storage, ladder: str, match_id: str) -> Counter[str]:
    """Games per bot in `ladder` now: running (on any referee) or assigned and not settled.
    A game counted twice for a moment (started, its assignment not settled yet) errs on the
    side of the limit."""
    load: Counter[str] = Counter()
    for s0, s1 in st.db.query("SELECT seat0, seat1 FROM games WHERE status = 'running' AND match_id = ?",
                              (match_id,)):
        load[str(s0)] += 1
        load[str(s1)] += 1
    for s0, s1 in st.db.query("SELECT seat0, seat1 FROM fleet_assignments WHERE ladder = ? AND status IN "
                              "('new', 'taken') AND created > NOW - ?", (ladder, ASSIGNMENT_TTL_S)):
        load[str(s0)] += 1
        load[str(s1)] += 1
    return load


Over = tuple[int, tuple[str, str], int | None, str, "dict[str, Any] | None"]


def finished_after(st: Storage, match_id: str, after: int) -> tuple[list[Over], int]:
    """The games of `match_id` over (finished or aborted) with an id above `after`, by id:
    (id, seats, winner, reason, verdict); and the next `after` to ask with (below the oldest
    game still running: games end out of order)."""
    running = st.db.query("SELECT MIN(id) FROM games WHERE match_id = ? AND status = 'running'", (match_id,))
    rows = st.db.query("SELECT g.id, g.seat0, g.seat1, r.winner, r.reason, r.verdict FROM games g "
                       "JOIN results r ON r.game_id = g.id WHERE g.match_id = ? AND g.id > ? ORDER BY g.id",
                       (match_id, after))
    over: list[Over] = [(int(i), (str(a), str(b)), None if w is None else int(w), str(why),
                         None if v is None else json.loads(v)) for i, a, b, w, why, v in rows]
    low = running[0][0] if running and running[0][0] is not None else None
    nxt = int(low) - 1 if low is not None else max([after] + [o[0] for o in over])
    return over, max(after, min(nxt, max([after] + [o[0] for o in over])))
