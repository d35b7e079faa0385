"""Submissions: a participant's bot package becomes a version of their bot, is built once in
the sandbox, validated in the sandbox (the bot kit's scripted situations, then smoke games
against random and against itself), and only then becomes the bot's active
version, which tournaments (`--bot NAME`, `--bot NAME@VERSION`) and the hosted ladder play.

    submit()   check the package (manifest, archive safety, size), store it (pending)
    process()  building -> validating -> active, or rejected with the reason and the report
               (the kit's situations, each smoke game with its verdict and replay id)

The build's log and the validation report (each smoke game with its verdict and replay id)
are kept with the version. A package is fetched from the database by its SHA-256 and
unpacked once per machine into a cache folder (`$MAAG_PACKAGE_CACHE`, default
~/.cache/maag/packages), so a Dask worker on another machine runs exactly what was stored.
"""

from __future__ import annotations

import asyncio
import io
import logging
import os
import shutil
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from maag.server.compete.hosting import (
    STORED_PREFIX,
    HostedBot,
    HostOptions,
    build,
    check_threads,
    launch_relayed,
    safe_name,
)
from maag.server.kit.check import run_check
from maag.server.sandbox import cgroups
from maag.server.sandbox.jail import stage_package
from maag.server.sandbox.package import (
    MANIFEST,
    BotPackage,
    PackageError,
    is_package,
    package_root,
    unpack,
    write_manifest,
)
from maag.server.storage.submissions import SubmissionStore, Version, sha256_of

__all__ = ["submit", "process", "process_pending", "materialize", "resolve_bot", "PACKAGE_PREFIX",
           "DEFAULT_MAX_UPLOAD", "SubmissionRejected"]

LOG = logging.getLogger(__name__)
DEFAULT_MAX_UPLOAD = 50 * 1000**2
PACKAGE_PREFIX = STORED_PREFIX
"""A bot given as a stored package: `package:sha256:HEX` (fetched from the database by hash)."""
SMOKE_GAMES = 2


class SubmissionRejected(ValueError):
    """A package refused at upload (what is wrong with it, for the uploader)."""


def pack(path: Path, max_bytes: int = DEFAULT_MAX_UPLOAD,
         options: HostOptions | None = None) -> tuple[bytes, BotPackage]:
    """The package at `path` (a folder or an archive) as archive bytes, after every check of
    BotPackage.load (and, given the host's `options`, that it asks for no more cores than
    they grant); SubmissionRejected saying why not."""
    data, pkg = _pack(path, max_bytes)
    if options is not None:
        try:
            check_threads(pkg, options, str(path))
        except PackageError as e:
            raise SubmissionRejected(str(e)) from None
    return data, pkg


def _pack(path: Path, max_bytes: int) -> tuple[bytes, BotPackage]:
    if not is_package(str(path)):
        raise SubmissionRejected(f"{path}: not a bot package (a folder with {MANIFEST}, "
                                 "or a .tar.gz/.tgz/.zip)")
    if path.is_file():
        if path.stat().st_size > max_bytes:
            size = path.stat().st_size
            raise SubmissionRejected(f"{path}: {size} bytes, more than the limit of {max_bytes}")
        data = path.read_bytes()
        return data, _check_archive(data, path.name, max_bytes)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        tf.add(path, arcname="bot", filter=lambda ti: None if ti.isdev() or ti.isfifo() else ti)
    data = buf.getvalue()
    if len(data) > max_bytes:
        raise SubmissionRejected(f"{path}: {len(data)} bytes packed, more than the limit of {max_bytes}")
    return data, _check_archive(data, "bot.tar.gz", max_bytes)


def _check_archive(data: bytes, name: str, max_bytes: int) -> BotPackage:
    with tempfile.TemporaryDirectory(prefix="maag-upload-") as tmp:
        p = Path(tmp) / (name if name.endswith((".tar.gz", ".tgz", ".zip")) else "bot.tar.gz")
        p.write_bytes(data)
        try:
            return BotPackage.load(p, unpack_to=Path(tmp), max_bytes=4 * max_bytes)
        except PackageError as e:
            raise SubmissionRejected(str(e).replace(tmp, "")) from None


def submit(store: SubmissionStore, bot: str, data: bytes, pkg: BotPackage) -> Version:
    """Store `data` (checked by `pack`) as a new pending version of `bot`."""
    manifest = {"name": pkg.name, "run": pkg.run, "build": pkg.build, "threads": pkg.threads,
                "notes": pkg.notes}
    v = store.add(bot, data, manifest)
    LOG.info("%s: version %d stored (%d bytes, sha256 %s)", bot, v.version, v.size, v.sha256[:12])
    return v


def cache_dir() -> Path:
    return Path(os.environ.get("MAAG_PACKAGE_CACHE") or Path.home() / ".cache" / "maag" / "packages")


def materialize(store: SubmissionStore, digest: str) -> Path:
    """The folder of stored package `digest`, unpacked once into the cache (checked against
    its hash); KeyError if the database does not hold it."""
    # "v2": trees unpacked by maag.server.sandbox.archive; those an older maag unpacked with
    # tarfile (which let a link through another link out) are never used again.
    target = cache_dir() / "v2" / digest
    if (target / "ready").exists():
        return _root(target / "tree")
    data = store.package(digest)
    if data is None:
        raise KeyError(f"no stored package {digest}")
    if sha256_of(data) != digest:
        raise ValueError(f"stored package {digest} does not match its hash")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{digest[:12]}-", dir=target.parent))
    arch = tmp / "p.zip" if data[:2] == b"PK" else tmp / "p.tar.gz"
    arch.write_bytes(data)
    unpack(arch, tmp / "tree")  # made there; no link followed
    arch.unlink()
    (tmp / "ready").write_text(digest)
    try:
        os.rename(tmp, target)
    except OSError:  # another process got there first
        shutil.rmtree(tmp, ignore_errors=True)
    return _root(target / "tree")


def resolve_bot(store: SubmissionStore, text: str) -> tuple[str, str] | None:
    """A participant written NAME or NAME@VERSION, when it names a submitted bot: (its label
    NAME@VERSION, the spec that runs it: `package:sha256:HEX` of what the games run). NAME
    alone is the bot's active version. None when nothing submitted has that name (a bundled
    agent); ValueError for a version that does not exist or cannot play."""
    name, sep, ver = text.partition("@")
    if sep and not ver.isdigit():
        raise ValueError(f"{text!r}: a version is a number (NAME@3)")
    if sep:
        v = store.get(name, int(ver))
        if v is None:
            raise ValueError(f"{text!r}: no such version")
        if v.status not in ("active", "retired"):
            raise ValueError(f"{text!r} is {v.status}{': ' + v.reason if v.reason else ''}; only active and "
                             "retired versions play")
    else:
        v = store.get(name)
        if v is None:
            if store.versions(name):
                raise ValueError(f"{name!r} has no active version (`maag bot versions {name}`)")
            return None
    return v.label, PACKAGE_PREFIX + v.run_sha256


def _root(tree: Path) -> Path:
    return package_root(tree)


def _manifest_text(pkg: BotPackage) -> str:
    """The manifest of a built package: what it runs, without its build command."""
    def q(s: str) -> str:
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'

    lines = [f"name = {q(pkg.name)}", f"run = {q(pkg.run)}", f"threads = {pkg.threads}"]
    if pkg.notes:
        lines.append(f"notes = {q(pkg.notes)}")
    return "\n".join(lines) + "\n"


async def process(store: SubmissionStore, db_url: str, v: Version, *, game: str, game_config: dict[str, Any],
                  tc: str, options: HostOptions, log_dir: Path) -> Version:
    """Build and validate version `v` (pending); returns it as stored afterwards (active or
    rejected, with its reason, build log and report)."""
    from maag.server.compete.match import run_match
    from maag.server.net.server import ServerConfig
    from maag.server.referee.clock import TimeControl
    from maag.server.storage.base import open_storage

    if not store.move(v.bot, v.version, ("pending",), "building"):
        raise RuntimeError(f"{v.label} is not pending")
    log_dir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="maag-process-"))
    try:
        src = materialize(store, v.sha256)
        pkg = BotPackage.from_folder(src)
        try:
            check_threads(pkg, options, v.label)
        except PackageError as e:
            store.move(v.bot, v.version, ("building",), "rejected", reason=str(e))
            return _get(store, v)
        built_bytes = None
        build_log = ""
        if pkg.build:
            stage = work / "stage"
            stage.mkdir()
            hb = HostedBot(v.bot, stage_package(pkg.root, stage), pkg.argv, pkg.threads, pkg)
            try:
                await build(hb, options, cgroups.detect(), log_dir)
                ok, why = True, ""
            except RuntimeError as e:
                ok, why = False, str(e)
            log_file = log_dir / f"{safe_name(v.bot)}-build.log"
            build_log = log_file.read_text(errors="replace")[-200_000:] if log_file.exists() else ""
            if not ok:
                store.move(v.bot, v.version, ("building",), "rejected", reason=f"build failed: {why[:2000]}",
                           build_log=build_log)
                return _get(store, v)
            # A fresh file renamed over the built one: a manifest the build left as a link is
            # replaced, never written through.
            write_manifest(hb.folder, _manifest_text(pkg))
            buf = io.BytesIO()
            with tarfile.open(fileobj=buf, mode="w:gz") as tf:
                tf.add(hb.folder, arcname="bot")
            built_bytes = buf.getvalue()
            run_dir = hb.folder
        else:
            run_dir = pkg.root
        store.move(v.bot, v.version, ("building",), "validating", build_log=build_log or None,
                   built=built_bytes)
        # The bot kit's scripted situations, the bot in its sandbox (relayed to the kit's referee).
        run_pkg = BotPackage.from_folder(run_dir)
        hb_run = HostedBot(v.bot, run_dir, run_pkg.argv, run_pkg.threads, run_pkg)
        cg = cgroups.detect()
        # The bot's output during the check, kept in the version's log folder (the kit's own
        # file is temporary): a rejected participant reads its own traceback.
        check_log = log_dir / f"{safe_name(v.bot)}-check.log"
        kit = await run_check([run_pkg.run], tc=tc, game=game, game_config=dict(game_config),
                              launch=lambda addr, tok, _path: launch_relayed(hb_run, options, cg, addr, tok,
                                                                             check_log, game))
        check = kit.to_json()
        if not kit.ok:
            failed = [s["name"] for s in check["situations"] if not s.get("ok", True)]
            why = "; ".join(kit.problems) or f"situations failed: {', '.join(failed)}"
            store.move(v.bot, v.version, ("validating",), "rejected",
                       reason=f"bot check failed: {why[:1500]}",
                       report={"check": check, "passed": False, "games": [],
                               "bot_output": {"stage": "maag bot check", "text": log_tail(check_log)}})
            return _get(store, v)
        # Smoke games in the sandbox, at the competition's time control: against random, then itself.
        cfg = ServerConfig(port=0, game=game, game_config=dict(game_config), tc=TimeControl.parse(tc),
                           auto_pair=False)
        games: list[dict[str, Any]] = []
        ok = True
        resigned = 0
        for opponent in ("random", str(run_dir)):
            storage = open_storage(db_url)
            res = await run_match(None, str(run_dir), opponent, SMOKE_GAMES, 1, config=cfg, storage=storage,
                                  match_id=f"validate:{v.label}", log_dir=log_dir, host_options=options)
            for _, g in res.games:
                verdict = g.verdict
                ours = [0, 1] if opponent != "random" else [i for i in (0, 1) if g.seats[i] == res.bots[0]]
                against_us = verdict is not None and verdict["seat"] - 1 in ours
                # A game it gave up: the Python SDK resigns for a bot whose code raised.
                gave_up = g.reason == "resign" and g.winner is not None and 1 - g.winner in ours
                resigned += gave_up
                ok = ok and not against_us and g.stored
                games.append({"opponent": "itself" if opponent != "random" else "random",
                              "game_id": g.game_id,
                              "seats": list(g.seats), "winner": g.winner, "reason": g.reason,
                              "verdict": verdict, "passed": not against_us,
                              "resigned": gave_up})
        report: dict[str, Any] = {
            "game": game, "tc": tc, "games": games, "passed": ok, "check": check,
            "checks": "maag bot check's situations, then smoke games in the sandbox: against random and "
                      "against itself"}
        if ok and games and resigned == len(games):
            # Every smoke game given up: a bot whose code fails on every turn (the SDK resigns
            # for it), not one that resigns a lost position now and then.
            ok = report["passed"] = False
            last = _game_log(log_dir, games[-1]["game_id"], None)
            report["bot_output"] = {"stage": f"smoke game {games[-1]['game_id']}", "text": last}
            lines = [x for x in last.splitlines() if x.strip()]
            store.move(v.bot, v.version, ("validating",), "rejected", report=report,
                       reason=f"validation failed: the bot resigned every smoke game ({resigned} of "
                              f"{len(games)})" + (f"; its log ends with: {lines[-1][:300]}" if lines else ""))
        elif ok:
            store.move(v.bot, v.version, ("validating",), "active", report=report)
        else:
            bad = next(g for g in games if not g["passed"])
            report["bot_output"] = {"stage": f"smoke game {bad['game_id']}",
                                    "text": _game_log(log_dir, bad["game_id"], bad["verdict"]["seat"])}
            store.move(v.bot, v.version, ("validating",), "rejected", report=report,
                       reason=f"validation failed: game {bad['game_id']} ({bad['opponent']}): "
                              f"{bad['verdict']['kind']}: {bad['verdict']['detail']}")
        return _get(store, v)
    except Exception as e:
        LOG.exception("%s: processing failed", v.label)
        store.move(v.bot, v.version, ("building", "validating"), "rejected",
                   reason=f"internal error while processing: {type(e).__name__}: {e}")
        return _get(store, v)
    finally:
        shutil.rmtree(work, ignore_errors=True)


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


def _get(store: SubmissionStore, v: Version) -> Version:
    got = store.get(v.bot, v.version)
    assert got is not None
    return got


async def process_pending(store: SubmissionStore, db_url: str, **kw: Any) -> list[Version]:
    """Recover versions left mid-step by a dead process, then process every pending one."""
    n = store.recover()
    if n:
        LOG.warning("%d version(s) left building or validating by a process that stopped: processed again", n)
    out = []
    for v in store.versions(status="pending"):
        out.append(await process(store, db_url, v, **kw))
        await asyncio.sleep(0)
    return out
