"""What several commands share: the database option, the game and its options, the time
control, the referee's policies, the web view, logging and the port file. Only light imports here: a
command loads the engine, the server or the agents when it runs, not when `maag` builds
its parser (so `maag bot add` loads neither the C core nor an agent)."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import Any

from maag.engine import registry
from maag.server.printable import printable
from maag.server.referee.clock import TimeControl, parse_duration_ms
from maag.server.referee.policy import LatePolicy, Policy
from maag.server.storage.backend import UnsupportedURL, default_sqlite_path, resolve_db


def add_db_argument(p: argparse.ArgumentParser) -> None:
    """--db, which `maag` (cli/__init__.py's main, through resolve_db_argument) replaces by
    the URL of the database before the command runs: --db, else $MAAG_DB, else the default."""
    p.add_argument("--db", metavar="PATH|URL", default=None,
                   help="database of bots, games and replays: an SQLite file (PATH, or sqlite:///PATH: "
                        "sqlite:///NAME relative, sqlite:////ABSOLUTE/PATH) or "
                        "postgresql://USER:PASSWORD@HOST:PORT/DB (default: $MAAG_DB, else "
                        f"{default_sqlite_path()})")
    p.set_defaults(resolve_db=True)


def resolve_db_argument(args: argparse.Namespace) -> str | None:
    """For a command with add_db_argument's --db: set args.db to the URL of its database
    (an SQLite file's path made absolute, so the processes and workers it starts open the
    same one); None, or why the name is refused (it names the accepted forms)."""
    if not getattr(args, "resolve_db", False):
        return None
    try:
        args.db = resolve_db(args.db).url
    except UnsupportedURL as e:
        return str(e)
    return None


def parse_kv(items: list[str] | None) -> dict[str, Any]:
    """Game options from repeated KEY=VALUE (values: integers, else strings)."""
    out: dict[str, Any] = {}
    for item in items or []:
        k, sep, v = item.partition("=")
        if not sep or not k:
            raise argparse.ArgumentTypeError(f"expected KEY=VALUE, not {item!r}")
        out[k.strip()] = int(v) if v.strip().lstrip("-").isdigit() else v.strip()
    return out


def tc_type(text: str) -> TimeControl:
    try:
        return TimeControl.parse(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def ms_type(text: str) -> float:
    try:
        return parse_duration_ms(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def add_game_option_arguments(p: argparse.ArgumentParser) -> None:
    """--game, --option KEY=VALUE and the --map shortcut."""
    games = registry.names()
    p.add_argument("--game", default=registry.default(), choices=games,
                   help=f"the game (default {registry.default()}; registered: {', '.join(games)})")
    p.add_argument("--map", default=None, help="shortcut for --option map=NAME (heroes: a, a-small, a-tiny)")
    p.add_argument("--option", "-o", action="append", metavar="KEY=VALUE",
                   help="a game option, e.g. -o map=a-small -o draws=seeded (repeatable; `maag games` "
                        "lists each game's options)")


_SEED_HELP = ("seed for reproducible runs (game i gets a seed derived from it, so anyone who knows it "
              "can compute every deal); default: each game's seed from the OS's secure random source, "
              "stored with the game")


def add_game_arguments(p: argparse.ArgumentParser, tc_default: str, *, seed_help: str = _SEED_HELP) -> None:
    """Options shared by `serve` and `match`: game, its options, time control, policies (a
    command whose seed means more says so in `seed_help`)."""
    add_game_option_arguments(p)
    p.add_argument("--tc", type=tc_type, default=TimeControl.parse(tc_default), metavar="TC",
                   help=f"time control (default {tc_default}): 1s, 500ms+100, 40/60+1, inf; add ,bank=5s "
                        ",lag=50ms to set the overage bank and the lag allowance")
    p.add_argument("--seed", type=int, default=None, help=seed_help)
    p.add_argument("--late", choices=[x.value for x in LatePolicy], default="end_turn",
                   help="a late turn: end it for the bot (default) or forfeit the game")
    p.add_argument("--max-late", type=int, default=3, metavar="N",
                   help="late turns that lose the game on time (default 3; 0: never)")
    p.add_argument("--max-illegal", type=int, default=10, metavar="N",
                   help="illegal or malformed actions that lose the game (default 10; 0: never)")
    p.add_argument("--grace", type=ms_type, default=10_000.0, metavar="TIME",
                   help="how long a disconnected bot may take to reconnect (default 10s)")


def game_config(args: argparse.Namespace) -> dict[str, Any]:
    """The game options given on the command line, checked now by the game itself: a bad
    name or value ends the command with a one-line error (exit 2), not a traceback later."""
    cfg = parse_kv(args.option)
    if args.map:
        cfg["map"] = args.map
    try:
        registry.get(args.game).make_config(dict(cfg))
    except ValueError as e:
        print(f"maag: --game {args.game}: {e}", file=sys.stderr)
        raise SystemExit(2) from None
    return cfg


def policy(args: argparse.Namespace) -> Policy:
    return Policy(late=LatePolicy(args.late), max_late=args.max_late or None,
                  max_illegal=args.max_illegal or None, disconnect_grace_ms=args.grace)


def write_port_file(path: str, port: int) -> None:
    """Announce the listening port. Call it only once the process stops cleanly on SIGTERM
    (its handlers installed: a supervisor may signal it as soon as the file appears). The
    file is replaced whole, so a reader never sees it empty or half-written."""
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        f.write(f"{port}\n")
    os.replace(tmp, path)


class _PrintableFormatter(logging.Formatter):
    """Log lines with a participant's text in them (a verdict's detail, a build's error with its
    log's end) reach the host's terminal escaped (maag.server.printable)."""

    def format(self, record: logging.LogRecord) -> str:
        return printable(super().format(record))


def setup_logging(verbosity: int, debug_modules: list[str] | None = None) -> None:
    level = logging.WARNING if verbosity <= 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_PrintableFormatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    logging.basicConfig(level=level, handlers=[handler])
    for m in debug_modules or []:
        logging.getLogger(m).setLevel(logging.DEBUG)


def add_service_arguments(p: argparse.ArgumentParser) -> None:
    """Options of a long-running referee (`serve`, `ladder`): limits against misbehaving
    peers, the database's lease and outages (docs/server.md, "Limits" and "Storage")."""
    g = p.add_argument_group("limits and storage")
    g.add_argument("--max-games-per-minute", type=int, default=120, metavar="N",
                   help="games one bot may start per minute (default 120; 0: unlimited)")
    g.add_argument("--max-pending-per-address", type=int, default=16, metavar="N",
                   help="connections from one address before hello (default 16; 0: unlimited)")
    g.add_argument("--max-pending", type=int, default=1024, metavar="N",
                   help="connections from all addresses before hello (default 1024; 0: unlimited)")
    g.add_argument("--auth-delay", type=float, default=250.0, metavar="MS",
                   help="a failed login is answered after MS, doubled per further failure from the same "
                        "address or name within 10 minutes, up to 15 s (default 250; 0: none)")
    g.add_argument("--lease", type=float, default=15.0, metavar="S",
                   help="this server's lease in the database (default 15): other servers on the database "
                        "abort its games only once it has lapsed")
    g.add_argument("--storage-outage-limit", type=float, default=300.0, metavar="S",
                   help="exit with status 3 when the database stays unreachable this long (default 300); "
                        "results wait in --spill-dir")
    g.add_argument("--spill-dir", default=None, metavar="DIR",
                   help="where finished results wait while the database is away (default "
                        "$MAAG_SPILL_DIR or ~/.local/state/maag/spill)")
    g.add_argument("--reuse-port", action="store_true",
                   help="SO_REUSEPORT: several servers on one database listen on the same port and the "
                        "kernel spreads connections among them")


def service_options(args: argparse.Namespace) -> dict[str, Any]:
    """The ServerConfig fields set by add_service_arguments."""
    from maag.server.storage.spill import default_spill_dir

    return {"max_games_per_minute": args.max_games_per_minute,
            "max_pending_per_address": args.max_pending_per_address, "max_pending": args.max_pending,
            "auth_delay_ms": args.auth_delay, "lease_s": args.lease,
            "storage_outage_limit_s": args.storage_outage_limit,
            "spill_dir": str(args.spill_dir or default_spill_dir()), "reuse_port": args.reuse_port}


def _listen_type(text: str) -> tuple[str, int]:
    from maag.server.web.address import parse_listen

    try:
        return parse_listen(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def add_web_arguments(p: argparse.ArgumentParser) -> None:
    """The web view of `serve` and `ladder` (maag.server.web; docs/web.md): off unless --web."""
    g = p.add_argument_group("web view (docs/web.md)")
    g.add_argument("--web", type=_listen_type, default=None, metavar="[HOST:]PORT",
                   help="also serve the web view (live games, standings, replays, play against the bots) "
                        "on this HTTP port; a bare port listens on 127.0.0.1 only (default: off)")
    g.add_argument("--web-reveal", action="store_true",
                   help="replays of finished games show the full state (hands, decks); default: what a "
                        "spectator sees")
    g.add_argument("--web-tc", type=tc_type, default=TimeControl.parse("2m,bank=5m"), metavar="TC",
                   help="time control of a person's game (both seats; default 2m,bank=5m)")
    g.add_argument("--web-agent-ms", type=float, default=1000.0, metavar="MS",
                   help="the most a bundled agent thinks per turn against a person (default 1000)")
    g.add_argument("--web-max-players", type=int, default=8, metavar="N",
                   help="people playing at once (default 8)")
    g.add_argument("--upload-max-size", default="50MB", metavar="SIZE",
                   help="largest bot package a participant may upload (default 50MB; docs/web.md)")
    g.add_argument("--uploads-per-hour", type=int, default=10, metavar="N",
                   help="uploads a bot may make in an hour (default 10; 0: no limit)")
    g.add_argument("--upload-log-dir", default=None, metavar="DIR",
                   help="keep uploaded versions' build and smoke-game logs here (default: a temporary "
                        "folder)")


def web_config(args: argparse.Namespace) -> Any:
    """The WebConfig of add_web_arguments' options, or None without --web."""
    if args.web is None:
        return None
    from maag.server.sandbox.limits import parse_size
    from maag.server.web.app import WebConfig
    from maag.server.web.uploads import UploadConfig

    host, port = args.web
    # Uploads are built and validated under the command's sandbox options when it has them (ladder).
    uploads = UploadConfig(max_bytes=parse_size(args.upload_max_size), per_hour=args.uploads_per_hour,
                           log_dir=Path(args.upload_log_dir) if args.upload_log_dir else None,
                           host=host_options(args) if hasattr(args, "memory") else None)
    return WebConfig(host=host, port=port, reveal=args.web_reveal, human_tc=args.web_tc,
                     agent_ms=args.web_agent_ms, max_sessions=args.web_max_players, uploads=uploads)


def add_host_arguments(p: argparse.ArgumentParser) -> None:
    """Options of bots the host runs itself: the sandbox, its limits, fair clocks, the
    environment (docs/hosting.md)."""
    from maag.server.sandbox.limits import DEFAULT_LIMITS as d

    g = p.add_argument_group("hosted bots (packages, and command lines with --sandbox; docs/hosting.md)")
    g.add_argument("--sandbox", action="store_true",
                   help="run command-line bots in the sandbox too (packages always are)")
    g.add_argument("--ponder", choices=("allow", "freeze"), default="allow",
                   help="freeze: a hosted bot's processes are frozen whenever it is not asked to act")
    g.add_argument("--memory", default=str(d.memory), metavar="SIZE",
                   help="memory of all of a hosted bot's processes together (default 1GiB)")
    g.add_argument("--pids", type=int, default=d.pids, help=f"processes and threads (default {d.pids})")
    g.add_argument("--scratch", default=str(d.scratch), metavar="SIZE",
                   help="private writable space /scratch (default 100MB)")
    g.add_argument("--log-limit", default=str(d.log), metavar="SIZE",
                   help="bot output kept per game (default 1MB; the rest is dropped with a note)")
    g.add_argument("--hello-timeout", type=float, default=d.hello_s, metavar="S",
                   help=f"seconds from a hosted bot's start to its hello, never charged to its clock "
                        f"(default {d.hello_s:g})")
    g.add_argument("--build-timeout", type=float, default=d.build_s, metavar="S",
                   help=f"seconds a package's build command may run (default {d.build_s:g})")
    g.add_argument("--max-threads", type=int, default=None, metavar="N",
                   help="the most cores (`threads` in maag-bot.toml) a package may ask for; one asking "
                        "for more is refused (default: this machine's cores less one, at least 1)")
    g.add_argument("--pass-env", action="append", default=[], metavar="NAME",
                   help="pass this variable of the host's environment to every bot (repeatable); "
                        "nothing else of it is passed but PATH, HOME and the locale")


def host_options(args: argparse.Namespace) -> Any:
    """The HostOptions of `add_host_arguments`' flags (ValueError for a bad size)."""
    from maag.server.hosting.api import HostOptions
    from maag.server.sandbox.limits import DEFAULT_LIMITS, parse_size

    limits = DEFAULT_LIMITS.with_overrides(memory=parse_size(args.memory), pids=args.pids,
                                           scratch=parse_size(args.scratch), log=parse_size(args.log_limit),
                                           hello_s=args.hello_timeout, build_s=args.build_timeout)
    if args.max_threads is not None and args.max_threads < 1:
        raise ValueError(f"--max-threads must be at least 1, not {args.max_threads}")
    return HostOptions(limits=limits, ponder=args.ponder, pass_env=tuple(args.pass_env),
                       sandbox_commands=args.sandbox,
                       **({} if args.max_threads is None else {"max_threads": args.max_threads}))
