"""`maag replay ID`: re-simulate a stored game exactly, verifying every step and the final
result; print the state at any position or export it as JSON (a start state for `maag
match --start` or for analysis)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from maag.server.cli.common import add_db_argument
from maag.server.printable import printable
from maag.server.referee.replay import ReplayError, resimulate, state_at
from maag.server.storage.base import open_storage


def register(sub: Any) -> None:
    p = sub.add_parser("replay", help="re-simulate a stored game; show or export any position",
                       description=__doc__)
    p.add_argument("id", help="the game's id (= its replay id), or a replay JSON file")
    p.add_argument("--at", type=int, metavar="N", default=None,
                   help="the position after N actions (0: the start; -1: the end)")
    p.add_argument("--json", action="store_true",
                   help="print the full state at --at (default: the end) as JSON: hands and deck "
                        "seeds included, usable as a start state")
    p.add_argument("--observation", type=int, choices=(1, 2), default=None, metavar="SEAT",
                   help="with --json: print what SEAT (1 or 2) saw instead of the full state")
    p.add_argument("--log", action="store_true", help="list the actions with their clock stamps")
    p.add_argument("--show", action="store_true",
                   help="play the game through in words: each ply's actions, then the position (for a "
                        "game with a text view; with --observation, as that seat saw it)")
    p.add_argument("--raw", action="store_true", help="print the stored replay record as JSON")
    add_db_argument(p)
    p.set_defaults(func=run)


def load(ident: str, db: str | None) -> dict[str, Any] | None:
    if ident.endswith(".json"):
        with open(ident) as f:
            return json.load(f)  # type: ignore[no-any-return]
    try:
        gid = int(ident)
    except ValueError:
        return None
    st = open_storage(db)
    try:
        return st.get_replay(gid)
    finally:
        st.close()


def show(rp: dict[str, Any], seat: int | None) -> int:
    """Each ply's actions in words, then the position after it, from the full state or, with
    `seat`, from that seat's observation."""
    st = state_at(rp, 0)
    spec = st.game.spec
    if spec.render is None:
        print(f"maag replay: {spec.name} has no text view; use --at N or --json", file=sys.stderr)
        return 2

    def view() -> dict[str, Any]:
        return st.observation(seat - 1).to_json() if seat else st.to_json()

    print(spec.render(view()))
    for i, entry in enumerate(rp["actions"]):
        before = st.to_json()
        mover = st.current_player  # (each game names it its own way in its JSON)
        words = spec.describe(before, entry["action"]) if spec.describe else json.dumps(entry["action"])
        print(f"  {i:4d} seat {entry['seat'] + 1}: {words}{' (auto)' if entry.get('auto') else ''}")
        st.apply(entry["action"])
        if st.is_terminal or st.current_player != mover:
            print()
            print(spec.render(view()))
    return 0


def run(args: argparse.Namespace) -> int:
    rp = load(args.id, args.db)
    if rp is None:
        print(f"maag replay: no replay {args.id!r}", file=sys.stderr)
        return 1
    if args.raw:
        print(json.dumps(rp))
        return 0
    if args.show:
        return show(rp, args.observation)
    if args.json or args.at is not None:
        at = -1 if args.at is None else args.at
        try:
            st = state_at(rp, at)
        except (ReplayError, ValueError) as e:
            print(f"maag replay: {e}", file=sys.stderr)
            return 1
        out = st.observation(args.observation - 1).to_json() if args.observation else st.to_json()
        print(json.dumps(out, indent=None if args.json else 2))
        return 0
    try:
        check = resimulate(rp)
    except ReplayError as e:
        print(printable(f"replay {args.id}: FAILED at {e}"))
        return 1
    tags = rp.get("tags", {})
    for k, v in tags.items():
        print(printable(f'[{k} "{v}"]'))
    if args.log:
        for i, a in enumerate(rp["actions"]):
            extra = " (auto)" if a.get("auto") else ""
            think = f" think {a['think_ms']:.1f} ms" if "think_ms" in a else ""
            print(f"{i:5d} seat {a['seat'] + 1} {a['t_ms']:10.1f} ms{think} {json.dumps(a['action'])}{extra}")
    res = rp.get("result") or {}
    if res.get("verdict"):
        v = res["verdict"]
        who = tags.get(f"Seat{v['seat']}", "?")
        # A verdict's detail can quote what the bot sent or printed: shown escaped.
        print(printable(f"verdict: seat {v['seat']} ({who}) forfeited: {v['kind']}: {v.get('detail', '')}"))
    host = rp.get("host") or {}
    for seat in (0, 1):
        turns = (host.get("cpu_ms_per_turn") or [None, None])[seat]
        if turns is not None:
            off = (host.get("cpu_ms_off_turn") or [None, None])[seat]
            per_turn = ", ".join(f"{t:g}" for t in turns)
            print(f"seat {seat + 1} CPU per turn (ms): {per_turn}; off turn {off} ms")
        tail = (host.get("log_tail") or [None, None])[seat]
        if tail:
            print(f"seat {seat + 1}'s log ends with:")
            # The bot's own output: its control characters (ESC sequences, a carriage return
            # faking a line) shown as escapes, never sent to the terminal. Split on \n only,
            # after escaping, so that no other line break (\r, \x0b, U+2028...) is lost.
            for line in printable(tail).split("\n"):
                print(f"  | {line}")
    if host:
        print(f"host: ponder {host.get('ponder')}, cores {host.get('cores')}, CPU pressure "
              f"{host.get('cpu_pressure')}%, referee lag up to {host.get('referee_lag_ms_max')} ms"
              f"{' (OVERLOADED: consider voiding this game)' if host.get('overloaded') else ''}")
    # Seats are 1 and 2 wherever a person reads them (as on the wire and in the tags' Result).
    result = {None: "no result", -1: "a draw"}.get(check.winner, f"seat {(check.winner or 0) + 1} won")
    print(f"replay {args.id}: OK, {check.plies} actions re-simulated, {check.hashes_checked} state hashes "
          f"and the result ({check.reason}, {result}) verified")
    return 0
