"""Bot packages (maag.server.sandbox.package): the manifest `maag-bot.toml` and archives.

- every broken manifest is refused with a PackageError naming the file, the line (when the
  fault is on a line) and the reason;
- a good package loads from its folder, from a .tar.gz and from a .zip (of the folder or of
  its contents);
- archives that could write outside their folder or hold anything but plain files, folders
  and links within the package are refused before anything is written: absolute paths,
  `..`, links pointing out, device files, fifos, hard links, more than `max_bytes`;
- `is_package` tells a package from a bundled agent's name or a command line;
- properties: any name the rule allows loads unchanged; no tar archive, whatever its members'
  names and links, puts anything outside the folder it is unpacked into.
"""

from __future__ import annotations

import io
import os
import re
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from maag.server.sandbox.package import MANIFEST, BotPackage, PackageError, is_package, unpack

BOT = "print('hello')\n"


def make_package(root: Path, manifest: str, files: dict[str, str] | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / MANIFEST).write_text(manifest)
    for name, text in (files or {"bot.py": BOT}).items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


GOOD = 'name = "good-bot"\nrun = "python3 bot.py --fast"\nthreads = 2\nnotes = "a test"\n'


# -- the manifest ---------------------------------------------------------------------------

def test_good_manifest_loads(tmp_path: Path) -> None:
    root = make_package(tmp_path / "pkg", GOOD + 'build = "make -j2"\n')
    pkg = BotPackage.load(root)
    assert pkg.root == root.resolve()
    assert (pkg.name, pkg.run, pkg.build, pkg.threads, pkg.notes) == (
        "good-bot", "python3 bot.py --fast", "make -j2", 2, "a test")
    assert pkg.argv == ["python3", "bot.py", "--fast"]
    assert pkg.to_dict()["threads"] == 2


def test_defaults(tmp_path: Path) -> None:
    pkg = BotPackage.load(make_package(tmp_path / "pkg", 'name = "b"\nrun = "./bot"\n'))
    assert (pkg.build, pkg.threads, pkg.notes) == (None, 1, "")


# (manifest text, the line the error must name or None when no line is at fault, the reason)
BROKEN = [
    pytest.param('name = "x"\nrun = "python3 bot.py"\nthreads = = 2\n', 3, r"(?i)invalid|expected",
                 id="bad-toml"),
    pytest.param('name = "x"\nrun = "python3 bot.py"\n\nmemory = "2GiB"\n', 4, r"unknown key 'memory'",
                 id="unknown-key"),
    pytest.param('name = "x"\nrun = "python3 bot.py"\n\n[extra]\nkey = 1\n', 4, r"unknown key 'extra'",
                 id="unknown-table"),
    pytest.param('name = "x"\nrun = "x"\n"memory" = 1\n', 3, r"unknown key 'memory'",
                 id="unknown-quoted-key"),
    pytest.param('name = "x"\nrun = "x"\ntool.opt = 1\n', 3, r"unknown key 'tool'",
                 id="unknown-dotted-key"),
    pytest.param('name = "x"\n', None, r"'run' is missing", id="missing-run"),
    pytest.param('run = "python3 bot.py"\n', None, r"'name' is missing", id="missing-name"),
    pytest.param('run = "python3 bot.py"\nname = "../evil"\n', 2, r"name '\.\./evil' must be 1-64",
                 id="name-path"),
    pytest.param('name = "-dash"\nrun = "x"\n', 1, r"name '-dash' must be 1-64", id="name-dash"),
    pytest.param('name = ""\nrun = "x"\n', 1, r"name '' must be 1-64", id="name-empty"),
    pytest.param(f'name = "{"n" * 65}"\nrun = "x"\n', 1, r"must be 1-64", id="name-long"),
    pytest.param('name = "a b"\nrun = "x"\n', 1, r"must be 1-64", id="name-space"),
    pytest.param('name = "bot\\n"\nrun = "x"\n', 1, r"must be 1-64", id="name-newline-escape"),
    pytest.param('name = 7\nrun = "x"\n', 1, r"'name' must be a string", id="name-number"),
    pytest.param('name = "x"\nrun = "x"\nthreads = 0\n', 3, r"'threads' must be a whole number",
                 id="threads-0"),
    pytest.param('name = "x"\nrun = "x"\nthreads = 257\n', 3, r"'threads' must be a whole number",
                 id="threads-257"),
    pytest.param('name = "x"\nrun = "x"\nthreads = "2"\n', 3, r"'threads' must be a whole number",
                 id="threads-text"),
    pytest.param('name = "x"\nrun = "x"\nthreads = true\n', 3, r"'threads' must be a whole number",
                 id="threads-bool"),
    pytest.param('name = "x"\nrun = "x"\nthreads = 1.5\n', 3, r"'threads' must be a whole number",
                 id="threads-float"),
    pytest.param('name = "x"\n\nrun = ""\n', 3, r"'run' is empty", id="run-empty"),
    pytest.param('name = "x"\nrun = "   "\n', 2, r"'run' is empty", id="run-blank"),
    pytest.param('name = "x"\nrun = "python3 \'bot.py"\n', 2, r"'run' is not a command line",
                 id="run-unbalanced-quote"),
    pytest.param('name = "x"\nrun = ["python3", "bot.py"]\n', 2, r"'run' must be a string", id="run-list"),
    pytest.param('name = "x"\nrun = "x"\nbuild = ""\n', 3, r"'build' is empty", id="build-empty"),
    pytest.param('name = "x"\nrun = "x"\nnotes = 3\n', 3, r"'notes' must be a string", id="notes-number"),
]


@pytest.mark.parametrize(("text", "line", "reason"), BROKEN)
def test_broken_manifest_refused_with_file_line_and_reason(tmp_path: Path, text: str, line: int | None,
                                                           reason: str) -> None:
    root = make_package(tmp_path / "pkg", text)
    manifest = root / MANIFEST
    with pytest.raises(PackageError) as e:
        BotPackage.load(root)
    msg = str(e.value)
    assert str(manifest) in msg, msg
    if line is not None:
        # "FILE:LINE: reason", or tomllib's "(at line N, column C)" for a TOML syntax error.
        assert f"{manifest}:{line}:" in msg or f"line {line}," in msg, msg
    assert re.search(reason, msg), msg


def test_no_manifest_and_no_such_path(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(PackageError, match=f"no {MANIFEST} in the package"):
        BotPackage.load(tmp_path / "empty")
    with pytest.raises(PackageError, match="no such folder or archive"):
        BotPackage.load(tmp_path / "absent")


def test_archive_with_a_broken_manifest_names_the_unpacked_file(tmp_path: Path) -> None:
    src = make_package(tmp_path / "src", 'name = "x"\nrun = "x"\nthreads = 0\n')
    archive = tmp_path / "b.tar.gz"
    with tarfile.open(archive, "w:gz") as tf:
        tf.add(src, arcname="pkg")
    with pytest.raises(PackageError, match=rf"pkg/{re.escape(MANIFEST)}:3: 'threads'"):
        BotPackage.load(archive, unpack_to=tmp_path)


# -- archives that load -----------------------------------------------------------------------

@pytest.fixture
def good(tmp_path: Path) -> Path:
    return make_package(tmp_path / "good", GOOD, {"bot.py": BOT, "lib/helper.py": "X = 1\n",
                                                  "data/weights.bin": "w" * 1000})


def _tar(archive: Path, src: Path, arcname: str) -> Path:
    with tarfile.open(archive, "w:gz") as tf:
        tf.add(src, arcname=arcname)
    return archive


def _zip(archive: Path, src: Path, prefix: str) -> Path:
    with zipfile.ZipFile(archive, "w") as zf:
        for p in sorted(src.rglob("*")):
            rel = p.relative_to(src).as_posix()
            zf.write(p, f"{prefix}{rel}" + ("/" if p.is_dir() else ""))
    return archive


@pytest.mark.parametrize("kind", ["tar.gz-folder", "tgz-contents", "zip-folder", "zip-contents"])
def test_archives_of_a_good_package_load(tmp_path: Path, good: Path, kind: str) -> None:
    (good / "run.sh").write_text("#!/bin/sh\nexec python3 bot.py\n")
    os.chmod(good / "run.sh", 0o755)
    if kind == "tar.gz-folder":
        archive = _tar(tmp_path / "b.tar.gz", good, "good")
    elif kind == "tgz-contents":
        archive = _tar(tmp_path / "b.tgz", good, ".")
    elif kind == "zip-folder":
        archive = _zip(tmp_path / "b.zip", good, "good/")
    else:
        archive = _zip(tmp_path / "b.zip", good, "")
    assert is_package(str(archive))
    out = tmp_path / "unpacked"
    out.mkdir()
    pkg = BotPackage.load(archive, unpack_to=out)
    assert pkg.name == "good-bot" and pkg.threads == 2
    assert pkg.root.is_relative_to(out.resolve())
    assert (pkg.root / "bot.py").read_text() == BOT
    assert (pkg.root / "lib" / "helper.py").read_text() == "X = 1\n"
    assert (pkg.root / "data" / "weights.bin").stat().st_size == 1000
    assert os.access(pkg.root / "run.sh", os.X_OK)  # the executable bit survives
    for p in pkg.root.rglob("*"):  # no setuid bits, nothing the host cannot manage
        assert not p.lstat().st_mode & (stat.S_ISUID | stat.S_ISGID), p


def test_an_internal_link_is_kept(tmp_path: Path, good: Path) -> None:
    (good / "main.py").symlink_to("bot.py")
    (good / "lib" / "up.py").symlink_to("../bot.py")
    pkg = BotPackage.load(_tar(tmp_path / "b.tar.gz", good, "good"), unpack_to=tmp_path)
    assert (pkg.root / "main.py").is_symlink() and (pkg.root / "main.py").read_text() == BOT
    assert (pkg.root / "lib" / "up.py").read_text() == BOT


def test_not_an_archive(tmp_path: Path) -> None:
    bad = tmp_path / "b.tar.gz"
    bad.write_bytes(b"not gzip at all")
    with pytest.raises(PackageError, match="not a readable .tar.gz"):
        BotPackage.load(bad, unpack_to=tmp_path)
    bad = tmp_path / "b.zip"
    bad.write_bytes(b"not a zip")
    with pytest.raises(PackageError, match="not a readable .zip"):
        BotPackage.load(bad, unpack_to=tmp_path)
    other = tmp_path / "b.rar"
    other.write_bytes(b"x")
    with pytest.raises(PackageError, match=r"must be \.tar\.gz, \.tgz or \.zip"):
        unpack(other, tmp_path / "d")


# -- archives refused -------------------------------------------------------------------------

Member = tuple[tarfile.TarInfo, bytes]


def _info(name: str, kind: bytes = tarfile.REGTYPE, data: bytes = b"", link: str = "") -> Member:
    ti = tarfile.TarInfo(name)
    ti.type = kind
    ti.size = len(data) if kind == tarfile.REGTYPE else 0
    ti.linkname = link
    ti.mode = 0o755 if kind == tarfile.DIRTYPE else 0o644
    return ti, data


def _raw_tar(archive: Path, members: list[Member]) -> Path:
    with tarfile.open(archive, "w:gz") as tf:
        for ti, data in members:
            tf.addfile(ti, io.BytesIO(data) if ti.type == tarfile.REGTYPE else None)
    return archive


MANIFEST_MEMBERS = [_info("pkg", tarfile.DIRTYPE), _info(f"pkg/{MANIFEST}", data=b'name = "x"\nrun = "x"\n')]

BAD_TARS = [
    pytest.param([_info("/tmp/evil.py", data=b"x")], r"'/tmp/evil.py': a path outside", id="absolute"),
    pytest.param([_info("pkg/../../evil.py", data=b"x")], r"a path outside", id="dotdot"),
    pytest.param([_info("../evil.py", data=b"x")], r"a path outside", id="dotdot-top"),
    pytest.param([_info("pkg/passwd", tarfile.SYMTYPE, link="/etc/passwd")], r"a link out of the package",
                 id="symlink-absolute"),
    pytest.param([_info("pkg/up", tarfile.SYMTYPE, link="../../outside")], r"a link out of the package",
                 id="symlink-dotdot"),
    pytest.param([_info("pkg/sub", tarfile.DIRTYPE),
                  _info("pkg/sub/up", tarfile.SYMTYPE, link="../../../x")], r"a link out of the package",
                 id="symlink-deep"),
    pytest.param([_info("pkg/null", tarfile.CHRTYPE)], r"not a file, folder or symbolic link", id="chardev"),
    pytest.param([_info("pkg/disk", tarfile.BLKTYPE)], r"not a file, folder or symbolic link", id="blockdev"),
    pytest.param([_info("pkg/pipe", tarfile.FIFOTYPE)], r"not a file, folder or symbolic link", id="fifo"),
    pytest.param([_info("pkg/hard", tarfile.LNKTYPE, link="pkg/maag-bot.toml")],
                 r"not a file, folder or symbolic link", id="hardlink"),
]


def _outside_untouched(tmp_path: Path, dest: Path, before: set[Path]) -> None:
    after = {p for p in tmp_path.rglob("*") if not p.is_relative_to(dest)}
    assert after == before, after - before
    assert not Path("/tmp/evil.py").exists()


@pytest.mark.parametrize(("members", "reason"), BAD_TARS)
def test_bad_tar_members_are_refused(tmp_path: Path, members: list[Member], reason: str) -> None:
    late = [_info("pkg/late.py", data=b"1")]
    archive = _raw_tar(tmp_path / "bad.tar.gz", MANIFEST_MEMBERS + members + late)
    dest = tmp_path / "a" / "b" / "dest"
    dest.mkdir(parents=True)
    before = {p for p in tmp_path.rglob("*") if not p.is_relative_to(dest)}
    with pytest.raises(PackageError, match=reason):
        unpack(archive, dest)
    assert list(dest.iterdir()) == []  # every member is checked before anything is written
    _outside_untouched(tmp_path, dest, before)
    with pytest.raises(PackageError, match=reason):  # and through the loader
        BotPackage.load(archive, unpack_to=tmp_path / "a")


def test_tar_over_max_bytes(tmp_path: Path) -> None:
    archive = _raw_tar(tmp_path / "big.tar.gz", MANIFEST_MEMBERS + [_info("pkg/a.bin", data=b"\0" * 600),
                                                                    _info("pkg/b.bin", data=b"\0" * 600)])
    with pytest.raises(PackageError, match="more than 1000 bytes unpacked"):
        BotPackage.load(archive, unpack_to=tmp_path, max_bytes=1000)
    assert BotPackage.load(archive, unpack_to=tmp_path, max_bytes=2000).name == "x"


def test_tar_over_max_bytes_is_refused_before_writing(tmp_path: Path) -> None:
    # Compressed, 32 MiB of zeros are a few kilobytes: the sizes in the headers decide.
    archive = tmp_path / "bomb.tar.gz"
    with tarfile.open(archive, "w:gz") as tf:
        ti = tarfile.TarInfo("pkg/zeros")
        ti.size = 32 << 20
        tf.addfile(ti, _Zeros(ti.size))
    assert archive.stat().st_size < 1 << 20
    dest = tmp_path / "dest"
    dest.mkdir()
    with pytest.raises(PackageError, match="more than"):
        unpack(archive, dest, max_bytes=1 << 20)
    assert list(dest.iterdir()) == []


class _Zeros(io.RawIOBase):
    def __init__(self, n: int) -> None:
        self.left = n

    def readable(self) -> bool:
        return True

    def readinto(self, b: bytearray) -> int:  # type: ignore[override]
        k = min(len(b), self.left)
        b[:k] = bytes(k)
        self.left -= k
        return k


def _zip_bytes(archive: Path, members: list[tuple[str, bytes, int]]) -> Path:
    with zipfile.ZipFile(archive, "w") as zf:
        manifest = (f"pkg/{MANIFEST}", b'name = "x"\nrun = "x"\n', stat.S_IFREG | 0o644)
        for name, data, mode in [manifest, *members]:
            zi = zipfile.ZipInfo(name)
            zi.external_attr = (mode & 0xFFFF) << 16
            zf.writestr(zi, data)
    return archive


BAD_ZIPS = [
    pytest.param([("/tmp/evil.py", b"x", stat.S_IFREG | 0o644)], "a path outside", id="absolute"),
    pytest.param([("pkg/../../evil.py", b"x", stat.S_IFREG | 0o644)], "a path outside", id="dotdot"),
    pytest.param([("C:/evil.py", b"x", stat.S_IFREG | 0o644)], "a path outside", id="drive"),
    pytest.param([("pkg/passwd", b"/etc/passwd", stat.S_IFLNK | 0o777)], "a link out of the package",
                 id="symlink"),
    pytest.param([("pkg/pipe", b"", stat.S_IFIFO | 0o644)], "not a plain file, folder or symbolic link",
                 id="fifo"),
    pytest.param([("pkg/dev", b"", stat.S_IFCHR | 0o644)], "not a plain file, folder or symbolic link",
                 id="chardev"),
]


@pytest.mark.parametrize(("members", "reason"), BAD_ZIPS)
def test_bad_zip_members_are_refused(tmp_path: Path, members: list[tuple[str, bytes, int]],
                                     reason: str) -> None:
    archive = _zip_bytes(tmp_path / "bad.zip", members)
    dest = tmp_path / "a" / "b" / "dest"
    dest.mkdir(parents=True)
    before = {p for p in tmp_path.rglob("*") if not p.is_relative_to(dest)}
    with pytest.raises(PackageError, match=reason):
        unpack(archive, dest)
    assert list(dest.iterdir()) == []
    _outside_untouched(tmp_path, dest, before)


def test_zip_over_max_bytes(tmp_path: Path) -> None:
    archive = _zip_bytes(tmp_path / "big.zip", [("pkg/a.bin", b"\0" * 3000, stat.S_IFREG | 0o644)])
    with pytest.raises(PackageError, match="more than 2000 bytes unpacked"):
        BotPackage.load(archive, unpack_to=tmp_path, max_bytes=2000)
    assert BotPackage.load(archive, unpack_to=tmp_path, max_bytes=4000).name == "x"


# -- is_package -------------------------------------------------------------------------------

def test_is_package(tmp_path: Path, good: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert is_package(str(good)) and is_package("good") and is_package("./good/")
    (tmp_path / "plain").mkdir()
    assert not is_package(str(tmp_path / "plain"))  # a folder without a manifest
    for name in ("b.tar.gz", "b.tgz", "b.zip"):
        assert not is_package(name)  # not there (yet)
        (tmp_path / name).write_bytes(b"")
        assert is_package(name) and is_package(str(tmp_path / name))
    (tmp_path / "b.tar").write_bytes(b"")
    assert not is_package("b.tar")
    # Bundled agents and command lines are not packages.
    for spec in ("random", "mcts:c=0.5", "python3 bot.py --connect {connect}", " good", "good extra"):
        assert not is_package(spec), spec


# -- properties -------------------------------------------------------------------------------

NAMES = st.from_regex(r"\A[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")


@given(NAMES)
def test_any_allowed_name_round_trips(tmp_path_factory: pytest.TempPathFactory, name: str) -> None:
    root = make_package(tmp_path_factory.mktemp("n"), f'name = "{name}"\nrun = "python3 bot.py"\n')
    assert BotPackage.load(root).name == name


@given(st.text(alphabet=st.characters(codec="utf-8", exclude_characters='"\\'), max_size=70))
def test_names_outside_the_rule_are_refused(tmp_path_factory: pytest.TempPathFactory, name: str) -> None:
    root = make_package(tmp_path_factory.mktemp("n"), f'name = "{name}"\nrun = "python3 bot.py"\n')
    ok = re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", name) is not None
    try:
        assert BotPackage.load(root).name == name and ok
    except PackageError as e:
        assert not ok, (name, e)


PARTS = st.sampled_from(["..", ".", "a", "b", "pkg", "", "..."])
MEMBER_NAMES = st.lists(PARTS, min_size=1, max_size=5).map("/".join)
MEMBERS = st.lists(st.tuples(st.booleans(), MEMBER_NAMES, st.sampled_from(["file", "dir", "link"]),
                             MEMBER_NAMES), min_size=1, max_size=6)


@given(MEMBERS)
def test_no_tar_writes_outside_its_folder(tmp_path_factory: pytest.TempPathFactory,
                                          members: list[tuple[bool, str, str, str]]) -> None:
    """Whatever the members' names (relative, or absolute into the folder around the
    destination) and links: either the archive is refused, or everything unpacked is inside
    the destination and every link resolves inside it; nothing is ever written outside."""
    outer = tmp_path_factory.mktemp("outer")
    dest = outer / "l1" / "l2" / "l3" / "dest"
    dest.mkdir(parents=True)
    raw = []
    for absolute, name, kind, link in members:
        full = f"{outer}/{name}" if absolute else name
        if kind == "file":
            raw.append(_info(full, data=b"x"))
        elif kind == "dir":
            raw.append(_info(full, tarfile.DIRTYPE))
        else:
            raw.append(_info(full, tarfile.SYMTYPE, link=f"{outer}/{link}" if absolute else link))
    archive = _raw_tar(outer / "t.tar.gz", raw)
    try:
        unpack(archive, dest, max_bytes=10_000)
    except PackageError:
        pass
    except (OSError, tarfile.TarError):
        pass  # e.g. a file where the archive wants a folder: refused by the OS, inside dest
    written = {p for p in outer.rglob("*") if not p.is_relative_to(dest)}
    assert written == {outer / "l1", outer / "l1" / "l2", outer / "l1" / "l2" / "l3", archive}, written
    real_dest = dest.resolve()
    for p in dest.rglob("*"):
        if p.is_symlink():
            assert Path(os.path.realpath(p)).is_relative_to(real_dest), (p, os.readlink(p))
