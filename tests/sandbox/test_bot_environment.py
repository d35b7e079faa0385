"""A command-line bot (not sandboxed) in `maag tournament`, with MAAG_DB and other secrets
in the host's environment: the bot's environment holds none of them (only the path, home,
locale and its MAAG_* variables), unless the host passes one on purpose with `--pass-env`.
The bot is hostile/env_reader run as a command line: it plays an illegal action when it
finds a secret (`--max-illegal 1`: the game is lost with an `illegal` verdict)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from maag.server.storage.base import SQLiteStorage

from .conftest import MAAG, NONCE, SECRETS, command_line

pytestmark = pytest.mark.timeout(300)


@pytest.mark.parametrize("pass_env", [False, True], ids=["hidden", "passed-on-purpose"])
def test_a_tournament_bot_does_not_see_maag_db(tmp_path: Path, pass_env: bool) -> None:
    db = tmp_path / f"SECRET-{NONCE}.sqlite3"  # the host's database, named in MAAG_DB only
    logs = tmp_path / "logs"
    bot = command_line(tmp_path, "env_reader", {})
    cmd = [*MAAG, "tournament", "--bot", f"probe={bot}", "--bot", "random", "--game", "nim",
           "--games-per-pair", "2", "--tc", "300ms", "--max-illegal", "1", "--log-dir", str(logs), "--json",
           *(["--pass-env", "MAAG_DB"] if pass_env else [])]
    r = subprocess.run(cmd, env={**os.environ, **SECRETS, "MAAG_DB": str(db)}, capture_output=True, text=True,
                       timeout=240, cwd=tmp_path)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    st = SQLiteStorage(db)  # the host did use MAAG_DB
    try:
        games = st.list_games()
        results = [(st.get_replay(g.id) or {}).get("result") for g in games]
    finally:
        st.close()
    assert len(games) == 2 and all(g.status == "finished" for g in games), games
    text = (logs / "probe.log").read_text(errors="replace")
    probes = [line for line in text.splitlines() if line.startswith("PROBE ")]
    assert probes, text[-2000:]
    kinds = [res["verdict"]["kind"] if res and res["verdict"] else None for res in results]
    if pass_env:  # the probe does find what the host passes on purpose
        assert '"MAAG_DB"' in probes[0] and '"breached": true' in probes[0], probes
        assert kinds == ["illegal", "illegal"], results
    else:
        assert '"MAAG_DB"' not in probes[0] and '"breached": false' in probes[0], probes
        assert kinds == [None, None], results
        for k, v in SECRETS.items():
            assert k not in text and v not in text
        assert str(db) not in text and NONCE not in text
