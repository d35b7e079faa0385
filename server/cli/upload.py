"""`maag bot upload`: a participant sends a new version of their bot to a host's web server,
authenticated by the bot's own token, then waits while the host builds and validates it
(docs/web.md, "Hosted bots: uploading").

    export MAAG_TOKEN=maag_...                         # the token the bot plays with
    maag bot upload --server https://host.example mybot/   # a folder, .tar.gz/.tgz or .zip

The package is checked here first (manifest, archive safety), sent as a .tar.gz (or the
archive as it is), and the outcome printed: active, or rejected with the reason, the build
log's end and the smoke games' report. Exit status 0: active; 1: rejected; 2: not sent.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from maag.server.printable import printable

FINAL = ("active", "rejected", "retired")


def register(sub: Any) -> None:
    p = sub.add_parser("upload", help="upload a new version of your bot to a host's web server (its token)",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("package", help="a folder with maag-bot.toml, or a .tar.gz/.tgz/.zip of one")
    p.add_argument("--server", required=True, metavar="URL", help="the host's web view, e.g. http://host:8080")
    p.add_argument("--name", default=None,
                   help="the bot's registered name (default: the token's, asked of the server)")
    p.add_argument("--token", default=None, help="the bot's token (default: $MAAG_TOKEN; better than this "
                                                 "option, which other users see in `ps`)")
    p.add_argument("--max-size", default="50MB", metavar="SIZE",
                   help="refuse larger packages here (default 50MB)")
    p.add_argument("--no-wait", action="store_true", help="do not wait for the build and validation")
    p.add_argument("--timeout", type=float, default=1800.0, metavar="S",
                   help="stop waiting after S seconds (default 1800)")
    p.add_argument("--json", action="store_true", help="print the version as JSON")
    p.set_defaults(func=run)


class _Failed(Exception):
    pass


def _call(method: str, url: str, token: str, data: bytes | None = None,
          ctype: str = "application/json") -> dict[str, Any]:
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Authorization": f"Bearer {token}", "Content-Type": ctype,
                                          "Accept": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return dict(json.loads(r.read() or b"{}"))
    except urllib.error.HTTPError as e:
        body = e.read().decode(errors="replace")
        try:
            why = json.loads(body).get("error") or body
        except ValueError:
            why = body.strip() or e.reason
        raise _Failed(f"{e.code}: {why}") from None
    except (urllib.error.URLError, OSError) as e:
        raise _Failed(f"cannot reach {url}: {getattr(e, 'reason', e)}") from None


def run(args: argparse.Namespace) -> int:
    from maag.server.hosting.api import SubmissionRejected, pack
    from maag.server.sandbox.limits import parse_size

    token = args.token or os.environ.get("MAAG_TOKEN", "")
    if not token:
        print("maag bot upload: no token: set $MAAG_TOKEN (or --token)", file=sys.stderr)
        return 2
    base = args.server.rstrip("/")
    if "://" not in base:
        base = "http://" + base
    try:
        data, pkg = pack(Path(args.package), parse_size(args.max_size))
    except (SubmissionRejected, ValueError) as e:
        print(f"maag bot upload: rejected here, not sent: {e}", file=sys.stderr)
        return 1
    try:
        name = args.name
        if name is None:
            name = _call("GET", f"{base}/api/session", token)["bot"]
        print(f"maag bot upload: sending {len(data)} bytes ({pkg.name}: {pkg.run}) as a new version of "
              f"{name}", file=sys.stderr, flush=True)
        url = f"{base}/api/bots/{urllib.parse.quote(name, safe='')}/versions"
        sent = _call("POST", url, token, data, "application/octet-stream")
        v = sent["version"]
        for warning in sent.get("warnings") or []:
            print(f"maag bot upload: warning: {warning}", file=sys.stderr, flush=True)
        print(f"maag bot upload: stored as {v['bot']}@{v['version']} (sha256 {v['sha256'][:12]}), "
              f"{v['status']}", file=sys.stderr, flush=True)
        end = time.monotonic() + args.timeout
        status = v["status"]
        while not args.no_wait and v["status"] not in FINAL:
            if time.monotonic() > end:
                print(f"maag bot upload: still {v['status']} after {args.timeout:g} s; "
                      f"see {base}/#/bot/{name}", file=sys.stderr)
                break
            time.sleep(1.0)
            v = _call("GET", base + sent["poll"], token)
            if v["status"] != status:
                status = v["status"]
                print(f"maag bot upload: {status}", file=sys.stderr, flush=True)
    except _Failed as e:
        print(f"maag bot upload: rejected: {printable(str(e))}", file=sys.stderr)
        return 1 if str(e)[:3] in ("400", "413", "429") else 2
    _report(v, base, args.json)
    return 0 if v["status"] == "active" or (args.no_wait and v["status"] not in FINAL) else 1


def _report(v: dict[str, Any], base: str, as_json: bool) -> None:
    if as_json:
        print(json.dumps(v))
        return
    label = f"{v['bot']}@{v['version']}"
    # The reason, the build's log and the verdicts are a bot's words: shown escaped.
    print(f"{label}\t{v['status']}" + (f": {printable(v['reason'])}" if v.get("reason") else ""))
    if v["status"] == "rejected" and v.get("build_log") and str(v.get("reason", "")).startswith("build"):
        tail = printable(v["build_log"]).rstrip().split("\n")[-20:]
        print("  the build's log ends with:")
        for line in tail:
            print(f"    {line}")
    for g in (v.get("report") or {}).get("games", []):
        verdict = "" if g["passed"] else f" FAILED: {g['verdict']['kind']}: {g['verdict']['detail']}"
        print(f"  smoke game {g['game_id']} against {g['opponent']}: {g['reason']}{printable(verdict)} "
              f"({base}/#/replay/{g['game_id']})")
    print(f"  page: {base}/#/bot/{urllib.parse.quote(v['bot'], safe='')}")
