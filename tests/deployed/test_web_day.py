"""The web view and uploads as docs/web.md and docs/hosting.md tell a host, maag installed
from its wheel: `maag sandbox check` passes, the doc's `maag ladder ... --web` serves the page,
a participant sends a package with the doc's `maag bot upload` line and its own token, the
host's process builds and validates it in the sandbox, and a real headless Chromium shows the
version active on the bot's page; the host makes its account with the doc's `maag host add` and
voids a game through the web view. Each command is read from the docs (tests/deployed/docs.py);
only this machine's addresses, ports and database are put in."""

from __future__ import annotations

import http.cookiejar
import json
import os
import shutil
import signal
import subprocess
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from .conftest import REPO, Deployed, sandbox_usable
from .docs import find
from .test_hosts_day import free_port, stop, tail, wait_listening

pytestmark = pytest.mark.timeout(600)
CHROMIUM = os.environ.get("MAAG_TEST_CHROMIUM", "/usr/bin/chromium")


def test_an_upload_through_the_web_view_as_the_docs_tell_it(deployed: Deployed, host_dirs: tuple[Path, Path],
                                                            postgres_db: str, tmp_path: Path) -> None:
    why = sandbox_usable()
    if why:
        pytest.skip(why)
    cwd, home = host_dirs
    env = deployed.env(home)

    def sh(text: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-c", text], cwd=cwd, env={**env, **extra}, capture_output=True,
                              text=True, timeout=300, stdin=subprocess.DEVNULL)

    r = sh(find("hosting.md", r"^maag sandbox check$").text)
    assert r.returncode == 0, r.stdout + r.stderr
    port, web = free_port(), free_port()
    ladder_line = find("web.md", r"maag ladder .*--web").text
    text = (ladder_line.replace("--port 7878", f"--port {port}")
            .replace("--web 0.0.0.0:8080", f"--web 127.0.0.1:{web}")
            .replace("postgresql://maag@db/ladder", postgres_db))
    assert text != ladder_line
    r = sh(f"maag bot add alice --db '{postgres_db}'")
    assert r.returncode == 0, r.stderr
    token = r.stdout.strip().splitlines()[-1]
    log = tmp_path / "ladder.log"
    proc = subprocess.Popen(["bash", "-c", "exec " + text], cwd=cwd, env=env, stdout=open(log, "wb"),
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        wait_listening(web, proc, log)
        # The participant's side: its package folder, its token, the doc's command.
        shutil.copytree(REPO / "examples" / "python-bot", tmp_path / "mybot")
        upload = find("web.md", r"maag bot upload").text.replace("http://host.example:8080",
                                                                   f"http://127.0.0.1:{web}")
        r = subprocess.run(["bash", "-c", upload], cwd=tmp_path, env={**env, "MAAG_TOKEN": token},
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0 and "alice@1\tactive" in r.stdout, r.stdout + r.stderr + tail(log)()
        # What a visitor sees in a real browser.
        if not os.access(CHROMIUM, os.X_OK):
            if os.environ.get("CI"):
                pytest.fail(f"no Chromium at {CHROMIUM}")
            pytest.skip("no Chromium")
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
            b = p.chromium.launch(executable_path=CHROMIUM, args=args)
            try:
                page = b.new_page()
                page.goto(f"http://127.0.0.1:{web}/#/bot/alice")
                page.wait_for_selector("#versions tr[data-version='1'][data-status='active']", timeout=30_000)
                assert "undefined" not in page.inner_text("#versions")
            finally:
                b.close()
        # The host's ruling from the web view: docs/web.md's `maag host add`, a sign-in, a void
        # of one of the upload's smoke games (a finished game on this database).
        r = sh(find("web.md", r"^maag host add").text, MAAG_DB=postgres_db)
        assert r.returncode == 0, r.stderr
        host_token = r.stdout.strip().splitlines()[-1]
        listed = urllib.request.urlopen(f"http://127.0.0.1:{web}/api/games", timeout=30).read()
        games = json.loads(listed)["games"]
        smoke = next(g["game_id"] for g in games if g["status"] == "finished")
        jar = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))

        def post(path: str, body: dict[str, str]) -> dict[str, Any]:
            req = urllib.request.Request(f"http://127.0.0.1:{web}{path}", data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"}, method="POST")
            return dict(json.loads(jar.open(req, timeout=30).read()))

        assert post("/api/host/session", {"token": host_token}) == {"host": "ann"}
        ruling = post(f"/api/games/{smoke}/void", {"why": "a test of the host's web ruling"})
        assert (ruling["kind"], ruling["who"]) == ("void", "ann")
        r = sh(f"maag game show {smoke}", MAAG_DB=postgres_db)
        assert "voided" in r.stdout and "by ann" in r.stdout, r.stdout + r.stderr
        assert stop(proc, signal.SIGTERM, timeout=60) < 60
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert sorted(os.listdir(cwd)) == [], "made in the folder the host's commands ran in"
