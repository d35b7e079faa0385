"""Unpacking an archive a stranger made (a bot package, a build's result) without ever
following a link: safe by construction, not by checking paths as text.

Every folder and file is created relative to an open descriptor of its folder (`dir_fd=`),
each path component opened with O_NOFOLLOW|O_DIRECTORY and each file created with
O_CREAT|O_EXCL|O_NOFOLLOW, so a link in the archive (or one that appears meanwhile) can
never redirect a write. On top of that the archive's members must describe a plain tree:

- at most `max_members` members, `max_bytes` unpacked, names of at most MAX_PATH bytes and
  MAX_DEPTH folders; counted while the archive is read (a tar member by member, a zip from
  its central directory before anything else), never after loading it whole;
- no absolute path, no `..`, no member twice (a folder may be named again), no member
  below a file or a symbolic link ("passes through a link");
- plain files, folders and symbolic links only (hard links, devices and fifos are refused);
  a link's target is relative and stays inside the package, resolved first from the link's
  own folder as text and then through the package's own tree (a link through another link
  that leads out, e.g. `a -> .` and `b -> a/..`, is refused);
- modes: folders 0755, files 0755 or 0644 (executable or not), never setuid or setgid;
  owned by the user who unpacks.

An archive is read twice: once to check every member (nothing written), then to write it,
checking again as it goes; when anything is refused, whatever was written is removed.
Nothing here depends on tarfile's extraction filters (Python 3.10 and later alike). The
writing itself, through descriptors, is fdwrite.py's.
"""

from __future__ import annotations

import contextlib
import gzip
import os
import re
import stat
import struct
import tarfile
import time
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager as ContextManager
from pathlib import Path
from typing import IO, Any

from maag.server.sandbox.fdwrite import DIR_FLAGS, Broken, Member, Writer

__all__ = ["PackageError", "unpack", "unpack_tar", "MAX_MEMBERS", "MAX_PATH", "MAX_DEPTH",
           "DEFAULT_MAX_BYTES"]

MAX_MEMBERS = 10_000
"""Members (files, folders and links) an archive may hold."""
MAX_PATH = 1024
"""Bytes of a member's name, or of a link's target."""
MAX_DEPTH = 64
"""Folders a member may be below the package's top."""
DEFAULT_MAX_BYTES = 200 * 1024 * 1024
"""Bytes a package may hold unpacked (its files' sizes added up)."""
_READ_CAP = 1 << 16
"""The most tarfile may ask of the archive in one read: its headers (a long name, a pax
header) are held whole in memory, so one of a gigabyte would be a gigabyte."""
_HEADER_BYTES = 2048
"""Header bytes allowed per member (a header block, a pax header with a long name)."""
_LINK_HOPS = 40  # as the kernel: more links in one resolution is ELOOP


class PackageError(ValueError):
    """A package that cannot be used: what is wrong, and where (file and line when known)."""


def _show(name: str) -> str:
    """A member's name for a message: quoted, and cut short when it is very long."""
    return repr(name) if len(name) <= 120 else repr(name[:60]) + "..." + repr(name[-40:])


def _parts(what: str, name: str) -> tuple[str, ...]:
    """The member's path as components below the destination, or PackageError."""
    first = name.split("/", 1)[0]
    if name.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", first) or ".." in name.split("/"):
        raise PackageError(f"{what}: archive member {_show(name)}: a path outside the package")
    if len(os.fsencode(name)) > MAX_PATH:
        raise PackageError(f"{what}: archive member {_show(name)}: a name longer than {MAX_PATH} bytes")
    parts = tuple(p for p in name.split("/") if p not in ("", "."))
    if len(parts) > MAX_DEPTH:
        raise PackageError(f"{what}: archive member {_show(name)}: more than {MAX_DEPTH} folders deep")
    if any("\0" in p for p in parts):
        raise PackageError(f"{what}: archive member {_show(name)}: a NUL in its name")
    return parts



class _Tree:
    """What the archive has put where so far, and the rules each member must pass; with a
    writer, each member is written as soon as it passed them."""

    def __init__(self, what: str, max_members: int, max_bytes: int, writer: Writer | None) -> None:
        self.what, self.max_members, self.max_bytes, self.writer = what, max_members, max_bytes, writer
        self.kinds: dict[tuple[str, ...], str] = {}
        self.links: dict[tuple[str, ...], str] = {}
        self.members = 0
        self.total = 0

    def refuse(self, m: Member, why: str) -> PackageError:
        return PackageError(f"{self.what}: archive member {_show(m.name)}: {why}")

    def count(self) -> None:
        """One more member read (called before its kind or size is looked at)."""
        self.members += 1
        if self.members > self.max_members:
            raise PackageError(f"{self.what}: more than {self.max_members} members (files, folders and "
                               "links); a package may hold at most that many")

    def add(self, m: Member, data: Callable[[], IO[bytes]] | None = None) -> None:
        parts = _parts(self.what, m.name)
        if not parts:
            return  # the top folder itself ("./"): it stays as it is
        # Every folder above the member: a folder already, or made now; never a file or a link.
        for i in range(1, len(parts)):
            up = parts[:i]
            kind = self.kinds.get(up)
            if kind == "link":
                raise self.refuse(m, f"passes through a link ({_show('/'.join(up))})")
            if kind == "file":
                raise self.refuse(m, f"passes through a file ({_show('/'.join(up))})")
            if kind is None:
                self.kinds[up] = "dir"
                if self.writer is not None:
                    try:
                        self.writer.mkdir(up)
                    except OSError as e:
                        raise self.refuse(m, f"cannot make its folder {'/'.join(up)!r}: {e}") from None
        had = self.kinds.get(parts)
        if had is not None:
            if had == "dir" and m.kind == "dir":
                return  # a folder named twice (or after its contents): nothing to do
            raise self.refuse(m, f"appears twice (already a {had} there)")
        if m.kind == "file":
            self.total += max(0, m.size)
            if self.total > self.max_bytes:
                raise PackageError(f"{self.what}: more than {self.max_bytes} bytes unpacked")
        elif m.kind == "link":
            self._check_link(m, parts)
        self.kinds[parts] = m.kind
        if self.writer is None:
            return
        try:
            if m.kind == "dir":
                self.writer.mkdir(parts)
            elif m.kind == "file":
                assert data is not None
                with data() as f:
                    self.writer.file(parts, m, f)
            else:
                self.writer.symlink(parts, m.link)
        except (OSError, Broken) as e:  # ELOOP, ENOTDIR, EEXIST: only if the tree changed under us; ENOSPC
            raise self.refuse(m, f"cannot unpack it: {e}") from None

    def _check_link(self, m: Member, parts: tuple[str, ...]) -> None:
        target = m.link
        if not target or target.startswith("/") or len(os.fsencode(target)) > MAX_PATH or "\0" in target:
            raise self.refuse(m, f"a link out of the package ({_show(target)}): a link's target must be a "
                                 "relative path inside it")
        where = list(parts[:-1])
        for c in target.split("/"):
            if c == "..":
                if not where:
                    raise self.refuse(m, f"a link out of the package ({_show(target)})")
                where.pop()
            elif c not in ("", "."):
                where.append(c)
        self.links[parts] = target

    def check_links(self) -> None:
        """Every link, resolved as the kernel would through the whole tree (links in its
        target followed), stays inside: `a -> .` and `b -> a/..` is a link out."""
        for parts, target in self.links.items():
            if self._escapes(list(parts[:-1]), target):
                raise PackageError(f"{self.what}: archive member {_show('/'.join(parts))}: a link out of the "
                                   f"package through another link ({_show(target)})")

    def _escapes(self, where: list[str], target: str) -> bool:
        todo = [c for c in target.split("/") if c not in ("", ".")]
        hops = 0
        while todo:
            c = todo.pop(0)
            if c == "..":
                if not where:
                    return True
                where.pop()
                continue
            here = (*where, c)
            kind = self.kinds.get(here)
            if kind == "link":
                hops += 1
                if hops > _LINK_HOPS:
                    return False  # the kernel gives up (ELOOP): it leads nowhere
                todo = [x for x in self.links[here].split("/") if x not in ("", ".")] + todo
            elif kind == "dir":
                where.append(c)
            else:
                return False  # a file or nothing: resolution ends here, inside (or fails)
        return False


# -- tar -----------------------------------------------------------------------------------------

class _Capped:
    """The archive's byte stream as tarfile reads it, with no single read larger than
    _READ_CAP and no more than `budget` bytes read in all."""

    def __init__(self, raw: IO[bytes], what: str, budget: int) -> None:
        self.raw, self.what, self.budget = raw, what, budget

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0 or n > _READ_CAP:
            raise PackageError(f"{self.what}: a header larger than {_READ_CAP} bytes")
        self.budget -= n
        if self.budget < 0:
            raise PackageError(f"{self.what}: more header data than its members need")
        return self.raw.read(n)

    def seek(self, pos: int, whence: int = 0) -> int:
        return self.raw.seek(pos, whence)

    def tell(self) -> int:
        return self.raw.tell()


def _tar_members(tf: tarfile.TarFile, tree: _Tree) -> Iterator[tuple[tarfile.TarInfo, Member]]:
    for ti in tf:  # one header at a time (getmembers() would load a million of them)
        tree.count()
        if ti.isreg():
            kind = "file"
        elif ti.isdir():
            kind = "dir"
        elif ti.issym():
            kind = "link"
        else:
            what = ("a hard link" if ti.islnk() else "a device file" if ti.isdev() and not ti.isfifo()
                    else "a fifo" if ti.isfifo() else f"of type {ti.type!r}")
            raise PackageError(f"{tree.what}: archive member {_show(ti.name)}: not a file, folder or "
                               f"symbolic link ({what}; device files, fifos and hard links are refused)")
        yield ti, Member(ti.name, kind, ti.size if kind == "file" else 0, ti.mode, ti.linkname, ti.mtime)


def _tar_data(tf: tarfile.TarFile, ti: tarfile.TarInfo) -> Callable[[], IO[bytes]]:
    def data() -> IO[bytes]:
        f = tf.extractfile(ti)
        assert f is not None  # a regular file's
        return f
    return data


def _tar_pass(open_raw: Callable[[], ContextManager[IO[bytes]]], tree: _Tree, label: str) -> None:
    # Headers: a few blocks a member; data: only what the second pass writes.
    budget = _HEADER_BYTES * (tree.max_members + 1) + (tree.max_bytes if tree.writer else 0) + (1 << 20)
    with open_raw() as raw:
        try:
            capped: Any = _Capped(raw, tree.what, budget)
            with tarfile.TarFile(fileobj=capped, mode="r") as tf:
                for ti, m in _tar_members(tf, tree):
                    tree.add(m, _tar_data(tf, ti) if m.kind == "file" else None)
        except PackageError:
            raise
        except (tarfile.TarError, OSError, EOFError, zlib.error, RecursionError, UnicodeError) as e:
            raise PackageError(f"{tree.what}: not a readable {label}: {e}") from None


# -- zip -----------------------------------------------------------------------------------------

_EOCD = struct.Struct("<4s4H2LH")
_ZIP64_LOCATOR = struct.Struct("<4sLQL")
_ZIP64_EOCD = struct.Struct("<4sQ2H2L4Q")
_CENTRAL = struct.Struct("<4s6H3L5H2L")


def _zip_count(f: IO[bytes], what: str, max_members: int) -> None:
    """Count the central directory's entries the way zipfile will find them (the bytes the
    end record points at), without loading them: PackageError past `max_members`."""
    f.seek(0, os.SEEK_END)
    size = f.tell()
    f.seek(max(0, size - (1 << 16) - _EOCD.size))
    tail = f.read()
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) - at < _EOCD.size:
        return  # not a zip: zipfile says so
    eocd_pos = size - len(tail) + at
    *_, cd_size, _cd_offset, _comment = _EOCD.unpack_from(tail, at)
    start = eocd_pos - cd_size
    if at >= _ZIP64_LOCATOR.size and tail[at - _ZIP64_LOCATOR.size:at].startswith(b"PK\x06\x07"):
        rec_pos = eocd_pos - _ZIP64_LOCATOR.size - _ZIP64_EOCD.size
        f.seek(max(0, rec_pos))
        rec = f.read(_ZIP64_EOCD.size)
        if len(rec) == _ZIP64_EOCD.size and rec.startswith(b"PK\x06\x06"):
            cd_size = _ZIP64_EOCD.unpack(rec)[8]
            start = rec_pos - cd_size
    if start < 0:
        return
    f.seek(start)
    n = 0
    read = 0
    while read + _CENTRAL.size <= cd_size:
        head = f.read(_CENTRAL.size)
        if len(head) < _CENTRAL.size or not head.startswith(b"PK\x01\x02"):
            return  # zipfile will call it broken
        n += 1
        if n > max_members:
            raise PackageError(f"{what}: more than {max_members} members (files, folders and links); "
                               "a package may hold at most that many")
        fields = _CENTRAL.unpack(head)
        skip = fields[10] + fields[11] + fields[12]  # name, extra, comment
        f.seek(skip, os.SEEK_CUR)
        read += _CENTRAL.size + skip


def _zip_member(info: zipfile.ZipInfo, tree: _Tree, zf: zipfile.ZipFile) -> Member:
    mode = (info.external_attr >> 16) if info.create_system == 3 else 0
    if info.is_dir() or stat.S_ISDIR(mode):
        return Member(info.filename, "dir")
    mtime = None
    with contextlib.suppress(ValueError, OverflowError):
        mtime = time.mktime((*info.date_time, 0, 0, -1))
    if stat.S_ISLNK(mode):
        if info.file_size > MAX_PATH:
            raise PackageError(f"{tree.what}: archive member {_show(info.filename)}: a link's target longer "
                               f"than {MAX_PATH} bytes")
        with zf.open(info) as f:
            target = os.fsdecode(f.read(MAX_PATH + 1))
        return Member(info.filename, "link", link=target)
    if stat.S_IFMT(mode) and not stat.S_ISREG(mode):  # no type at all (zipfile's writestr): a file
        raise PackageError(f"{tree.what}: archive member {_show(info.filename)}: not a plain file, folder or "
                           "symbolic link (device files and fifos are refused)")
    return Member(info.filename, "file", info.file_size, mode, mtime=mtime)


def _zip_data(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> Callable[[], IO[bytes]]:
    return lambda: zf.open(info)


def _zip_pass(path: Path, tree: _Tree) -> None:
    with open(path, "rb") as f:
        _zip_count(f, tree.what, tree.max_members)
        try:
            with zipfile.ZipFile(f) as zf:
                for info in zf.infolist():
                    tree.count()
                    m = _zip_member(info, tree, zf)
                    tree.add(m, _zip_data(zf, info) if m.kind == "file" else None)
        except PackageError:
            raise
        except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as e:
            raise PackageError(f"{tree.what}: not a readable .zip: {e}") from None
        except RuntimeError as e:  # an encrypted member
            raise PackageError(f"{tree.what}: cannot unpack it: {e}") from None
        except OSError as e:
            raise PackageError(f"{tree.what}: cannot unpack it: {e}") from None


# -- the destination -----------------------------------------------------------------------------

def _into(dest: Path, what: str, max_members: int, max_bytes: int,
          one_pass: Callable[[_Tree], None]) -> None:
    """Check (one pass, nothing written), then write (a second pass, checked again) into
    `dest`: an empty folder, or one made now (mode 0755). On any refusal, what was written
    is removed (and `dest` too when it was made here)."""
    check = _Tree(what, max_members, max_bytes, None)
    one_pass(check)
    check.check_links()
    made = False
    try:
        os.mkdir(dest, 0o700)
        made = True
    except FileExistsError:
        pass
    root_fd = os.open(dest, DIR_FLAGS)
    writer = Writer(root_fd)
    try:
        if not made and os.listdir(root_fd):
            raise ValueError(f"{dest}: not an empty folder")
        tree = _Tree(what, max_members, max_bytes, writer)
        try:
            one_pass(tree)
            tree.check_links()
        except OSError as e:
            raise PackageError(f"{what}: cannot unpack it: {e}") from None
        if made:
            os.fchmod(root_fd, 0o755)
    except BaseException:
        writer.close()
        _empty(root_fd)
        os.close(root_fd)
        if made:
            os.rmdir(dest)
        raise
    writer.close()
    os.close(root_fd)


def _empty(dir_fd: int) -> None:
    """Remove everything below `dir_fd` (links removed, never followed)."""
    for entry in os.scandir(dir_fd):
        if entry.is_dir(follow_symlinks=False):
            fd = os.open(entry.name, DIR_FLAGS, dir_fd=dir_fd)
            try:
                _empty(fd)
            finally:
                os.close(fd)
            os.rmdir(entry.name, dir_fd=dir_fd)
        else:
            os.unlink(entry.name, dir_fd=dir_fd)


def unpack(archive: Path, dest: Path, *, max_bytes: int = DEFAULT_MAX_BYTES,
           max_members: int = MAX_MEMBERS) -> None:
    """Unpack `archive` (.tar.gz, .tgz or .zip, by its name) into `dest` (an empty folder,
    or made now) as the module says; PackageError naming the archive and the reason."""
    name = archive.name
    what = str(archive)
    if name.endswith((".tar.gz", ".tgz")):
        def gz() -> ContextManager[IO[bytes]]:
            try:
                f = open(archive, "rb")  # noqa: SIM115 (closed with the GzipFile by the pass)
            except OSError as e:
                raise PackageError(f"{what}: not a readable .tar.gz: {e}") from None
            return _Closing(gzip.GzipFile(fileobj=f, mode="rb"), f)

        _into(dest, what, max_members, max_bytes, lambda tree: _tar_pass(gz, tree, ".tar.gz"))
    elif name.endswith(".zip"):
        _into(dest, what, max_members, max_bytes, lambda tree: _zip_pass(archive, tree))
    else:
        raise PackageError(f"{archive}: a package archive must be .tar.gz, .tgz or .zip")


def unpack_tar(stream: IO[bytes], dest: Path, *, max_bytes: int = DEFAULT_MAX_BYTES,
               max_members: int = MAX_MEMBERS, what: str = "archive") -> None:
    """Unpack a plain (uncompressed) tar held in `stream` (seekable: it is read twice, from
    where it stands) into `dest`, as `unpack` does."""
    start = stream.tell()

    def again() -> ContextManager[IO[bytes]]:
        stream.seek(start)
        return contextlib.nullcontext(stream)

    _into(dest, what, max_members, max_bytes, lambda tree: _tar_pass(again, tree, "tar archive"))


class _Closing:
    """A GzipFile that closes the file under it too."""

    def __init__(self, gz: gzip.GzipFile, f: IO[bytes]) -> None:
        self.gz, self.f = gz, f

    def __enter__(self) -> IO[bytes]:
        return self.gz  # type: ignore[return-value]

    def __exit__(self, *exc: object) -> None:
        self.gz.close()
        self.f.close()


