"""`maag bot submit|versions|process`: a participant's package as a version of their bot,
built and validated in the sandbox before it plays (docs/competitions.md, "Hosted bots").

    maag bot add alice                                   # once: the bot and its token
    maag bot submit alice alice.tar.gz --game nim --tc 1s  # store, build, validate; prints the outcome
    maag bot versions alice                              # every version with its status and reason
    maag bot process                                     # build and validate what waits (after a restart)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from maag.server.cli.common import (
    add_db_argument,
    add_game_option_arguments,
    add_host_arguments,
    game_config,
    host_options,
    setup_logging,
)
from maag.server.printable import printable


def _common(p: argparse.ArgumentParser) -> None:
    add_db_argument(p)
    add_game_option_arguments(p)
    p.add_argument("--tc", default="1s",
                   help="the competition's time control for the smoke games (default 1s)")
    add_host_arguments(p)
    p.add_argument("--log-dir", default=None, metavar="DIR",
                   help="keep the build's and the smoke games' logs here (default: a temporary folder)")
    p.add_argument("-v", "--verbose", action="count", default=0)


def register_submit(sub: Any) -> None:
    p = sub.add_parser("submit", help="store a bot package as a new version of a bot, build and validate it",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("name", help="the bot (registered with `maag bot add NAME`)")
    p.add_argument("package", help="a folder with maag-bot.toml, or a .tar.gz/.tgz/.zip of one")
    p.add_argument("--max-size", type=int, default=None, metavar="BYTES",
                   help="largest package accepted (default 50 MB)")
    p.add_argument("--no-process", action="store_true", help="store it pending; `maag bot process` builds it")
    p.add_argument("--json", action="store_true")
    _common(p)
    p.set_defaults(func=run_submit)


def register_versions(sub: Any) -> None:
    p = sub.add_parser("versions", help="the submitted versions of a bot (or of every bot)")
    p.add_argument("name", nargs="?", default=None)
    p.add_argument("--json", action="store_true")
    p.add_argument("--logs", action="store_true",
                   help="also the bot's own output where a stage rejected it and the end of the build's log "
                        "(with --json: the whole build log)")
    add_db_argument(p)
    p.set_defaults(func=run_versions)


def register_process(sub: Any) -> None:
    p = sub.add_parser("process", help="build and validate the pending versions (and those a stopped "
                                       "process left building or validating)")
    p.add_argument("--json", action="store_true")
    _common(p)
    p.set_defaults(func=run_process)


def _kw(args: argparse.Namespace) -> dict[str, Any]:
    log_dir = Path(args.log_dir) if args.log_dir else Path(tempfile.mkdtemp(prefix="maag-submissions-"))
    return {"game": args.game, "game_config": game_config(args), "tc": args.tc, "options": host_options(args),
            "log_dir": log_dir}


def _line(v: Any) -> str:
    reason = f": {printable(v.reason)}" if v.reason else ""  # a build's log, a bot's words: escaped
    return f"{v.label}\t{v.status}\t{v.size} bytes\tsha256 {v.sha256[:12]}\t{v.updated}{reason}"


def run_submit(args: argparse.Namespace) -> int:
    from maag.server.hosting.api import DEFAULT_MAX_UPLOAD, SubmissionRejected, pack, process, submit
    from maag.server.storage.base import open_storage
    from maag.server.storage.submissions import open_submission_store

    setup_logging(args.verbose)
    st = open_storage(args.db)
    try:
        known = {b.name for b in st.list_bots()}
    finally:
        st.close()
    if args.name not in known:
        print(f"maag bot submit: no bot {args.name!r} (register it with `maag bot add {args.name}`)",
              file=sys.stderr)
        return 2
    try:
        kw = _kw(args)
        data, pkg = pack(Path(args.package), args.max_size or DEFAULT_MAX_UPLOAD, kw["options"])
    except (SubmissionRejected, ValueError) as e:
        print(f"maag bot submit: rejected: {printable(str(e))}", file=sys.stderr)
        return 1
    store = open_submission_store(args.db)
    try:
        v = submit(store, args.name, data, pkg)
        if not args.no_process:
            v = asyncio.run(process(store, str(args.db), v, **kw))
    finally:
        store.close()
    if args.json:
        print(json.dumps(v.to_dict(logs=True)))
    else:
        print(_line(v))
        if v.report:
            for g in v.report.get("games", []):
                print(f"  smoke game {g['game_id']} against {g['opponent']}: {g['reason']}"
                      f"{'' if g['passed'] else ' FAILED: ' + json.dumps(g['verdict'])}")
        _bot_output(v)
    return 0 if v.status in ("active", "pending") else 1


def _bot_output(v: Any, build_lines: int = 0) -> None:
    """What the bot itself printed where a stage rejected it (and the end of its build's log):
    its own words, for its owner; escaped (a participant's text)."""
    out = (v.report or {}).get("bot_output") or {}
    if out.get("text", "").strip():
        print(f"  the bot's output in {printable(str(out.get('stage', '?')))} ends with:")
        for line in printable(out["text"].rstrip()).split("\n"):
            print(f"  | {line}")
    if build_lines and v.build_log:
        print("  the build's log ends with:")
        for line in printable(v.build_log.rstrip()).split("\n")[-build_lines:]:
            print(f"  | {line}")


def run_versions(args: argparse.Namespace) -> int:
    from maag.server.storage.submissions import open_submission_store

    store = open_submission_store(args.db)
    try:
        vs = store.versions(args.name)
    finally:
        store.close()
    if args.json:
        print(json.dumps([v.to_dict(logs=args.logs) for v in vs]))
    else:
        for v in vs:
            print(_line(v))
            if args.logs:
                _bot_output(v, build_lines=20)
    return 0


def run_process(args: argparse.Namespace) -> int:
    from maag.server.hosting.api import process_pending
    from maag.server.storage.submissions import open_submission_store

    setup_logging(args.verbose)
    store = open_submission_store(args.db)
    try:
        done = asyncio.run(process_pending(store, str(args.db), **_kw(args)))
    finally:
        store.close()
    if args.json:
        print(json.dumps([v.to_dict() for v in done]))
    else:
        for v in done:
            print(_line(v))
    return 0
