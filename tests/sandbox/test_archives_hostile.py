"""Hostile archives and builds (issue 53): whatever a participant's package or build holds,
unpacking it and reading it back writes nothing outside its folder and changes no mode there.

- a link through another link (`a -> .` then `a/b -> ...`), and CVE-2025-4517's shape (folders
  nested past PATH_MAX through links, then a link out through them, a file written and a
  folder's mode set through it): refused by `maag match`, `maag tournament` and by the checks
  of `maag bot submit` and the web upload (`pack`),
  with a message; a canary file beside the destination keeps its text and its mode 0600, and
  nothing appears outside the destination;
- a re-pointed link (a folder, then a link of the same name, then the folder again): refused;
  the canary's mode stays 0600;
- a build whose result holds a link chain, or whose `maag-bot.toml` is a link out (real
  builds in bubblewrap): refused; `maag bot submit` leaves the version rejected, not active,
  and the canary as it was;
- a manifest that is a link is refused when a package folder is read; the manifest written
  after a build replaces a link, never writes through it;
- a tar of a million empty members (and a zip of more members than the cap) is refused within
  seconds, the unpacking process growing by less than 200 MB;
- `threads` above what the host grants (`--max-threads`) is refused naming both numbers.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

import pytest
from maag.server.hosting.api import HostOptions, SubmissionRejected, pack
from maag.server.sandbox.archive import MAX_MEMBERS, unpack, unpack_tar
from maag.server.sandbox.package import MANIFEST, BotPackage, PackageError, write_manifest

MAAG = [sys.executable, "-m", "maag.server"]
SECRET = b"the host's secret\n"
MANIFEST_TEXT = b'name = "evil"\nrun = "python3 bot.py"\n'
ROOT = Path(__file__).resolve().parents[2]
BOT = (ROOT / "examples" / "python-bot" / "bot.py").read_text()


def _need_sandbox() -> None:
    if shutil.which("bwrap") is None or os.geteuid() != 0:
        if os.environ.get("CI"):
            pytest.fail("the sandbox needs bubblewrap and root here (CI)")
        pytest.skip("needs bubblewrap and root")


# -- the host's side: a canary, and what is outside the destination -------------------------------

def _canary(tmp_path: Path) -> Path:
    c = tmp_path / "canary"
    c.write_bytes(SECRET)
    os.chmod(c, 0o600)
    return c


def _assert_canary(c: Path) -> None:
    st = c.lstat()
    assert stat.S_ISREG(st.st_mode), "the canary was replaced"
    assert stat.S_IMODE(st.st_mode) == 0o600, f"the canary's mode became {oct(stat.S_IMODE(st.st_mode))}"
    assert c.read_bytes() == SECRET, "the canary was written"


def _everything(top: Path) -> set[str]:
    """Every path below `top`, links not followed."""
    out = set()
    for dirpath, dirs, files in os.walk(top):
        for n in dirs + files:
            out.add(os.path.relpath(os.path.join(dirpath, n), top))
    return out


def _no_payload(top: Path) -> None:
    """No file the archives aim outside (`pwned`) exists anywhere below `top`."""
    hits = [p for p in _everything(top) if os.path.basename(p) == "pwned"]
    assert not hits, hits


# -- hostile archives ---------------------------------------------------------------------------------

def _add(tf: tarfile.TarFile, name: str, kind: bytes = tarfile.REGTYPE, link: str = "", data: bytes = b"",
         mode: int = 0o644) -> None:
    ti = tarfile.TarInfo(name)
    ti.type, ti.linkname, ti.mode = kind, link, mode
    ti.size = len(data) if kind == tarfile.REGTYPE else 0
    tf.addfile(ti, io.BytesIO(data) if kind == tarfile.REGTYPE else None)


def link_chain_archive(path: Path, up: int) -> Path:
    """`a -> .` makes `a/b` land at `b`: a link whose text stays inside (`a/..` cancels out)
    but which points `up` folders above the destination through `a`; then a file through it."""
    with tarfile.open(path, "w:gz") as tf:
        _add(tf, MANIFEST, data=MANIFEST_TEXT)
        _add(tf, "bot.py", data=BOT.encode())
        _add(tf, "a", tarfile.SYMTYPE, link=".")
        _add(tf, "a/b", tarfile.SYMTYPE, link="../" * up)
        _add(tf, "b/pwned", data=b"PWNED\n")
    return path


def pathmax_archive(path: Path, up: int) -> Path:
    """CVE-2025-4517's shape: folders of 247-character names, each reached through a
    one-letter link, nested until a path through them is longer than PATH_MAX (where
    os.path.realpath gives up); a link climbing back out of them; then `escape`, a link
    through it to `up` folders above the destination, a file written through it, and a
    folder `chmodlink` first made a link to the canary, then named again as a folder of mode 0755."""
    comp = "d" * 247
    steps = "abcdefghijklmnop"
    with tarfile.open(path, "w:gz") as tf:
        _add(tf, MANIFEST, data=MANIFEST_TEXT)
        _add(tf, "bot.py", data=BOT.encode())
        p = ""
        for s in steps:
            _add(tf, os.path.join(p, comp), tarfile.DIRTYPE, mode=0o755)
            _add(tf, os.path.join(p, s), tarfile.SYMTYPE, link=comp)
            p = os.path.join(p, s)
        linkpath = os.path.join(*steps, "l" * 254)
        _add(tf, linkpath, tarfile.SYMTYPE, link="../" * len(steps))
        _add(tf, "escape", tarfile.SYMTYPE, link=linkpath + "/" + "../" * up)
        _add(tf, "escape/pwned", data=b"PWNED\n")
        _add(tf, "chmodlink", tarfile.SYMTYPE, link=linkpath + "/" + "../" * up + "canary")
        _add(tf, "chmodlink", tarfile.DIRTYPE, mode=0o755)
    return path


def _match(tmp_path: Path, spec: str, *args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    """`maag match SPEC random` on nim, its temporary files under tmp_path/tmp."""
    (tmp_path / "tmp").mkdir(exist_ok=True)
    (tmp_path / "db").mkdir(exist_ok=True)
    return subprocess.run([*MAAG, "match", spec, "random", "--game", "nim", "--games", "1", "--tc", "300ms",
                           "--db", str(tmp_path / "db" / "m.sqlite3"), "--json", *args],
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL,
                          env={**os.environ, "TMPDIR": str(tmp_path / "tmp")})


# The destination of `maag match`'s unpacking is TMPDIR/maag-hosted-X/maag-pkg-Y: three
# folders up is tmp_path, where the canary is.
@pytest.mark.parametrize(("make", "reason"), [
    pytest.param(link_chain_archive, r"archive member 'a/b': passes through a link \('a'\)", id="link-chain"),
    pytest.param(pathmax_archive, r"passes through a link \('a'\)", id="pathmax"),
])
def test_maag_match_refuses_links_through_links(tmp_path: Path, make: object, reason: str) -> None:
    canary = _canary(tmp_path)
    (tmp_path / "in").mkdir()
    archive = make(tmp_path / "in" / "evil.tar.gz", 3)  # type: ignore[operator]
    before = _everything(tmp_path)
    r = _match(tmp_path, str(archive))
    assert r.returncode != 0, r.stdout[-2000:]
    assert re.search(reason, r.stderr), r.stderr[-3000:]
    assert "evil.tar.gz" in r.stderr  # the message names the archive
    _assert_canary(canary)
    _no_payload(tmp_path)
    new = {p for p in _everything(tmp_path) - before if not p.startswith(("tmp", "db"))}
    assert not new, new
    # Whatever maag left in its temporary folder holds no link at all (nothing was unpacked).
    links = [p for p in _everything(tmp_path / "tmp") if os.path.islink(tmp_path / "tmp" / p)]
    assert not links, links


def test_maag_tournament_refuses_a_link_chain_archive(tmp_path: Path) -> None:
    canary = _canary(tmp_path)
    (tmp_path / "in").mkdir()
    (tmp_path / "tmp").mkdir()
    archive = link_chain_archive(tmp_path / "in" / "evil.tar.gz", 3)
    r = subprocess.run([*MAAG, "tournament", "--bot", f"evil={archive}", "--bot", "random", "--game", "nim",
                        "--tc", "300ms", "--games-per-pair", "2", "--db", str(tmp_path / "t.sqlite3")],
                       capture_output=True, text=True, timeout=240, stdin=subprocess.DEVNULL,
                       env={**os.environ, "TMPDIR": str(tmp_path / "tmp")})
    assert r.returncode != 0, r.stdout[-2000:]
    assert f"{archive}: archive member 'a/b': passes through a link ('a')" in r.stderr, r.stderr[-3000:]
    _assert_canary(canary)
    _no_payload(tmp_path)


def test_submit_checks_refuse_the_same_archives(tmp_path: Path) -> None:
    """What `maag bot submit` and the web upload run on an archive (`pack`) refuses both."""
    canary = _canary(tmp_path)
    for make in (link_chain_archive, pathmax_archive):
        archive = make(tmp_path / f"{make.__name__}.tar.gz", 3)
        with pytest.raises(SubmissionRejected, match="passes through a link"):
            pack(archive)
    _assert_canary(canary)
    _no_payload(tmp_path)


def _dest(tmp_path: Path) -> Path:
    d = tmp_path / "l1" / "l2" / "dest"
    d.parent.mkdir(parents=True)
    return d


CHAINS = [
    # (members, the reason); the destination is tmp_path/l1/l2/dest: three up is tmp_path.
    pytest.param([("a", tarfile.SYMTYPE, ".", b""), ("b", tarfile.SYMTYPE, "a/..", b""),
                  ("c", tarfile.SYMTYPE, "b/..", b""), ("d", tarfile.SYMTYPE, "c/..", b""),
                  (MANIFEST + "2", tarfile.SYMTYPE, "d/canary", b"")],
                 r"'b': a link out of the package through another link \('a/\.\.'\)",
                 id="dot-dot-through-links"),
    pytest.param([("sub", tarfile.DIRTYPE, "", b""), ("a", tarfile.SYMTYPE, ".", b""),
                  ("b", tarfile.SYMTYPE, "a/..", b""), ("c", tarfile.SYMTYPE, "b/..", b""),
                  ("d", tarfile.SYMTYPE, "c/..", b""), ("sub", tarfile.SYMTYPE, "d/canary", b""),
                  ("sub", tarfile.DIRTYPE, "", b"")],
                 r"'sub': appears twice", id="re-pointed-folder"),
    pytest.param([("l", tarfile.SYMTYPE, "sub", b""), ("sub", tarfile.DIRTYPE, "", b""),
                  ("l/f", tarfile.REGTYPE, "", b"x")],
                 r"'l/f': passes through a link \('l'\)", id="write-through-a-link"),
    pytest.param([("f", tarfile.REGTYPE, "", b"x"), ("f", tarfile.SYMTYPE, "../../../canary", b"")],
                 r"'f': appears twice", id="file-then-link"),
    pytest.param([("x", tarfile.SYMTYPE, "../../../canary", b"")], r"'x': a link out of the package",
                 id="plain-link-out"),
    pytest.param([("h", tarfile.LNKTYPE, "../../../canary", b"")],
                 r"'h': not a file, folder or symbolic link", id="hard-link"),
]


@pytest.mark.parametrize(("members", "reason"), CHAINS)
def test_unpack_refuses_link_chains(tmp_path: Path, members: list[tuple[str, bytes, str, bytes]],
                                    reason: str) -> None:
    canary = _canary(tmp_path)
    archive = tmp_path / "chain.tar.gz"
    with tarfile.open(archive, "w:gz") as tf:
        _add(tf, MANIFEST, data=MANIFEST_TEXT)
        for name, kind, link, data in members:
            _add(tf, name, kind, link, data, mode=0o755)
        _add(tf, "late/pwned", data=b"PWNED\n")
    dest = _dest(tmp_path)
    before = _everything(tmp_path)
    with pytest.raises(PackageError, match=reason) as e:
        unpack(archive, dest)
    assert str(archive) in str(e.value)
    assert not dest.exists()  # checked whole before anything is written
    assert _everything(tmp_path) == before
    _assert_canary(canary)
    # The same tree as a build's plain tar stream.
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        for name, kind, link, data in members:
            _add(tf, name, kind, link, data, mode=0o755)
    buf.seek(0)
    with pytest.raises(PackageError, match=reason):
        unpack_tar(buf, dest, what="the build")
    assert not dest.exists()
    _assert_canary(canary)


def test_unpack_refuses_the_pathmax_archive(tmp_path: Path) -> None:
    canary = _canary(tmp_path)
    archive = pathmax_archive(tmp_path / "pathmax.tar.gz", 3)
    dest = _dest(tmp_path)
    before = _everything(tmp_path)
    with pytest.raises(PackageError, match=r"passes through a link \('a'\)"):
        unpack(archive, dest)
    assert not dest.exists()
    assert _everything(tmp_path) == before
    _assert_canary(canary)
    _no_payload(tmp_path)


def test_a_zip_written_by_zipfile_writestr_loads(tmp_path: Path) -> None:
    """Members with no file type in their mode (zipfile's writestr of a name) are plain files."""
    archive = tmp_path / "p.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr(MANIFEST, MANIFEST_TEXT)
        zf.writestr("bot.py", BOT)
    pkg = BotPackage.load(archive, unpack_to=tmp_path)
    assert pkg.name == "evil" and (pkg.root / "bot.py").read_text() == BOT


def test_links_inside_still_unpack_and_modes_are_plain(tmp_path: Path) -> None:
    """What the rules leave: links that stay inside (through other links too), files with
    their executable bit, never setuid; folders 0755."""
    archive = tmp_path / "ok.tar.gz"
    with tarfile.open(archive, "w:gz") as tf:
        _add(tf, "pkg", tarfile.DIRTYPE, mode=0o700)
        _add(tf, f"pkg/{MANIFEST}", data=MANIFEST_TEXT, mode=0o4755)
        _add(tf, "pkg/lib/x.py", data=b"X = 1\n", mode=0o600)
        _add(tf, "pkg/here", tarfile.SYMTYPE, link=".")
        _add(tf, "pkg/lib/up", tarfile.SYMTYPE, link="../here/lib/x.py")
    dest = _dest(tmp_path)
    unpack(archive, dest)
    assert stat.S_IMODE(dest.stat().st_mode) == 0o755
    assert stat.S_IMODE((dest / "pkg").stat().st_mode) == 0o755
    assert stat.S_IMODE((dest / "pkg" / MANIFEST).stat().st_mode) == 0o755
    assert stat.S_IMODE((dest / "pkg" / "lib" / "x.py").stat().st_mode) == 0o644
    assert (dest / "pkg" / "lib" / "up").read_text() == "X = 1\n"


# -- reading a package back ---------------------------------------------------------------------------

def test_a_manifest_that_is_a_link_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside.toml"
    outside.write_bytes(MANIFEST_TEXT)
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / MANIFEST).symlink_to(outside)
    with pytest.raises(PackageError, match="a symbolic link; the manifest must be a plain file"):
        BotPackage.load(pkg)


def test_write_manifest_replaces_a_link_and_never_writes_through_it(tmp_path: Path) -> None:
    canary = _canary(tmp_path)
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / MANIFEST).symlink_to("../canary")
    write_manifest(pkg, 'name = "x"\nrun = "true"\n')
    _assert_canary(canary)
    assert not (pkg / MANIFEST).is_symlink()
    assert BotPackage.from_folder(pkg).name == "x"
    assert sorted(os.listdir(pkg)) == [MANIFEST]  # no temporary file left beside it


# -- builds in the sandbox ----------------------------------------------------------------------------

def _build_pkg(folder: Path, script: str, threads: int = 1) -> Path:
    folder.mkdir(parents=True)
    (folder / MANIFEST).write_text(f'name = "builder"\nrun = "python3 bot.py"\nbuild = "sh build.sh"\n'
                                   f"threads = {threads}\n")
    (folder / "bot.py").write_text(BOT)
    (folder / "build.sh").write_text(script)
    return folder


# From the build's result (TMPDIR/maag-hosted-X/stage-Y/built for `maag match`,
# TMPDIR/maag-process-X/stage/built for `maag bot submit`) four folders up is tmp_path.
CHAIN = "set -e\nln -s . a\nln -s a/.. b\nln -s b/.. c\nln -s c/.. d\nln -s d/.. e\n"
LINK_CHAIN_BUILD = CHAIN + "ln -s e/canary out\n"
MANIFEST_OUT_BUILD = CHAIN + f"rm {MANIFEST}\nln -s e/canary {MANIFEST}\n"


def test_maag_match_refuses_a_build_that_leaves_a_link_chain(tmp_path: Path) -> None:
    _need_sandbox()
    canary = _canary(tmp_path)
    pkg = _build_pkg(tmp_path / "in" / "builder", LINK_CHAIN_BUILD)
    r = _match(tmp_path, str(pkg))
    assert r.returncode != 0, r.stdout[-2000:]
    assert "the build's result is refused" in r.stderr, r.stderr[-3000:]
    assert "a link out of the package through another link" in r.stderr, r.stderr[-3000:]
    _assert_canary(canary)


def _submit(tmp_path: Path, pkg: Path, *extra: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    db = tmp_path / "db" / "s.sqlite3"
    db.parent.mkdir(exist_ok=True)
    (tmp_path / "tmp").mkdir(exist_ok=True)
    env = {**os.environ, "TMPDIR": str(tmp_path / "tmp"),
           "MAAG_PACKAGE_CACHE": str(tmp_path / "tmp" / "cache")}
    add = subprocess.run([*MAAG, "bot", "add", "mallory", "--db", str(db)], capture_output=True, text=True,
                         env=env, timeout=60)
    assert add.returncode == 0, add.stderr
    r = subprocess.run([*MAAG, "bot", "submit", "mallory", str(pkg), "--json", "--db", str(db),
                        "--game", "nim", "--tc", "300ms", "--log-dir", str(tmp_path / "tmp" / "logs"),
                        *extra],
                       capture_output=True, text=True, env=env, timeout=300, stdin=subprocess.DEVNULL)
    return r, db


def test_maag_bot_submit_refuses_a_build_whose_manifest_is_a_link_out(tmp_path: Path) -> None:
    _need_sandbox()
    from maag.server.storage.submissions import open_submission_store

    canary = _canary(tmp_path)
    pkg = _build_pkg(tmp_path / "in" / "builder", MANIFEST_OUT_BUILD)
    r, db = _submit(tmp_path, pkg)
    assert r.returncode == 1, r.stderr[-3000:]
    v = json.loads(r.stdout.splitlines()[-1])
    assert v["status"] == "rejected", v
    assert "build failed" in v["reason"] and "the build's result is refused" in v["reason"], v["reason"]
    assert "through another link" in v["reason"], v["reason"]
    _assert_canary(canary)
    store = open_submission_store(db)
    try:
        assert store.get("mallory") is None  # no active version
        assert [x.status for x in store.versions("mallory")] == ["rejected"]
    finally:
        store.close()


# -- too many members ---------------------------------------------------------------------------------

def million_member_archive(path: Path, n: int = 1_000_000) -> Path:
    """A .tar.gz of `n` empty files f0000000, f0000001, ... (one header each, written raw:
    a template header with its name and checksum changed): 512 MB of tar, 9 MB gzipped."""
    ti = tarfile.TarInfo("f0000000")
    ti.mtime = 0
    header = bytearray(ti.tobuf(format=tarfile.USTAR_FORMAT))
    base = sum(header[:148]) + 8 * ord(" ") + sum(header[156:]) - sum(b"0000000")
    with gzip.open(path, "wb", compresslevel=1) as f:
        chunk: list[bytes] = []
        for i in range(n):
            digits = b"%07d" % i
            header[1:8] = digits
            header[148:156] = b"%06o\0 " % (base + sum(digits))
            chunk.append(bytes(header))
            if len(chunk) == 20_000:
                f.write(b"".join(chunk))
                chunk.clear()
        f.write(b"".join(chunk) + bytes(1024))
    return path


_MEASURE = """
import resource, sys, time
from pathlib import Path
from maag.server.sandbox.archive import unpack, PackageError
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.monotonic()
try:
    unpack(Path(sys.argv[1]), Path(sys.argv[2]))
    print("UNPACKED")
except PackageError as e:
    print("REFUSED", e)
print("SECONDS", time.monotonic() - t)
print("GROWTH_KB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
"""


def _measure(archive: Path, dest: Path) -> tuple[str, float, int]:
    r = subprocess.run([sys.executable, "-c", _MEASURE, str(archive), str(dest)], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    lines = dict(line.split(" ", 1) for line in r.stdout.splitlines())
    return lines.get("REFUSED", "UNPACKED"), float(lines["SECONDS"]), int(lines["GROWTH_KB"])


def test_a_million_members_are_refused_quickly_and_in_little_memory(tmp_path: Path) -> None:
    archive = million_member_archive(tmp_path / "million.tar.gz")
    dest = tmp_path / "dest"
    why, seconds, growth_kb = _measure(archive, dest)
    assert f"more than {MAX_MEMBERS} members" in why and str(archive) in why, why
    assert seconds < 10, seconds
    assert growth_kb < 200 * 1024, f"the unpacking process grew by {growth_kb >> 10} MB"
    assert not dest.exists()


def test_a_zip_of_too_many_members_is_refused_from_its_central_directory(tmp_path: Path) -> None:
    archive = tmp_path / "many.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for i in range(MAX_MEMBERS + 1):
            zi = zipfile.ZipInfo(f"f{i}")
            zi.external_attr = (stat.S_IFREG | 0o644) << 16
            zf.writestr(zi, b"")
    dest = tmp_path / "dest"
    t = time.monotonic()
    with pytest.raises(PackageError, match=f"more than {MAX_MEMBERS} members"):
        unpack(archive, dest)
    assert time.monotonic() - t < 10
    assert not dest.exists()


# -- threads --------------------------------------------------------------------------------------------

def test_threads_above_what_the_host_grants_are_refused(tmp_path: Path) -> None:
    pkg = tmp_path / "in" / "greedy"
    pkg.mkdir(parents=True)
    (pkg / MANIFEST).write_text('name = "greedy"\nrun = "python3 bot.py"\nthreads = 256\n')
    (pkg / "bot.py").write_text(BOT)
    r = _match(tmp_path, str(pkg), "--max-threads", "2")
    assert r.returncode != 0
    want = "asks for threads = 256, but this host grants at most 2 (--max-threads)"
    assert want in r.stderr, r.stderr[-2000:]
    with pytest.raises(SubmissionRejected, match="threads = 256, but this host grants at most 3"):
        pack(pkg, options=HostOptions(max_threads=3))
    r, _ = _submit(tmp_path, pkg, "--max-threads", "2")
    assert r.returncode == 1
    assert "threads = 256, but this host grants at most 2" in r.stderr, r.stderr[-2000:]
    assert HostOptions().max_threads == max(1, (os.cpu_count() or 1) - 1)
