"""The package build: a package's `build` command run once, in the sandbox (no network), on a
copy of the package in a capped space in memory; what it leaves in /bot, unpacked safely
(maag.server.sandbox.archive), becomes the package the games run."""

from __future__ import annotations

import asyncio
import dataclasses
import io
import logging
import os
import shutil
from pathlib import Path

from maag.server.hosting.options import HostedBot, HostOptions, safe_name, sandbox_path
from maag.server.printable import printable
from maag.server.sandbox import cgroups
from maag.server.sandbox.archive import unpack_tar
from maag.server.sandbox.jail import Jail, JailConfig
from maag.server.sandbox.package import PackageError

__all__ = ["build", "BUILD_SPACE"]

LOG = logging.getLogger(__name__)

BUILD_SPACE = 500 * 1000**2
"""Bytes a package's build may occupy (its source included): /bot is a space in memory this big."""


async def build(bot: HostedBot, options: HostOptions, cg: cgroups.Cgroups | None, log_dir: Path) -> None:
    """Run the package's `build` command once, in the sandbox (no network), on a copy of the
    package in a capped space in memory; what it leaves in /bot becomes the package the games
    run. Its output goes to `log_dir/NAME-build.log`. RuntimeError (with the log's tail) if
    it fails or runs out of its time (`limits.build_s`)."""
    pkg = bot.package
    if pkg is None or not pkg.build:
        return
    read_fd, write_fd = os.pipe()
    # Hard links are written as the files they name: the host refuses hard links in an archive.
    script = (f'cp -R /src/. /bot/ && {{ {pkg.build} ; }} && '
              f'tar --hard-dereference -C /bot -cf /proc/self/fd/{write_fd} .')
    env = {"PATH": sandbox_path(), "HOME": "/scratch", "TMPDIR": "/scratch", "LANG": "C.UTF-8",
           "PYTHONPATH": "/opt/maag/sdk", "MAAG_BOT": bot.name, "MAAG_BUILD": "1"}
    log_path = log_dir / f"{safe_name(bot.name)}-build.log"
    limits = dataclasses.replace(options.limits, log=max(options.limits.log, 4 * 1000**2))
    jail = Jail(JailConfig(["/bin/sh", "-c", script], bot.folder, env, limits, threads=max(1, bot.threads),
                           extra_fds=[write_fd], build_space=BUILD_SPACE), cg, log_path)
    if jail.slot.uid is not None:  # the sandbox's user opens the pipe by its /proc path
        os.fchown(write_fd, jail.slot.uid, -1)
    data = bytearray()
    loop = asyncio.get_running_loop()

    def drain() -> None:  # the built tree, read as the build writes it (capped)
        with os.fdopen(read_fd, "rb") as f:
            while chunk := f.read(1 << 16):
                if len(data) <= BUILD_SPACE:
                    data.extend(chunk)

    reader = loop.run_in_executor(None, drain)
    try:
        await jail.start()
        os.close(write_fd)
        write_fd = -1
        rc = await jail.wait(options.limits.build_s)
        if rc is None:
            raise RuntimeError(f"{bot.name}: the build ran over its {options.limits.build_s:g} s; "
                               f"its log {log_path} ends with:\n{printable(jail.log_tail())}")
    finally:
        if write_fd >= 0:
            os.close(write_fd)
        await jail.close()
        await reader
    if rc != 0:
        v = jail.verdict()
        raise RuntimeError(f"{bot.name}: the build failed ({v.detail if v else f'exit code {rc}'}); "
                           f"its log {log_path} ends with:\n{printable(jail.log_tail())}")
    built = bot.folder.parent / "built"
    try:
        # Made here (0755), every file 0755 or 0644, no link followed (maag.server.sandbox.archive).
        unpack_tar(io.BytesIO(data), built, max_bytes=BUILD_SPACE, what=f"{bot.name}'s build")
    except PackageError as e:
        raise RuntimeError(f"{bot.name}: the build's result is refused: {e}") from None
    shutil.rmtree(bot.folder)
    bot.folder = built
    LOG.info("%s: built (%d bytes); log %s", bot.name, len(data), log_path)
