"""A command loads only what it uses: the command line finds commands through entry points
and imports just the one that runs (maag.server.cli)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PROBE = """
import json, sys
from maag.server.cli import main
rc = main(sys.argv[1:])
print(json.dumps({"rc": rc, "modules": sorted(m for m in sys.modules if m.startswith("maag"))}))
"""


def loaded(tmp_path: Path, *argv: str) -> tuple[int, set[str]]:
    r = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, timeout=120,
                       cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    return out["rc"], set(out["modules"])


def test_bot_add_loads_neither_the_c_core_nor_an_agent(tmp_path: Path) -> None:
    rc, mods = loaded(tmp_path, "bot", "add", "alice", "--db", str(tmp_path / "db.sqlite3"))
    assert rc == 0
    assert "maag.server.cli.bot" in mods and "maag.server.storage.base" in mods
    heavy = {"maag.engine._core", "maag.engine._lowlevel", "maag.engine.game", "maag.bots",
             "maag.bots.agents", "maag.clients", "maag.server.net.server", "maag.server.cli.match",
             "maag.server.cli.serve"}
    assert not mods & heavy, sorted(mods & heavy)


def test_games_lists_every_registered_game(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "maag.server", "games", "--json"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    from maag.engine import registry

    games = json.loads(r.stdout)
    assert list(games) == registry.names()
    assert {o["name"] for o in games["heroes"]["options"]} >= {"map", "ap", "draws"}


def test_a_bad_game_option_is_a_one_line_error_not_a_traceback(tmp_path: Path) -> None:
    for argv, message in [
        (["match", "random", "random", "--game", "nim", "-o", "bogus=1"], "unknown nim option(s): bogus"),
        (["serve", "--port", "0", "-o", "map=zzz"], "map must be one of a, a-small, a-tiny, not 'zzz'"),
        (["bot", "check", "--game", "nim", "-o", "ap=0", "--", "true"], "ap must be an integer in 1..8"),
    ]:
        r = subprocess.run([sys.executable, "-m", "maag.server", *argv, "--db", str(tmp_path / "x.sqlite3")]
                           if argv[0] != "bot" else [sys.executable, "-m", "maag.server", *argv],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr, r.stderr
