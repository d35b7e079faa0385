"""pimc and ismcts through `maag match`: real bot processes on an embedded referee, which
sends each only its seat's observation (small map, short turns; nothing is asserted about
speed or strength)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def test_match_between_the_determinized_agents(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "maag.server", "match", "pimc:inner=ne-mcts,k=3,combine=sum",
                        "ismcts:c=0,rollout=greedy", "--games", "2", "--concurrency", "2", "--tc", "300ms",
                        "--map", "a-tiny", "--seed", "3", "--json", "--db", str(tmp_path / "m.sqlite3")],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    summary = lines[-1]
    assert summary["games"] == 2 == summary["wins"] + summary["draws"] + summary["losses"]
    games = [g for g in lines[:-1] if g.get("event") == "game"]
    assert len(games) == 2
    for g in games:  # their plans are legal in the true game (lateness is not judged here)
        assert g["reason"] != "illegal_actions", g
