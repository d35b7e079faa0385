"""A bot package: a folder (or a .tar.gz / .zip of one) holding a participant's bot and its
manifest `maag-bot.toml`. The manifest says how to run the bot and what it needs:

    name = "my-bot"              # letters, digits, - _ . (at most 64)
    run = "python3 bot.py"       # started in the package folder, inside the sandbox
    build = "make"               # optional: run once, in the sandbox, before any game
    threads = 1                  # the cores the bot may use while it thinks (default 1)
    notes = "..."                # optional, shown to the host

An archive is unpacked into a fresh folder of the host's with every member checked first:
no absolute paths, no `..`, no links pointing outside the package, no device files, no
more than `max_bytes` unpacked. A broken manifest is refused with its line and the reason.
"""

from __future__ import annotations

import os
import re
import shlex
import stat
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

__all__ = ["BotPackage", "PackageError", "MANIFEST", "is_package"]

MANIFEST = "maag-bot.toml"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")  # the whole name (fullmatch: no "\n" after it)
_KEYS = {"name", "run", "build", "threads", "notes"}
DEFAULT_MAX_BYTES = 200 * 1024 * 1024


class PackageError(ValueError):
    """A package that cannot be used: what is wrong, and where (file and line when known)."""


def is_package(spec: str) -> bool:
    """Does `spec` (a bot given on the command line) name a package: an existing folder with
    a manifest, or an existing .tar.gz / .tgz / .zip file?"""
    if any(ch.isspace() for ch in spec.strip()):
        return False
    p = Path(spec).expanduser()
    if p.is_dir():
        return (p / MANIFEST).is_file()
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
            entries = [e for e in dest.iterdir()]
            # An archive of a folder (pkg/maag-bot.toml) or of its contents (maag-bot.toml).
            root = entries[0] if len(entries) == 1 and entries[0].is_dir() else dest
            p = root
        if not p.is_dir():
            raise PackageError(f"{path}: no such folder or archive")
        return cls.from_folder(p)

    @classmethod
    def from_folder(cls, root: Path) -> BotPackage:
        manifest = root / MANIFEST
        if not manifest.is_file():
            raise PackageError(f"{root}: no {MANIFEST} in the package")
        text = manifest.read_text(encoding="utf-8", errors="replace")
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


def _member_ok(name: str, dest: Path) -> Path:
    pure = PurePosixPath(name)
    drive = bool(pure.parts) and ":" in pure.parts[0]
    if pure.is_absolute() or ".." in pure.parts or name.startswith("\\") or drive:
        raise PackageError(f"archive member {name!r}: a path outside the package")
    return dest / pure


def unpack(archive: Path, dest: Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
    """Unpack `archive` (.tar.gz, .tgz or .zip) into `dest`, refusing anything that could
    write outside it or is not a plain file, folder or link within the package."""
    total = 0
    name = archive.name
    if name.endswith((".tar.gz", ".tgz")):
        try:
            tf = tarfile.open(archive, "r:gz")
        except (tarfile.TarError, OSError) as e:
            raise PackageError(f"{archive}: not a readable .tar.gz: {e}") from None
        with tf:
            extract_tar(tf, dest, max_bytes=max_bytes, what=str(archive))
    elif name.endswith(".zip"):
        try:
            zf = zipfile.ZipFile(archive)
        except (zipfile.BadZipFile, OSError) as e:
            raise PackageError(f"{archive}: not a readable .zip: {e}") from None
        with zf:
            for info in zf.infolist():
                _member_ok(info.filename, dest)
                mode = info.external_attr >> 16
                if mode and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                    raise PackageError(f"archive member {info.filename!r}: not a plain file or folder")
                total += info.file_size
                if total > max_bytes:
                    raise PackageError(f"{archive}: more than {max_bytes} bytes unpacked")
            for info in zf.infolist():
                out = zf.extract(info, dest)
                mode = (info.external_attr >> 16) & 0o755
                if mode and not info.is_dir():
                    os.chmod(out, mode | 0o600)
    else:
        raise PackageError(f"{archive}: a package archive must be .tar.gz, .tgz or .zip")


def extract_tar(tf: tarfile.TarFile, dest: Path, *, max_bytes: int, what: str = "archive") -> None:
    """Extract `tf` into `dest` after checking every member (see `unpack`)."""
    total = 0
    members = tf.getmembers()
    for m in members:
        target = _member_ok(m.name, dest)
        if not (m.isfile() or m.isdir() or m.issym()):
            raise PackageError(f"archive member {m.name!r}: not a file, folder or symbolic link "
                               "(device files, fifos and hard links are refused)")
        if m.issym():
            link = PurePosixPath(m.linkname)
            resolved = os.path.normpath(os.path.join(os.path.dirname(m.name), m.linkname))
            if link.is_absolute() or resolved.startswith(".."):
                raise PackageError(f"archive member {m.name!r}: a link out of the package "
                                   f"({m.linkname!r})")
        total += max(0, m.size)
        if total > max_bytes:
            raise PackageError(f"{what}: more than {max_bytes} bytes unpacked")
        del target
    for m in members:
        m.mode = (m.mode & 0o755) | (0o700 if m.isdir() else 0o600)  # no setuid, owner-writable
        m.uid = m.gid = 0
        m.uname = m.gname = ""
    if _has_filter():
        tf.extractall(dest, members=members, filter="tar")
    else:  # Python < 3.11.4: the checks above are the filter
        tf.extractall(dest, members=members)


def _has_filter() -> bool:
    return hasattr(tarfile, "data_filter")
