"""What a fleet of referees on one database needs to survive the loss of one of them: the
running games' action logs, written in small batches and fenced by the host's lease
(`log_actions`), and the takeover of a lapsed host's games by a live one (`claim_lapsed`).

Fencing: a game row names its host (`games.server`) and counts its takeovers (`epoch`). Every
write about a game (its logged actions, its result: base.py's `finish_game`) is an UPDATE of
that row conditioned on `server` being the writer and the writer's lease being held (not
`revoked`); a takeover revokes the lapsed host's lease and moves its rows to the claimer in
one transaction. The row's lock orders the two: whichever commits first wins, the other's
condition fails, so a host that was only paused finds, when it wakes, that nothing it writes
is accepted (LeaseLost), and no game gets two results.

The log: `games.resume` holds what the game was started with (the replay's header: game,
configuration, seed, start state, time control, policy, tags), `game_actions` its accepted
actions (the replay's log entries, one row per batch, `seq` the index of the batch's first
action), `games.logged` how many are stored. A batch is written only if it starts where the
log ends, so the log has no gap and no overlap whoever writes it.

Also the abuse limits counted for the whole fleet (fleet/limits.py): every referee's game
starts of the last minute (`game_starts`, written with each game row) and failed logins
(`auth_failures`, by address and by name).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from maag.server.storage.base import HELD, Storage, session_gone

__all__ = ["Batch", "Claimed", "SeatElsewhere", "log_actions", "claim_lapsed", "taken_elsewhere",
           "has_lapsed_games", "set_link", "seats_elsewhere", "link_hosts", "name_session", "game_running",
           "release_lease", "recent_starts", "count_auth_failure", "lapsed"]


LOG_CHUNK = 500
"""Games' batches per statement of the action log (a few statements per flush, not one per game)."""


@dataclass(frozen=True, slots=True)
class Batch:
    """Actions of one game to append to its log (from `seq` on); `resume` with the first."""

    game_id: int
    seq: int
    entries: list[dict[str, Any]]
    resume: dict[str, Any] | None = None
    text: str | None = None
    """`entries` as a JSON array, when the caller has it already (GameSession.log_json)."""


@dataclass(frozen=True, slots=True)
class Claimed:
    """A game taken over: its row (seats, epoch) and what rebuilds it (None: its log never
    reached the database; it is stored as aborted)."""

    game_id: int
    seats: tuple[str, str]
    epoch: int
    resume: dict[str, Any] | None
    actions: list[dict[str, Any]]
    link_secret: str | None = None


def log_actions(st: Storage, server: str, batches: list[Batch]) -> list[int]:
    """Append each batch to its game's log in one transaction, each fenced by `server`'s lease;
    returns the ids of the games whose batch was refused (not this server's any more, over, or
    not where the log ends).

    Two statements per LOG_CHUNK games, not two per game: on PostgreSQL each statement is a
    round trip, and a flush of 100 games took 32 ms of the storage thread's 100 (the lease's
    renewals wait behind it; at 300 games the log would fall behind)."""
    db = st.db
    refused: list[int] = []

    def tx(cur: Any) -> None:
        refused.clear()
        for k in range(0, len(batches), LOG_CHUNK):
            chunk = batches[k:k + LOG_CHUNK]
            rows = ", ".join(["(CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT), ?)"] * len(chunk))
            args: list[Any] = [x for b in chunk for x in (
                b.game_id, b.seq, b.seq + len(b.entries),
                None if b.resume is None else json.dumps(b.resume, separators=(",", ":")))]
            db.execute(cur, f"WITH v (id, seq, stop, resume) AS (VALUES {rows}) "
                       "UPDATE games SET logged = v.stop, resume = COALESCE(games.resume, v.resume) FROM v "
                       "WHERE games.id = v.id AND games.server = ? AND games.status = 'running' "
                       f"AND games.logged = v.seq AND {HELD} RETURNING games.id", (*args, server, server))
            taken = {int(r[0]) for r in cur.fetchall()}
            refused.extend(b.game_id for b in chunk if b.game_id not in taken)
            logs = [b for b in chunk if b.entries and b.game_id in taken]
            if logs:
                rows = ", ".join(["(CAST(? AS BIGINT), CAST(? AS BIGINT), ?)"] * len(logs))
                db.execute(cur, f"WITH v (id, seq, data) AS (VALUES {rows}) INSERT INTO game_actions "
                           "(game_id, seq, epoch, data) SELECT v.id, v.seq, games.epoch, v.data "
                           "FROM v JOIN games ON games.id = v.id",
                           [x for b in logs for x in (b.game_id, b.seq,
                                                      b.text if b.text is not None
                                                      else json.dumps(b.entries, separators=(",", ":")))])

    db.tx(tx)
    return list(refused)


def lapsed(dialect: str, s: str = "s") -> str:
    """SQL, true when the lease of `servers` row `s` has lapsed: renewed last a lease ago or
    more, and on PostgreSQL, the database started a lease ago or more. A restarted database
    was away, and no referee could renew its lease meanwhile: every lease has lapsed when it
    is back, and the referee that renews first would take every other one's games (and they
    would stop, status 3). Counted from the database's start, each live referee has a lease
    to renew (fleet/takeover.py renews at once when its session is back)."""
    if dialect != "postgresql":
        return f"({s}.heartbeat + {s}.lease_s < NOW)"
    return (f"(GREATEST({s}.heartbeat, EXTRACT(EPOCH FROM pg_postmaster_start_time())::DOUBLE PRECISION) "
            f"+ {s}.lease_s < NOW)")


def claim_lapsed(st: Storage, server: str, game: str | None = None) -> list[Claimed]:
    """Take over the running games of every referee whose lease has lapsed, or that is gone
    before (its database session ended: storage/base.py `session_gone`): its lease is
    revoked and its games move to `server` (their epoch one up), in one transaction; games
    with no logged start are stored as aborted instead. One claimer wins a lapsed referee
    whole (its `servers` row is locked, SKIP LOCKED on PostgreSQL; SQLite's writes are
    serial), so a bot's games stay together. With `game`, only the games of that game are
    taken over (see below for the others). Also what `abort_lapsed` did for games of no
    known referee, and the lapsed referees' connection rows. LeaseLost if `server` itself
    no longer holds its lease."""
    db = st.db

    def tx(cur: Any) -> list[Claimed]:
        if db.DIALECT == "postgresql":
            # A referee stopped (SIGSTOP) inside a transaction holds its game row's lock until
            # it wakes: the claim gives up soon and is tried again at the next renewal, instead
            # of holding up our storage thread, and so our own lease.
            db.execute(cur, "SET LOCAL lock_timeout = '250ms'")
        db.execute(cur, f"SELECT 1 WHERE {HELD}", (server,))
        if cur.fetchone() is None:
            from maag.server.storage.backend import LeaseLost

            raise LeaseLost(f"server {server}'s lease was revoked")
        # A referee of `game` leaves a lapsed referee that was playing another game (several
        # competitions on one database) to a referee of that game, unless none has come for
        # ten leases: then it is revoked, and its games of other games aborted (below).
        other = ("" if game is None else " AND (heartbeat + 10 * lease_s < NOW OR NOT EXISTS (SELECT 1 FROM "
                 "games g WHERE g.server = s.id AND g.status = 'running' AND g.game != ?))")
        gone = session_gone(db.DIALECT)
        due = lapsed(db.DIALECT)
        db.execute(cur, f"SELECT id FROM servers s WHERE ({due} OR {gone}) "
                   "AND revoked = 0 AND id != ?" + other + " ORDER BY id" + db.SKIP_LOCKED,
                   (server, *(() if game is None else (game,))))
        dead_ones = [str(r[0]) for r in cur.fetchall()]
        out: list[Claimed] = []
        for dead in dead_ones:
            db.execute(cur, "UPDATE servers SET revoked = 1 WHERE id = ?", (dead,))
            db.execute(cur, "SELECT id, seat0, seat1, epoch, resume, link_secret FROM games "
                       "WHERE server = ? AND status = 'running'" + ("" if game is None else " AND game = ?")
                       + " ORDER BY id",
                       (dead, *(() if game is None else (game,))))
            for gid, s0, s1, epoch, resume, secret in cur.fetchall():
                db.execute(cur, "UPDATE games SET server = ?, epoch = ? WHERE id = ?",
                           (server, epoch + 1, gid))
                out.append(Claimed(int(gid), (str(s0), str(s1)), int(epoch) + 1,
                                   None if resume is None else json.loads(resume), [], secret))
            db.execute(cur, "DELETE FROM connections WHERE server = ?", (dead,))
        for c in out:
            db.execute(cur, "SELECT data FROM game_actions WHERE game_id = ? ORDER BY seq", (c.game_id,))
            for (data,) in cur.fetchall():
                c.actions.extend(json.loads(data))
        # Games of no referee known to the database (made by an older maag, or whose
        # referee was forgotten) cannot be taken over: aborted, as before fleets; so are
        # those a revoked referee made as it was being revoked.
        db.execute(cur, "UPDATE games SET status = 'aborted' WHERE status = 'running' AND "
                   "(server IS NULL OR server NOT IN (SELECT id FROM servers WHERE revoked = 0))")
        db.execute(cur, "DELETE FROM servers WHERE heartbeat + lease_s + 86400 < NOW")
        return out

    return db.tx(tx)


def release_lease(st: Storage, server: str) -> None:
    """Let `server`'s lease lapse now (a referee that stops and hands its games over): the
    other referees take them over at their next renewal."""
    st.db.tx(lambda cur: st.db.execute(cur, "UPDATE servers SET heartbeat = heartbeat - lease_s - 1 "
                                       "WHERE id = ? AND revoked = 0", (server,)))


def has_lapsed_games(st: Storage, bot: str, game: str) -> bool:
    """Does `bot` hold a seat in a running game of `game` whose referee's lease has lapsed, or
    whose referee is gone (`session_gone`): a takeover is due?"""
    rows = st.db.query("SELECT 1 FROM games g JOIN servers s ON s.id = g.server WHERE g.status = 'running' "
                       f"AND (g.seat0 = ? OR g.seat1 = ?) AND g.game = ? AND ({lapsed(st.db.DIALECT)} "
                       f"OR {session_gone(st.db.DIALECT)}) AND s.revoked = 0", (bot, bot, game))
    return bool(rows)


def taken_elsewhere(st: Storage, server: str, bot: str, game: str) -> int | None:
    """A game of `game` taken over by another live referee in which `bot` holds a seat (the
    bot must connect to that referee to play it), or None."""
    rows = st.db.query("SELECT g.id FROM games g JOIN servers s ON s.id = g.server "
                       "WHERE g.status = 'running' AND (g.seat0 = ? OR g.seat1 = ?) AND g.game = ? "
                       "AND g.epoch > 0 AND g.server != ? AND s.heartbeat + s.lease_s >= NOW "
                       f"AND NOT {session_gone(st.db.DIALECT)} ORDER BY g.id LIMIT 1",
                       (bot, bot, game, server))
    return int(rows[0][0]) if rows else None


def recent_starts(st: Storage, server: str, window_s: float = 60.0) -> list[tuple[str, float]]:
    """(bot, seconds ago) of each game started by a referee other than `server` within the
    last `window_s` (the games-per-minute limit counts them); older rows are forgotten."""
    def tx(cur: Any) -> list[tuple[str, float]]:
        st.db.execute(cur, "DELETE FROM game_starts WHERE at + ? < NOW", (window_s,))
        st.db.execute(cur, "SELECT bot, NOW - at FROM game_starts WHERE server != ?", (server,))
        return [(str(b), float(age)) for b, age in cur.fetchall()]

    return st.db.tx(tx)


def count_auth_failure(st: Storage, keys: list[str], window_s: float) -> int:
    """Record a failed login under each of `keys` (an address, a name) for every referee on the
    database; returns the most failures one of them has had with less than `window_s` between
    them (the login delay doubles with each)."""
    def tx(cur: Any) -> int:
        worst = 0
        st.db.execute(cur, "DELETE FROM auth_failures WHERE last + ? < NOW", (window_s,))
        for k in keys:
            st.db.execute(cur, "INSERT INTO auth_failures (key, n, last) VALUES (?, 1, NOW) "
                          "ON CONFLICT (key) DO UPDATE SET n = auth_failures.n + 1, last = NOW RETURNING n",
                          (k,))
            row = cur.fetchone()
            worst = max(worst, int(row[0]) if row else 1)
        return worst

    return st.db.tx(tx)


# -- seat links (fleet/links.py) ---------------------------------------------------------------
def set_link(st: Storage, server: str, address: str) -> None:
    """Publish where `server` takes the links that carry seats to its games (host:port)."""
    st.db.tx(lambda cur: st.db.execute(cur, "UPDATE servers SET link = ? WHERE id = ?", (address, server)))


@dataclass(frozen=True, slots=True)
class SeatElsewhere:
    """A seat of a running game hosted by another live referee: where to link it."""

    game_id: int
    seat: int
    secret: str
    address: str


def seats_elsewhere(st: Storage, server: str, bot: str, game: str) -> list[SeatElsewhere]:
    """`bot`'s seats in running games of `game` hosted by live referees other than `server`
    that take links (the bot is connected here: its seats are carried there)."""
    rows = st.db.query("SELECT g.id, g.seat0, g.seat1, g.link_secret, s.link FROM games g "
                       "JOIN servers s ON s.id = g.server WHERE g.status = 'running' AND "
                       "(g.seat0 = ? OR g.seat1 = ?) AND g.game = ? AND g.server != ? AND "
                       "s.heartbeat + s.lease_s >= NOW AND s.revoked = 0 AND s.link IS NOT NULL "
                       f"AND NOT {session_gone(st.db.DIALECT)} AND g.link_secret IS NOT NULL ORDER BY g.id",
                       (bot, bot, game, server))
    out = []
    for gid, s0, s1, secret, link in rows:
        for seat, name in enumerate((s0, s1)):
            if name == bot:
                out.append(SeatElsewhere(int(gid), seat, str(secret), str(link)))
    return out


def link_hosts(st: Storage, game_ids: list[int]) -> dict[int, str]:
    """Of `game_ids`, the running games hosted by a referee that takes links: game -> the
    host's link address (a member's links are checked against it: fleet/links.py)."""
    if not game_ids:
        return {}
    marks = ", ".join("?" * len(game_ids))
    rows = st.db.query("SELECT g.id, s.link FROM games g JOIN servers s ON s.id = g.server WHERE "
                       f"g.status = 'running' AND s.link IS NOT NULL AND g.id IN ({marks})", game_ids)
    return {int(gid): str(link) for gid, link in rows}


def name_session(st: Storage, server: str, session: str) -> None:
    """Record the `application_name` of the session `server` keeps open (`session_gone`)."""
    st.db.tx(lambda cur: st.db.execute(cur, "UPDATE servers SET session = ? WHERE id = ?", (session, server)))


def game_running(st: Storage, game_id: int) -> bool:
    rows = st.db.query("SELECT 1 FROM games WHERE id = ? AND status = 'running'", (game_id,))
    return bool(rows)
