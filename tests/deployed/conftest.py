"""The deployed tier: maag run the way a host runs it, not the way the rest of the suite
imports it. The project is built as a wheel from a copy of its tracked files and installed
into a fresh virtualenv (not editable, not the Python that runs the tests), outside /tmp as
a host's would be; every command then runs as `VENV/bin/maag ...` in a folder of its own,
with a HOME of its own, and an environment built from scratch (what the docs tell a host to
set, nothing of the test runner's).

Everything the tier needs is built once per test session (about half a minute: the C core
is compiled once for the wheel, the dependencies come from pip's cache)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Deployed:
    """A virtualenv holding maag installed from its wheel."""

    venv: Path

    @property
    def maag(self) -> str:
        return str(self.venv / "bin" / "maag")

    def env(self, home: Path, **extra: str) -> dict[str, str]:
        """A host's environment: the virtualenv's bin first on PATH (as `source activate`
        or a systemd unit naming VENV/bin/maag leaves it), a HOME of its own, no variable of
        the test runner's (no PYTHONPATH, no MAAG_*, no CI)."""
        env = {"PATH": f"{self.venv / 'bin'}:/usr/local/bin:/usr/bin:/bin", "HOME": str(home),
               "LANG": "C.UTF-8", "VIRTUAL_ENV": str(self.venv)}
        env.update(extra)
        return env

    def run(self, args: list[str], *, cwd: Path, home: Path, timeout: float = 300,
            **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([self.maag, *args], cwd=cwd, env=self.env(home, **extra), capture_output=True,
                              text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def _tracked_copy(dest: Path) -> None:
    """The repository's tracked files (what a clone holds), not the work tree's build
    products (an editable install's .so, egg-info)."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    for name in files.decode().split("\0"):
        if not name:
            continue
        src = REPO / name
        if not src.is_file():  # deleted in the work tree, not yet committed
            continue
        out = dest / name
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, out)


@pytest.fixture(scope="session")
def deployed() -> Iterator[Deployed]:
    # Outside /tmp, where hosts keep their virtualenvs (/opt, /srv, a home): the sandbox
    # binds the Python installation that runs maag, and /tmp is special to it.
    base = Path(tempfile.mkdtemp(prefix="maag-deployed-", dir="/var/tmp"))
    try:
        src, wheels, venv = base / "src", base / "wheels", base / "venv"
        _tracked_copy(src)
        # The venv without a pip of its own, the wheel built without an isolated build
        # environment: the test runner's pip and setuptools do both (seconds each, once per
        # run); README's `pip install ".[test]"`, the suite's first step, is the isolated
        # build that proves pyproject's build requirements. maag runs only from the venv.
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        py = str(venv / "bin" / "python")
        quiet = {"capture_output": True, "text": True}
        r = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                            str(src), "-w", str(wheels)], **quiet)
        assert r.returncode == 0, r.stdout + r.stderr
        (wheel,) = wheels.glob("maag-*.whl")
        r = subprocess.run([sys.executable, "-m", "pip", "--python", py, "install", "-q", str(wheel)],
                           **quiet)
        assert r.returncode == 0, r.stdout + r.stderr
        # Installed from the wheel, not linked to the checkout.
        r = subprocess.run([py, "-c", "import maag.server; print(maag.server.__file__)"], **quiet, cwd=base)
        assert r.returncode == 0 and str(venv) in r.stdout, r.stdout + r.stderr
        yield Deployed(venv)
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def host_dirs(tmp_path: Path) -> tuple[Path, Path]:
    """(the folder a command runs in, the host's HOME): both empty."""
    cwd, home = tmp_path / "cwd", tmp_path / "home"
    cwd.mkdir()
    home.mkdir()
    return cwd, home


def sandbox_usable() -> str | None:
    """Why hosted bots cannot run here, or None."""
    if os.geteuid() != 0:
        return "the sandbox's uid per bot needs root"
    if shutil.which("bwrap") is None:
        return "bubblewrap is not installed"
    return None
