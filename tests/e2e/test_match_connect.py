"""`maag match --connect` against a running referee (`maag serve`, automatic pairing): the
match plays exactly the games it asked for. Before, the referee could pair the two bots once
more between the match's last result and the stopping of their processes, and store that
game as lost on time; the match now caps each bot's hello.max_games at what it still
needs."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from maag.server.storage.base import SQLiteStorage

MAAG = [sys.executable, "-m", "maag.server"]


def test_a_connected_match_plays_exactly_its_games(tmp_path: Path) -> None:
    db = tmp_path / "serve.sqlite3"
    tokens = [subprocess.run([*MAAG, "bot", "add", name, "--db", str(db)], capture_output=True, text=True,
                             check=True).stdout.strip().splitlines()[-1] for name in ("alpha", "beta")]
    port_file = tmp_path / "port"
    serve = subprocess.Popen([*MAAG, "serve", "--db", str(db), "--port", "0", "--port-file", str(port_file),
                              "--map", "a-tiny", "--tc", "2s"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not (port_file.exists() and port_file.read_text().strip()):
            assert serve.poll() is None and time.monotonic() < deadline, "maag serve did not start"
            time.sleep(0.05)
        port = int(port_file.read_text())
        for _ in range(2):  # twice: the bots of the first run must not linger into the second
            r = subprocess.run([*MAAG, "match", "random", "random", "--connect", f"127.0.0.1:{port}",
                                "--token-a", tokens[0], "--token-b", tokens[1], "--games", "3", "--json"],
                               capture_output=True, text=True, timeout=300)
            assert r.returncode == 0, r.stderr[-3000:]
            lines = [json.loads(x) for x in r.stdout.splitlines()]
            assert [x["n"] for x in lines if x.get("event") == "game"] == [1, 2, 3]
            assert all(x["plies"] > 0 for x in lines if x.get("event") == "game")
        time.sleep(1.0)  # what the referee would have paired after the match has happened by now
        games = SQLiteStorage(db).list_games()
        assert len(games) == 6, [(g.id, g.status, g.reason) for g in games]
        assert all(g.status == "finished" and g.reason in ("rules", "turn_limit") for g in games), \
            [(g.id, g.status, g.reason) for g in games]
    finally:
        serve.terminate()
        serve.wait(timeout=30)
