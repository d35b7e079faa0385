"""Writing a tree below an open descriptor of its top folder, never following a link (for
archive.py): every path component opened O_NOFOLLOW|O_DIRECTORY relative to its parent's
descriptor, every file created O_CREAT|O_EXCL|O_NOFOLLOW, so a link that appears in the tree
(from the archive, or meanwhile) can never redirect a write."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from typing import IO

__all__ = ["DIR_FLAGS", "Broken", "Member", "Writer"]

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
WRITE_CHUNK = (1 << 16) // 4
"""Bytes read from a member's data and written in one go: well under the 64 KiB archive.py
lets one read ask of the archive."""


@dataclass(frozen=True, slots=True)
class Member:
    name: str                # as in the archive, for messages
    kind: str                # "file", "dir" or "link"
    size: int = 0
    mode: int = 0
    link: str = ""
    mtime: float | None = None



class Broken(Exception):
    """A member's data is not what its header says."""


class Writer:
    """Writes below the destination's descriptor only: every component opened O_NOFOLLOW."""

    def __init__(self, root_fd: int) -> None:
        self.root_fd = root_fd
        self._cached: tuple[tuple[str, ...], int] | None = None  # the last folder opened

    def _dir(self, parts: tuple[str, ...]) -> int:
        if not parts:
            return self.root_fd
        if self._cached is not None and self._cached[0] == parts:
            return self._cached[1]
        fd = self.root_fd
        try:
            for p in parts:
                nxt = os.open(p, DIR_FLAGS, dir_fd=fd)
                if fd != self.root_fd:
                    os.close(fd)
                fd = nxt
        except BaseException:
            if fd != self.root_fd:
                os.close(fd)
            raise
        self.close()
        self._cached = (parts, fd)
        return fd

    def close(self) -> None:
        if self._cached is not None:
            os.close(self._cached[1])
            self._cached = None

    def mkdir(self, parts: tuple[str, ...]) -> None:
        parent = self._dir(parts[:-1])
        os.mkdir(parts[-1], 0o700, dir_fd=parent)
        fd = os.open(parts[-1], DIR_FLAGS, dir_fd=parent)
        try:
            os.fchmod(fd, 0o755)  # whatever the umask
        finally:
            os.close(fd)

    def file(self, parts: tuple[str, ...], m: Member, data: IO[bytes]) -> None:
        parent = self._dir(parts[:-1])
        fd = os.open(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                     dir_fd=parent)
        try:
            left = m.size
            while left > 0:
                chunk = data.read(min(left, WRITE_CHUNK))
                if not chunk:
                    raise Broken("the archive ends inside it")
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fd, view):]
                left -= len(chunk)
            if data.read(1):
                raise Broken("more data than its header says")
            os.fchmod(fd, 0o755 if m.mode & 0o111 else 0o644)
            if m.mtime is not None:
                with contextlib.suppress(OSError, OverflowError, ValueError):
                    os.utime(fd, (m.mtime, m.mtime))
        finally:
            os.close(fd)

    def symlink(self, parts: tuple[str, ...], target: str) -> None:
        os.symlink(target, parts[-1], dir_fd=self._dir(parts[:-1]))
