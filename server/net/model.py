"""The referee server's data: its configuration (`ServerConfig`), a game asked for
(`GameRequest`) and a finished game's summary (`GameSummary`), shared by its rooms."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from maag.engine import registry
from maag.server.referee.clock import TimeControl
from maag.server.referee.session import Policy

__all__ = ["ServerConfig", "GameRequest", "Absence", "GameSummary", "GameNotStarted", "SERVER_NAME"]


def _server_name() -> str:
    try:
        return f"maag {version('maag')}"
    except PackageNotFoundError:  # a source tree without metadata
        return "maag"


SERVER_NAME = _server_name()  # welcome.server: the package's name and version


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """How a referee server runs. Times in milliseconds, sizes in bytes."""

    host: str = "127.0.0.1"
    port: int = 7878
    """TCP port; 0 picks a free one (see RefereeServer.port)."""
    reuse_port: bool = False
    """SO_REUSEPORT: several server processes listen on one port (the kernel spreads the
    connections); they share bots, tokens and results through the database."""
    game: str = field(default_factory=registry.default)
    """A registered game (default: the first of games.def)."""
    game_config: dict[str, Any] = field(default_factory=dict)
    tc: TimeControl = field(default_factory=TimeControl)
    policy: Policy = field(default_factory=Policy)
    seed: int | None = None
    """Reproducible runs: game number i (from 0, in order of start) gets derive_seed(seed, i);
    None: every game is seeded from the OS."""
    auto_pair: bool = True
    """Pair free bots with each other when no explicit request is waiting."""
    max_frame: int = 256 * 1024
    max_rate: int = 2000
    """Messages per second per connection (and burst size); 0: unlimited."""
    max_out_buffer: int = 8 * 1024 * 1024
    hello_timeout_ms: float = 10_000.0
    max_connections_per_bot: int = 1
    """Live connections one token may have (docs/protocol.md: a second is `already_connected`)."""
    lease_s: float = 15.0
    """This server's lease in the database, renewed every third of it: when it lapses (the
    server died or lost the database), other servers on the database abort its games."""
    storage_outage_limit_s: float = 300.0
    """The database unreachable for longer than this: the server stops (its waiting results
    go to the spill directory) and reports `failed`, so that a service manager restarts it."""
    spill_dir: str | None = None
    """Where results wait on disk while the database is away (see storage/spill.py); None:
    in memory only."""
    max_pending_per_address: int = 16
    """Connections from one address that have not said `hello` yet (0: unlimited); one more
    is closed at once, before the greeting (there is no framing to answer in yet)."""
    max_pending: int = 1024
    """Connections from all addresses that have not said `hello` yet (0: unlimited)."""
    auth_delay_ms: float = 250.0
    """A failed login is answered after this delay, doubled for every further failure from
    the same address or with the same hello name within `auth_window_s` (0: no delay)."""
    auth_delay_max_ms: float = 15_000.0
    auth_window_s: float = 600.0
    max_games_per_minute: int = 0
    """Games one bot may start per minute, over all its connections (0: unlimited; `maag
    serve` and `maag ladder` default to 120): past it, the bot is not paired until the
    oldest of those games is a minute old."""
    token_check_s: float = 1.0
    """How often the live connections' tokens are checked against storage: a token revoked
    (`maag bot add NAME --replace`, on this server or any other on the same database) closes
    its connections with `auth_failed` within this time; a new `hello` is always checked."""
    fleet: bool = True
    """Run as a referee of a fleet on its database (fleet/fleets.py DatabaseFleet: the action
    log, takeovers, links, limits counted for every referee on it); False: a referee with its
    database to itself (SoloFleet: none of that, limits counted in this process only)."""
    links: bool = True
    """Take links from the fleet's other referees on one more port (`link_host`, a free port):
    a bot connected to another referee on the database plays its games hosted here through it
    (fleet/links.py)."""
    fleet_ladder: str | None = None
    """The ladder whose scheduler (in any process on the database) pairs this referee's bots
    (fleet/member.py); None: the referee pairs its own (auto_pair) or takes requests."""
    link_host: str | None = None
    """Where the link listener binds (None: `host`)."""
    link_address: str | None = None
    """The host name the others reach the link listener at (None: `link_host`, or this
    machine's name when that is a wildcard address)."""
    record_latency: bool = False
    """Keep every referee time (receipt of a frame to its replies written) for benchmarks."""


@dataclass(slots=True)
class GameRequest:
    """A game to be played between two named bots (seat 1, seat 2)."""

    seats: tuple[str, str]
    match_id: str | None = None
    tags: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None
    start_state: dict[str, Any] | None = None
    future: asyncio.Future[GameSummary] | None = None
    on_start: Callable[[int], None] | None = None
    requeue: bool = True
    """When a seat leaves between the pairing and the game's first message: True, the request
    goes back to the front of the queue (a match waits for its bot to come back); False, its
    future fails with GameNotStarted (a ladder decides again among the bots still there)."""
    tc: TimeControl | None = None
    """This game's time control (None: the server's): a person's seat needs more time than a bot's."""
    clients: tuple[Any, Any] | None = None
    """Connections handed in with `attach` that must hold the two seats (a hosted bot plays
    one game per process): the game waits for exactly these, never another of the bots'."""
    on_prompt: Callable[[int], None] | None = None
    """Called with the seat (0 or 1) just before each `your_turn` is written to it: the host
    thaws that seat's process and freezes the other's (fair clocks)."""
    annotate: Callable[[], dict[str, Any]] | None = None
    """Called when the game is over, before it is stored: its dict is kept in the replay as
    `host` (each seat's CPU time per turn, whether the machine was overloaded)."""
    handover: bool = False
    """At this referee's stop, with peers on the database, the game may be handed over to them
    (its future is then cancelled): a fleet ladder's games, followed through the database."""
    absence: Absence | None = None
    """How long the request waits for a seat's bot that has no connection (None: for ever)."""


@dataclass(frozen=True, slots=True)
class Absence:
    """How long a requested game waits for a seat's bot that has no connection to this
    referee (`request_game(absence=...)`, a match's and a tournament's bot processes): then
    that seat loses the game by forfeit, stored and summarised like any result, and the
    caller goes on with its next game instead of waiting for a bot whose process lives on
    without its connection."""

    gone_s: float
    """A bot that said hello here and whose connections have all closed: lost with verdict
    `disconnect` once it has been away this long (a later game at once while it stays away)."""
    startup_s: float | None = None
    """A bot that never said hello here: lost with verdict `startup` after this long from the
    request (None: the request waits; the caller has its own start-up check)."""


class GameNotStarted(Exception):
    """A requested game was paired but not played: a seat's connection closed before the
    game's first message, or the game could not be set up (a start state the engine
    refuses). Its row is stored as aborted. `seat` (0 or 1) names the seat whose connection
    closed, None when no seat is to blame."""

    def __init__(self, message: str, seat: int | None = None) -> None:
        super().__init__(message)
        self.seat = seat

    def __reduce__(self) -> tuple[Any, ...]:  # (pickled whole: a Dask worker's exception)
        return (type(self), (str(self), self.seat))


@dataclass(frozen=True, slots=True)
class GameSummary:
    game_id: int
    seats: tuple[str, str]
    winner: int | None
    """0 or 1 (seat index), -1 draw, None aborted."""
    reason: str
    plies: int
    think_ms: tuple[float, float]
    transport_ms: tuple[float, float]
    stored: bool
    search: tuple[dict[str, Any] | None, dict[str, Any] | None] = (None, None)
    """Per seat: what its bot reported of its search (GameSession.search_report)."""
    verdict: dict[str, Any] | None = None
    """For a forfeit: {"seat": 1 or 2, "kind": time, memory, crash, illegal, protocol,
    disconnect or startup, "detail": text} (GameSession's verdicts)."""
    host: dict[str, Any] | None = None
    """What the host measured (GameRequest.annotate), as kept in the replay."""
