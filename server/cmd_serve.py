"""`maag serve`: run the referee server. Bots connect over TCP (docs/protocol.md) with a
token from `maag bot add NAME`; free bots are paired with each other (or kept for explicit
pairings with --no-auto-pair); every game's result and replay go to the database.

Policies (see `maag.server.referee`): a late turn is ended for the bot (--late end_turn) or
loses the game (--late forfeit); --max-late late turns lose on time; --max-illegal illegal
or malformed actions lose the game; a disconnected bot may reconnect with its token within
--grace, else it loses; a bot may resign at any time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import sys
from typing import Any

from maag.server.clock import TimeControl, parse_duration_ms
from maag.server.cmd_bot import add_db_argument
from maag.server.referee import LatePolicy, Policy
from maag.server.server import RefereeServer, ServerConfig
from maag.server.storage import open_storage

LOG = logging.getLogger(__name__)


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


def add_game_arguments(p: argparse.ArgumentParser, tc_default: str) -> None:
    """Options shared by `serve` and `match`: game, its options, time control, policies."""
    p.add_argument("--game", default="heroes", help="game to referee (default heroes)")
    p.add_argument("--map", default=None, help="shortcut for --option map=NAME (heroes: a, a-small, a-tiny)")
    p.add_argument("--option", "-o", action="append", metavar="KEY=VALUE",
                   help="a game option, e.g. -o map=a-small -o draws=seeded (repeatable)")
    p.add_argument("--tc", type=tc_type, default=TimeControl.parse(tc_default), metavar="TC",
                   help=f"time control (default {tc_default}): 1s, 500ms+100, 40/60+1, inf; add ,bank=5s "
                        ",lag=50ms to set the overage bank and the lag allowance")
    p.add_argument("--seed", type=int, default=None,
                   help="seed for reproducible runs (game i gets a seed derived from it); "
                        "default: from the OS")
    p.add_argument("--late", choices=[x.value for x in LatePolicy], default="end_turn",
                   help="a late turn: end it for the bot (default) or forfeit the game")
    p.add_argument("--max-late", type=int, default=3, metavar="N",
                   help="late turns that lose the game on time (default 3; 0: never)")
    p.add_argument("--max-illegal", type=int, default=10, metavar="N",
                   help="illegal or malformed actions that lose the game (default 10; 0: never)")
    p.add_argument("--grace", type=ms_type, default=10_000.0, metavar="TIME",
                   help="how long a disconnected bot may take to reconnect (default 10s)")


def game_config(args: argparse.Namespace) -> dict[str, Any]:
    cfg = parse_kv(args.option)
    if args.map:
        cfg["map"] = args.map
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


def setup_logging(verbosity: int, debug_modules: list[str] | None = None) -> None:
    level = logging.WARNING if verbosity <= 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    logging.basicConfig(level=level, format="%(asctime)s %(name)s %(levelname)s %(message)s",
                        stream=sys.stderr)
    for m in debug_modules or []:
        logging.getLogger(m).setLevel(logging.DEBUG)


def register(sub: Any) -> None:
    p = sub.add_parser("serve", help="run the referee server", description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=7878, help="TCP port (default 7878; 0: any free port)")
    add_db_argument(p)
    add_game_arguments(p, "1s")
    p.add_argument("--no-auto-pair", action="store_true", help="pair bots only on explicit requests")
    p.add_argument("--max-frame", type=int, default=256 * 1024, metavar="BYTES",
                   help="largest frame accepted (default 262144)")
    p.add_argument("--max-rate", type=int, default=2000, metavar="N",
                   help="messages per second per connection (default 2000; 0: unlimited)")
    p.add_argument("--stats-out", metavar="FILE", default=None,
                   help="on exit, write counters and every referee time (ms) to FILE as JSON")
    p.add_argument("--port-file", metavar="FILE", default=None, help="write the listening port to FILE")
    p.add_argument("-v", "--verbose", action="count", default=1,
                   help="-v: connections and games (default), -vv: every message")
    p.add_argument("-q", "--quiet", action="store_true", help="warnings only")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    setup_logging(0 if args.quiet else args.verbose)
    cfg = ServerConfig(host=args.host, port=args.port, game=args.game, game_config=game_config(args),
                       tc=args.tc, policy=policy(args), seed=args.seed, auto_pair=not args.no_auto_pair,
                       max_frame=args.max_frame, max_rate=args.max_rate, record_latency=bool(args.stats_out))
    try:
        return asyncio.run(_serve(cfg, args))
    except KeyboardInterrupt:
        return 0


async def _serve(cfg: ServerConfig, args: argparse.Namespace) -> int:
    server = RefereeServer(cfg, open_storage(args.db))
    await server.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    if args.port_file:
        write_port_file(args.port_file, server.port)
    print(f"maag serve: listening on {cfg.host}:{server.port}", file=sys.stderr, flush=True)
    await stop.wait()
    await server.stop()
    if args.stats_out:
        with open(args.stats_out, "w") as f:
            json.dump({"stats": server.stats, "latencies_ms": server.latencies_ms,
                       "cpu_ms": server.cpu_ms}, f)
    return 0
