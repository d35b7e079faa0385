"""A bot package: a folder (or a .tar.gz / .zip of one) holding a participant's bot and its
manifest `maag-bot.toml`. The manifest says how to run the bot and what it needs:

    name = "my-bot"              # letters, digits, - _ . (at most 64)
    run = "python3 bot.py"       # started in the package folder, inside the sandbox
    build = "make"               # optional: run once, in the sandbox, before any game
    threads = 1                  # the cores the bot may use while it thinks (default 1)
    notes = "..."                # optional, shown to the host

An archive is unpacked into a fresh folder of the host's by maag.server.sandbox.archive,
which never follows a link (every member checked first: no absolute paths, no `..`, no
links leading out of the package, no device files, no more than `max_bytes` unpacked or
MAX_MEMBERS members). Reading a package back never follows a link either: a manifest that
is a symbolic link is refused. A broken manifest is refused with its line and the reason.
"""

from __future__ import annotations

import os
import re
import secrets
import shlex
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from maag.server.sandbox.archive import DEFAULT_MAX_BYTES, PackageError, unpack

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

__all__ = ["BotPackage", "PackageError", "MANIFEST", "is_package", "unpack", "package_root", "write_manifest",
           "DEFAULT_MAX_BYTES"]

MANIFEST = "maag-bot.toml"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")  # the whole name (fullmatch: no "\n" after it)
_KEYS = {"name", "run", "build", "threads", "notes"}
MANIFEST_MAX_BYTES = 64 * 1024


def is_package(spec: str) -> bool:
    """Does `spec` (a bot given on the command line) name a package: an existing folder with
    a manifest, or an existing .tar.gz / .tgz / .zip file?"""
    if any(ch.isspace() for ch in spec.strip()):
        return False
    p = Path(spec).expanduser()
    if p.is_dir():
        return os.path.lexists(p / MANIFEST)  # a link too: BotPackage.load says why it is refused
    return p.is_file() and spec.endswith((".tar.gz", ".tgz", ".zip"))


@dataclass(frozen=True, slots=True)
class BotPackage:
    """A package ready to run: `root` is the folder holding the manifest."""

    root: Path
    name: str
    run: str
    build: str | None = None
    threads: int = 1
    notes: str = ""

    @property
    def argv(self) -> list[str]:
        """The run command as an argument list (it is never given to a shell of the host's)."""
        return shlex.split(self.run)

    def to_dict(self) -> dict[str, Any]:
        return {"root": str(self.root), "name": self.name, "run": self.run, "build": self.build,
                "threads": self.threads, "notes": self.notes}

    @classmethod
    def load(cls, path: str | os.PathLike[str], *, unpack_to: Path | None = None,
             max_bytes: int = DEFAULT_MAX_BYTES) -> BotPackage:
        """Read the package at `path` (a folder, or an archive unpacked under `unpack_to`,
        by default a new temporary folder). Raises PackageError saying what is wrong."""
        p = Path(path).expanduser()
        if p.is_file():
            dest = Path(tempfile.mkdtemp(prefix="maag-pkg-", dir=unpack_to))
            unpack(p, dest, max_bytes=max_bytes)
            p = package_root(dest)
        if not p.is_dir():
            raise PackageError(f"{path}: no such folder or archive")
        return cls.from_folder(p)

    @classmethod
    def from_folder(cls, root: Path) -> BotPackage:
        manifest = root / MANIFEST
        text = _read_manifest(manifest)
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise PackageError(f"{manifest}: {e}") from None

        def where(key: str) -> str:
            for i, line in enumerate(text.splitlines(), 1):
                # key = ..., "key" = ..., key.sub = ... or a table [key] / [[key]]
                if re.match(rf"""\s*(\[\[?\s*)?["']?{re.escape(key)}["']?\s*[=.\]]""", line):
                    return f"{manifest}:{i}"
            return str(manifest)

        unknown = sorted(set(data) - _KEYS)
        if unknown:
            raise PackageError(f"{where(unknown[0])}: unknown key {unknown[0]!r} (known: "
                               f"{', '.join(sorted(_KEYS))})")
        for key in ("name", "run"):
            if key not in data:
                raise PackageError(f"{manifest}: {key!r} is missing")
        for key in ("name", "run", "build", "notes"):
            if key in data and not isinstance(data[key], str):
                raise PackageError(f"{where(key)}: {key!r} must be a string")
        name = data["name"]
        if not _NAME.fullmatch(name):
            raise PackageError(f"{where('name')}: name {name!r} must be 1-64 letters, digits, "
                               "'-', '_' or '.'")
        for key in ("run", "build"):
            if key in data:
                try:
                    argv = shlex.split(data[key])
                except ValueError as e:
                    raise PackageError(f"{where(key)}: {key!r} is not a command line: {e}") from None
                if not argv:
                    raise PackageError(f"{where(key)}: {key!r} is empty")
        threads = data.get("threads", 1)
        if not isinstance(threads, int) or isinstance(threads, bool) or not 1 <= threads <= 256:
            raise PackageError(f"{where('threads')}: 'threads' must be a whole number from 1 to 256")
        return cls(root.resolve(), name, data["run"], data.get("build"), threads, data.get("notes", ""))


def package_root(tree: Path) -> Path:
    """The package's folder in an unpacked archive: an archive of a folder (pkg/maag-bot.toml)
    or of its contents (maag-bot.toml). A lone link is not a folder of the package's."""
    entries = list(tree.iterdir())
    if len(entries) == 1 and entries[0].is_dir() and not entries[0].is_symlink():
        return entries[0]
    return tree


def _read_manifest(manifest: Path) -> str:
    """The manifest's text, opened without following a link (a manifest that is one is refused)."""
    try:
        fd = os.open(manifest, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise PackageError(f"{manifest.parent}: no {MANIFEST} in the package") from None
    except OSError as e:
        if os.path.islink(manifest):
            raise PackageError(f"{manifest}: a symbolic link; the manifest must be a plain file") from None
        raise PackageError(f"{manifest}: cannot read it: {e.strerror}") from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise PackageError(f"{manifest}: not a plain file")
        data = f.read(MANIFEST_MAX_BYTES + 1)
    if len(data) > MANIFEST_MAX_BYTES:
        raise PackageError(f"{manifest}: larger than {MANIFEST_MAX_BYTES} bytes")
    return data.decode("utf-8", errors="replace")


def write_manifest(folder: Path, text: str) -> None:
    """Put `text` as `folder`'s manifest: written to a fresh file beside it, then renamed over
    it, so that a manifest that is a link is replaced, never written through."""
    dir_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        tmp = f".{MANIFEST}.{secrets.token_hex(6)}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644,
                     dir_fd=dir_fd)
        try:
            with os.fdopen(fd, "wb") as f:
                os.fchmod(fd, 0o644)
                f.write(text.encode("utf-8"))
            os.rename(tmp, MANIFEST, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            os.unlink(tmp, dir_fd=dir_fd)
            raise
    finally:
        os.close(dir_fd)
