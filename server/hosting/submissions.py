"""Submissions: a participant's bot package becomes a version of their bot, is built once in
the sandbox, validated in the sandbox (the bot kit's scripted situations, then smoke games
against random and against itself), and only then becomes the bot's active
version, which tournaments (`--bot NAME`, `--bot NAME@VERSION`) and the hosted ladder play.

    submit()   check the package (manifest, archive safety, size), store it (pending)
    process()  building -> validating -> active, or rejected with the reason and the report
               (the kit's situations, each smoke game with its verdict and replay id)

The build's log and the validation report (each smoke game with its verdict and replay id)
are kept with the version. A package is checked and unpacked once per machine, into the
package store (maag.server.hosting.store): at upload, or when a machine that has not seen
it fetches it from the database by its SHA-256 (a Dask worker on another machine runs
exactly what was stored). The validation plays on one referee (maag.server.hosting.validator).
"""

from __future__ import annotations

import asyncio
import gzip
import io
import logging
import re
import shutil
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from maag.server.hosting.builder import build
from maag.server.hosting.host import Host
from maag.server.hosting.options import STORED_PREFIX, HostedBot, HostOptions, check_threads, safe_name
from maag.server.hosting.store import package_store
from maag.server.hosting.validator import validate
from maag.server.net.server import RefereeServer, ServerConfig
from maag.server.referee.clock import TimeControl
from maag.server.sandbox.jail import stage_package
from maag.server.sandbox.package import MANIFEST, BotPackage, PackageError, is_package, write_manifest
from maag.server.storage.base import open_storage
from maag.server.storage.submissions import SubmissionStore, Version, sha256_of

__all__ = ["pack", "submit", "process", "process_pending", "resolve_bot", "PACKAGE_PREFIX",
           "DEFAULT_MAX_UPLOAD", "SubmissionRejected"]

LOG = logging.getLogger(__name__)
DEFAULT_MAX_UPLOAD = 50 * 1000**2
PACKAGE_PREFIX = STORED_PREFIX
"""A bot given as a stored package: `package:sha256:HEX` (fetched from the database by hash)."""


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
    with tarfile.open(fileobj=buf, mode="w") as tf:
        tf.add(path, arcname="bot", filter=lambda ti: None if ti.isdev() or ti.isfifo() else ti)
    # Compressed without a time stamp: the same folder packs to the same bytes, the same
    # SHA-256, so the package store unpacks it once however often it is uploaded.
    data = gzip.compress(buf.getvalue(), mtime=0)
    if len(data) > max_bytes:
        raise SubmissionRejected(f"{path}: {len(data)} bytes packed, more than the limit of {max_bytes}")
    return data, _check_archive(data, "bot.tar.gz", max_bytes)


def _check_archive(data: bytes, name: str, max_bytes: int) -> BotPackage:
    # Checked where it will be run from: unpacked once, into the package store (nothing is
    # kept of an archive that cannot be unpacked safely).
    store = package_store()
    try:
        root = store.put(data, name=name, max_bytes=4 * max_bytes)
    except PackageError as e:
        raise SubmissionRejected(str(e)) from None
    try:
        return BotPackage.from_folder(root)
    except PackageError as e:
        store.discard(sha256_of(data))
        # Said of the package's own files, not of where the store keeps them.
        tree = re.escape(str(store.root)) + r"/[0-9a-f]{64}/tree/"
        raise SubmissionRejected(re.sub(tree, "", str(e))) from None


def submit(store: SubmissionStore, bot: str, data: bytes, pkg: BotPackage) -> Version:
    """Store `data` (checked by `pack`) as a new pending version of `bot`."""
    manifest = {"name": pkg.name, "run": pkg.run, "build": pkg.build, "threads": pkg.threads,
                "notes": pkg.notes}
    v = store.add(bot, data, manifest)
    LOG.info("%s: version %d stored (%d bytes, sha256 %s)", bot, v.version, v.size, v.sha256[:12])
    return v


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
    if not store.move(v.bot, v.version, ("pending",), "building"):
        raise RuntimeError(f"{v.label} is not pending")
    log_dir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="maag-process-"))
    try:
        pkg = BotPackage.from_folder(package_store().fetch(store, v.sha256))
        try:
            check_threads(pkg, options, v.label)
        except PackageError as e:
            store.move(v.bot, v.version, ("building",), "rejected", reason=str(e))
            return _get(store, v)
        # One referee for the whole validation (the kit's situations and the smoke games), at
        # the competition's time control, storing its games where the version's report points.
        cfg = ServerConfig(port=0, game=game, game_config=dict(game_config), tc=TimeControl.parse(tc),
                           auto_pair=False)
        server = RefereeServer(cfg, open_storage(db_url))
        await server.start()
        host = Host(server, options, log_dir=log_dir)
        try:
            return await _build_and_validate(store, v, pkg, host, game=game, game_config=game_config, tc=tc,
                                             work=work, log_dir=log_dir)
        finally:
            host.close()
            await server.stop()
    except Exception as e:
        LOG.exception("%s: processing failed", v.label)
        store.move(v.bot, v.version, ("building", "validating"), "rejected",
                   reason=f"internal error while processing: {type(e).__name__}: {e}")
        return _get(store, v)
    finally:
        shutil.rmtree(work, ignore_errors=True)


async def _build_and_validate(store: SubmissionStore, v: Version, pkg: BotPackage, host: Host, *, game: str,
                              game_config: dict[str, Any], tc: str, work: Path, log_dir: Path) -> Version:
    built_bytes = None
    build_log = ""
    run_dir = pkg.root
    if pkg.build:
        stage = work / "stage"
        stage.mkdir()
        hb = HostedBot(v.bot, stage_package(pkg.root, stage), pkg.argv, pkg.threads, pkg)
        try:
            await build(hb, host.options, host.cg, log_dir)
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
    store.move(v.bot, v.version, ("building",), "validating", build_log=build_log or None, built=built_bytes)
    run_pkg = BotPackage.from_folder(run_dir)
    found = await validate(host, HostedBot(v.bot, run_dir, run_pkg.argv, run_pkg.threads, run_pkg),
                           label=v.label, game=game, game_config=game_config, tc=tc, workdir=work,
                           log_dir=log_dir)
    if found.reason is None:
        store.move(v.bot, v.version, ("validating",), "active", report=found.report)
    else:
        store.move(v.bot, v.version, ("validating",), "rejected", report=found.report, reason=found.reason)
    return _get(store, v)


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
