"""The package store: every package a host runs (a match's or a tournament's archive, a
ladder's or a tournament's stored version, an upload) is kept once per machine under the
SHA-256 of its archive, checked and unpacked there once by maag.server.sandbox.archive
(which never follows a link), and read from there by every later way in.

The store is a folder (`$MAAG_PACKAGE_CACHE`, default ~/.cache/maag/packages): `v2/HEX/tree`
is the unpacked package, `v2/HEX/ready` says it is complete (a tree is renamed into place
whole, so a process that dies mid-unpack leaves nothing half made; two processes unpacking
the same package at once keep the first one's)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from maag.server.sandbox.package import DEFAULT_MAX_BYTES, PackageError, package_root, unpack
from maag.server.storage.submissions import SubmissionStore, sha256_of

__all__ = ["PackageStore", "package_store", "cache_dir"]


def cache_dir() -> Path:
    """The store's folder on this machine."""
    return Path(os.environ.get("MAAG_PACKAGE_CACHE") or Path.home() / ".cache" / "maag" / "packages")


class PackageStore:
    """Packages by the SHA-256 of their archive, unpacked once. `unpacked` counts the archives
    this process unpacked into it (a package already there is never unpacked again)."""

    def __init__(self, root: Path) -> None:
        # "v2": trees unpacked by maag.server.sandbox.archive; those an older maag unpacked with
        # tarfile (which let a link through another link out) are never used again.
        self.root = root / "v2"
        self.unpacked = 0

    def get(self, digest: str) -> Path | None:
        """The package folder of `digest` if the store holds it."""
        target = self.root / digest
        return package_root(target / "tree") if (target / "ready").exists() else None

    def put(self, data: bytes, *, name: str = "package.tar.gz", max_bytes: int = DEFAULT_MAX_BYTES) -> Path:
        """The package folder of archive `data` (a .tar.gz or a .zip; `name` for messages),
        unpacked into the store unless it is there already. PackageError saying what is
        wrong with an archive that cannot be unpacked safely (nothing is kept of it)."""
        digest = sha256_of(data)
        got = self.get(digest)
        if got is not None:
            return got
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{digest[:12]}-", dir=self.root))
        try:
            if not name.endswith((".tar.gz", ".tgz", ".zip")):
                name = "p.zip" if data[:2] == b"PK" else "p.tar.gz"
            arch = tmp / Path(name).name  # (unpack reads the format from the name)
            arch.write_bytes(data)
            self.unpacked += 1
            try:
                unpack(arch, tmp / "tree", max_bytes=max_bytes)  # made there; no link followed
            except PackageError as e:
                # Said of the archive as it was given, not of the store's temporary folder.
                raise PackageError(str(e).replace(str(arch), name).replace(str(tmp) + "/", "")) from None
            arch.unlink()
            (tmp / "ready").write_text(digest)
            try:
                os.rename(tmp, self.root / digest)
            except OSError:  # another process got there first
                pass
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        got = self.get(digest)
        assert got is not None
        return got

    def discard(self, digest: str) -> None:
        """Forget package `digest` (an upload refused for its manifest keeps nothing here)."""
        target = self.root / digest
        gone = self.root / f".gone-{digest[:12]}-{os.getpid()}"
        try:
            os.rename(target, gone)  # out of sight at once, then removed
        except OSError:
            return
        shutil.rmtree(gone, ignore_errors=True)

    def fetch(self, source: SubmissionStore, digest: str) -> Path:
        """The package folder of stored package `digest`, fetched from the database `source`
        (checked against its hash) when the store does not hold it yet; KeyError if the
        database does not hold it."""
        got = self.get(digest)
        if got is not None:
            return got
        data = source.package(digest)
        if data is None:
            raise KeyError(f"no stored package {digest}")
        if sha256_of(data) != digest:
            raise ValueError(f"stored package {digest} does not match its hash")
        return self.put(data)


_STORES: dict[Path, PackageStore] = {}


def package_store() -> PackageStore:
    """This process's store of the machine's packages (one per store folder)."""
    root = cache_dir()
    if root not in _STORES:
        _STORES[root] = PackageStore(root)
    return _STORES[root]
