"""`maag ladder --web`: the ladder's own standings, with their intervals, on the web view."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from .conftest import free_port, maag


def test_the_ladder_serves_its_standings(tmp_path: Path) -> None:
    db, web, port_file = tmp_path / "l.sqlite3", free_port(), tmp_path / "port"
    tokens = [maag("bot", "add", n, "--db", str(db)).stdout.strip().splitlines()[-1] for n in ("x", "y")]
    args = ["ladder", "--port", "0", "--port-file", str(port_file), "--db", str(db),
            "--web", f"127.0.0.1:{web}", "-o", "map=a-tiny", "--spill-dir", str(tmp_path / "spill"),
            "--name", "webtest"]
    ladder = subprocess.Popen([sys.executable, "-m", "maag.server", *args],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    bots: list[subprocess.Popen[bytes]] = []
    try:
        end = time.monotonic() + 90
        while not (port_file.exists() and port_file.read_text().strip()):
            assert time.monotonic() < end and ladder.poll() is None
            time.sleep(0.05)
        for name, tok in zip(("x", "y"), tokens, strict=True):
            bots.append(subprocess.Popen([sys.executable, "-m", "maag.server.net.minibot", "--connect",
                                          f"127.0.0.1:{port_file.read_text().strip()}", "--name", name],
                                         env={**os.environ, "MAAG_TOKEN": tok},
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        while True:
            with urllib.request.urlopen(f"http://127.0.0.1:{web}/api/standings", timeout=30) as r:
                st = json.loads(r.read())["standings"]
            if st and st["games"] >= 2:
                break
            assert time.monotonic() < end, st
            time.sleep(0.3)
        assert st["tournament"] == "webtest" and st["format"] == "ladder"
        assert {row["bot"] for row in st["standings"]} == {"x", "y"}
        assert all(len(row["elo_ci95"]) == 2 for row in st["standings"])
    finally:
        for b in bots:
            b.terminate()
        ladder.send_signal(signal.SIGINT)
        try:
            ladder.wait(60)
        except subprocess.TimeoutExpired:
            ladder.kill()
        for b in bots:
            b.wait(30)
