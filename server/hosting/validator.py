"""The validation of a built package, on ONE referee it is given: the bot kit's scripted
situations (the bot in its sandbox, relayed to the kit's proxy on that referee), then smoke
games in the sandbox at the competition's time control, against random (the referee's own
minibot, in this process) and against itself. The smoke games are stored under the match id
`validate:NAME@VERSION`, the situations under `validate:NAME@VERSION:check`: ratings and
the web view's lists leave both out."""

from __future__ import annotations

import asyncio
import os
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from maag.engine.seeds import derive_seed
from maag.server.hosting.host import Host, hosted_bot
from maag.server.hosting.options import HostedBot, safe_name
from maag.server.hosting.relay import launch_relayed
from maag.server.kit.check import run_check
from maag.server.net.minibot import MiniBot
from maag.server.net.server import Absence, GameSummary

__all__ = ["Validation", "validate", "log_tail", "SMOKE_GAMES"]

SMOKE_GAMES = 2
"""Games against each opponent: one from each seat, on the same seed."""
RANDOM = "random"


@dataclass(slots=True)
class Validation:
    """What a validation found: the report kept with the version, and the reason it is
    refused (None: it passed)."""

    report: dict[str, Any]
    reason: str | None


async def validate(host: Host, bot: HostedBot, *, label: str, game: str, game_config: dict[str, Any], tc: str,
                   workdir: Path, log_dir: Path) -> Validation:
    """Validate `bot` (a built package, `bot.package` set) on `host`'s referee (started, with
    the competition's game and time control). `label` NAME@VERSION names its games."""
    server, options = host.server, host.options
    assert bot.package is not None
    match_id = f"validate:{label}"
    # The bot's output during the check, kept in the version's log folder (the kit's own
    # file is temporary): a rejected participant reads its own traceback.
    check_log = log_dir / f"{safe_name(bot.name)}-check.log"
    # The situations' games under a match id of their own (the report's smoke games are
    # `match_id`'s), with the prefix that keeps them out of ratings and the web view's lists.
    kit = await run_check([bot.package.run], tc=tc, game=game, game_config=dict(game_config), server=server,
                          match_id=f"{match_id}:check",
                          launch=lambda addr, tok, _path: launch_relayed(bot, options, host.cg, addr, tok,
                                                                         check_log, game))
    check = kit.to_json()
    if not kit.ok:
        failed = [s["name"] for s in check["situations"] if not s.get("ok", True)]
        why = "; ".join(kit.problems) or f"situations failed: {', '.join(failed)}"
        return Validation({"check": check, "passed": False, "games": [],
                           "bot_output": {"stage": "maag bot check", "text": log_tail(check_log)}},
                          f"bot check failed: {why[:1500]}")
    games: list[dict[str, Any]] = []
    ok = True
    resigned = 0
    name = bot.package.name
    for against in (RANDOM, "itself"):
        names = (name, RANDOM) if against == RANDOM else (name, name)
        if names[0] == names[1]:  # two names, as a match would give them
            names = (names[0] + "#1", names[1] + "#2")
        for g in await _smoke_games(host, str(bot.folder), names, against == RANDOM, match_id, workdir):
            verdict = g.verdict
            ours = [0, 1] if against != RANDOM else [i for i in (0, 1) if g.seats[i] == names[0]]
            against_us = verdict is not None and verdict["seat"] - 1 in ours
            # A game it gave up: the Python SDK resigns for a bot whose code raised.
            gave_up = g.reason == "resign" and g.winner is not None and 1 - g.winner in ours
            resigned += gave_up
            ok = ok and not against_us and g.stored
            games.append({"opponent": against, "game_id": g.game_id, "seats": list(g.seats),
                          "winner": g.winner, "reason": g.reason, "verdict": verdict,
                          "passed": not against_us, "resigned": gave_up})
    report: dict[str, Any] = {
        "game": game, "tc": tc, "games": games, "passed": ok, "check": check,
        "checks": "maag bot check's situations, then smoke games in the sandbox: against random and "
                  "against itself"}
    if ok and games and resigned == len(games):
        # Every smoke game given up: a bot whose code fails on every turn (the SDK resigns
        # for it), not one that resigns a lost position now and then.
        report["passed"] = False
        last = _game_log(log_dir, games[-1]["game_id"], None)
        report["bot_output"] = {"stage": f"smoke game {games[-1]['game_id']}", "text": last}
        lines = [x for x in last.splitlines() if x.strip()]
        why = f"validation failed: the bot resigned every smoke game ({resigned} of {len(games)})"
        return Validation(report, why + (f"; its log ends with: {lines[-1][:300]}" if lines else ""))
    if ok:
        return Validation(report, None)
    bad = next(g for g in games if not g["passed"])
    report["bot_output"] = {"stage": f"smoke game {bad['game_id']}",
                            "text": _game_log(log_dir, bad["game_id"], bad["verdict"]["seat"])}
    return Validation(report, f"validation failed: game {bad['game_id']} ({bad['opponent']}): "
                              f"{bad['verdict']['kind']}: {bad['verdict']['detail']}")


async def _smoke_games(host: Host, folder: str, names: tuple[str, str], vs_random: bool, match_id: str,
                       workdir: Path) -> list[GameSummary]:
    """SMOKE_GAMES games between `names`, seats alternating, each seed played from both seats:
    the first (and, against itself, the second) a fresh sandboxed process of the package per
    game; against random, the second the referee's own minibot, in this process."""
    server = host.server
    hosted: dict[str, HostedBot] = {}
    tokens: dict[str, str] = {}
    for i, n in enumerate(names):
        tokens[n] = "maag_match_" + secrets.token_urlsafe(18)
        server.add_token(tokens[n], n)
        if i == 0 or not vs_random:
            b = hosted_bot(folder, n, host.options, workdir)
            assert b is not None
            hosted[n] = b
    opponent = None
    if vs_random:
        opponent = MiniBot("127.0.0.1", server.port, tokens[names[1]], agent=RANDOM, name=names[1],
                           quiet=True)
    opp_task = asyncio.ensure_future(opponent.run()) if opponent is not None else None
    base = int.from_bytes(os.urandom(8), "little") & (2**63 - 1)
    absence = Absence(gone_s=server.config.policy.disconnect_grace_ms / 1000, startup_s=None)
    out: list[GameSummary] = []
    try:
        for i in range(SMOKE_GAMES):
            seats: Sequence[str] = names if i % 2 == 0 else (names[1], names[0])
            out.append(await host.play((seats[0], seats[1]), [hosted.get(seats[0]), hosted.get(seats[1])],
                                       [tokens[seats[0]], tokens[seats[1]]], match_id=match_id,
                                       seed=derive_seed(base, i // 2), tags={"Round": i + 1},
                                       absence=absence))
    finally:
        if opp_task is not None and opponent is not None:
            opp_task.cancel()
            await asyncio.gather(opp_task, return_exceptions=True)
            opponent.close()
    return out


def log_tail(path: Path, lines: int = 40, cap: int = 4000) -> str:
    """The end of a bot's log (its last `lines` lines, at most `cap` characters), "" if none."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 4 * cap))
            text = f.read().decode(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.split("\n")[-lines:])[-cap:]


def _game_log(log_dir: Path, game_id: int, seat: int | None) -> str:
    """The end of the hosted bot's log of smoke game `game_id` (its seat `seat`, or the last
    seat there is a log of): NAME-gameID-seatS.log, named by Host.play."""
    found = sorted(log_dir.glob(f"*-game{game_id}-seat{seat if seat else '*'}.log"))
    return log_tail(found[-1]) if found else ""
