"""`maag serve`: run the referee server. Bots connect over TCP (docs/protocol.md) with a
token from `maag bot add NAME`; free bots are paired with each other (or kept for explicit
pairings with --no-auto-pair); every game's result and replay go to the database.

Policies (see `maag.server.referee.session`): a late turn is ended for the bot (--late end_turn) or
loses the game (--late forfeit); --max-late late turns lose on time; --max-illegal illegal
or malformed actions lose the game; a disconnected bot may reconnect with its token within
--grace, else it loses; a bot may resign at any time.

With --web [HOST:]PORT the same process serves the web view (docs/web.md): the live games,
the standings, replays of stored games, and a seat for a person against any bundled agent
or connected bot.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import signal
import sys
from typing import TYPE_CHECKING, Any

from maag.server.cli.common import (
    add_db_argument,
    add_game_arguments,
    add_service_arguments,
    add_web_arguments,
    game_config,
    policy,
    service_options,
    setup_logging,
    web_config,
    write_port_file,
)

if TYPE_CHECKING:
    from maag.server.net.server import ServerConfig

LOG = logging.getLogger(__name__)


def register(sub: Any) -> None:
    p = sub.add_parser("serve", help="run the referee server", description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=7878, help="TCP port (default 7878; 0: any free port)")
    add_db_argument(p)
    add_game_arguments(p, "1s")
    add_service_arguments(p)
    add_web_arguments(p)
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
    from maag.server.net.server import ServerConfig

    setup_logging(0 if args.quiet else args.verbose)
    cfg = ServerConfig(host=args.host, port=args.port, game=args.game, game_config=game_config(args),
                       tc=args.tc, policy=policy(args), seed=args.seed, auto_pair=not args.no_auto_pair,
                       max_frame=args.max_frame, max_rate=args.max_rate, record_latency=bool(args.stats_out),
                       **service_options(args))
    try:
        from maag.server.net.loop import run as run_loop

        return run_loop(_serve(cfg, args))
    except KeyboardInterrupt:
        return 0


async def _serve(cfg: ServerConfig, args: argparse.Namespace) -> int:
    from maag.server.net.loop import tune_collector
    from maag.server.net.server import RefereeServer
    from maag.server.storage.base import open_storage

    server = RefereeServer(cfg, open_storage(args.db))
    await server.start()
    tune_collector()  # (this process is the referee)
    web = None
    wcfg = web_config(args)
    if wcfg is not None:
        from maag.server.web.app import WebServer

        web = WebServer(server, wcfg)
        await web.start()
        print(f"maag serve: web view on http://{wcfg.host}:{web.port}/", file=sys.stderr, flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    if args.port_file:
        write_port_file(args.port_file, server.port)
    print(f"maag serve: listening on {cfg.host}:{server.port}", file=sys.stderr, flush=True)
    failed = asyncio.ensure_future(server.failed_event.wait())
    stopped = asyncio.ensure_future(stop.wait())
    await asyncio.wait([failed, stopped], return_when=asyncio.FIRST_COMPLETED)
    failed.cancel()
    stopped.cancel()
    if stop.is_set():  # what stopping does, at once (no game is waited for)
        ids = sorted(g.db_id for g in server.games.values() if not g.ending)
        print("maag serve: stopping; " + (f"game{'s' if len(ids) > 1 else ''} {', '.join(map(str, ids))} in "
                                          "progress handed over to the fleet's other processes, or stored as "
                                          "aborted (not rated)" if ids else "no game in progress"),
              file=sys.stderr, flush=True)
    if web is not None:
        await web.stop()
    await server.stop()
    if args.stats_out:
        with open(args.stats_out, "w") as f:
            json.dump({"stats": server.stats, "latencies_ms": server.latencies_ms,
                       "cpu_ms": server.cpu_ms}, f)
    if server.failed:
        print(f"maag serve: {server.failed}", file=sys.stderr, flush=True)
        return 3
    return 0
