"""tests/web: the web view with real components: a `maag serve --web` process (or a referee
and its web server in the test's event loop), real bot processes, and a real headless
Chromium (Debian's `chromium`, driven by Playwright with that browser: nothing is
downloaded). Without the browser the browser tests fail when CI is set, and are skipped
(saying why) otherwise, as the PostgreSQL tests are."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = os.environ.get("MAAG_TEST_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _need(why: str) -> None:
    """Fail in CI (CI set, as .ci/run sets it), skip elsewhere (tests/conftest.py's rule)."""
    if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
        pytest.fail(why)
    pytest.skip(why)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A headless Chromium (the system's), for the module's tests."""
    if not os.access(CHROMIUM, os.X_OK):
        _need(f"no Chromium at {CHROMIUM}: apt-get install chromium (or set MAAG_TEST_CHROMIUM)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _need("the playwright package is missing: pip install -e '.[test]'")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh page; the test fails on any script error in it."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.set_default_timeout(30_000)
    yield pg
    ctx.close()
    assert not errors, errors


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def maag(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "maag.server", *args], capture_output=True, text=True,
                          timeout=timeout)


@dataclass
class Served:
    """A `maag serve --web` process on free ports, with its SQLite database."""

    tmp: Path
    options: tuple[str, ...] = ()
    db: Path = field(init=False)
    port: int = 0
    url: str = ""
    proc: subprocess.Popen[bytes] | None = None
    bots: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def start(self) -> None:
        self.db = self.tmp / "web.sqlite3"
        web = free_port()
        port_file = self.tmp / "port"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "maag.server", "serve", "--port", "0", "--port-file", str(port_file),
             "--db", str(self.db), "--web", f"127.0.0.1:{web}", "--spill-dir", str(self.tmp / "spill"),
             "--max-games-per-minute", "0", *self.options],
            stdout=subprocess.DEVNULL, stderr=open(self.tmp / "serve.log", "wb"))
        end = time.monotonic() + 90
        while not (port_file.exists() and port_file.read_text().strip()):
            if time.monotonic() > end or self.proc.poll() is not None:
                log = (self.tmp / "serve.log").read_text()[-2000:]
                raise RuntimeError(f"maag serve did not start: {log}")
            time.sleep(0.05)
        self.port = int(port_file.read_text())
        self.url = f"http://127.0.0.1:{web}"

    def token(self, name: str) -> str:
        r = maag("bot", "add", name, "--replace", "--db", str(self.db))
        assert r.returncode == 0, r.stderr
        return r.stdout.strip().splitlines()[-1]

    def minibot(self, name: str, *extra: str) -> subprocess.Popen[bytes]:
        """The referee's random bot as a process, under a new token for `name`."""
        env = {**os.environ, "MAAG_TOKEN": self.token(name)}
        p = subprocess.Popen([sys.executable, "-m", "maag.server.net.minibot", "--connect",
                              f"127.0.0.1:{self.port}", "--name", name, *extra],
                             env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.bots.append(p)
        return p

    def stop_bots(self) -> None:
        for p in self.bots:
            if p.poll() is None:
                p.terminate()
        for p in self.bots:
            p.wait(30)
        self.bots.clear()

    def log(self) -> str:
        """The end of the server's log (connections and games), for failure messages."""
        return (self.tmp / "serve.log").read_text(errors="replace")[-3000:]

    def get(self, path: str) -> bytes:
        with urllib.request.urlopen(self.url + path, timeout=30) as r:
            return bytes(r.read())

    def stop(self) -> None:
        self.stop_bots()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    """`maag serve --web` on heroes' smallest map (short games), 1 s a turn for bots."""
    s = Served(tmp_path, ("-o", "map=a-tiny", "--tc", "1s"))
    s.start()
    yield s
    s.stop()
