"""Every failure a participant causes reaches the participant (issue 54): the bot's own
output is in a rejected submission's report (`maag bot submit`, `maag bot versions --logs`)
whichever stage rejected it; a bot whose code raises on every turn (the Python SDK resigns
each game for it) is refused by `maag bot check` and by the submission's validation, with
its exception; `maag replay ID` shows a hosted bot's log tail for a forfeit before the game
(startup) as for one during it (crash). Real packages, the real sandbox, `maag` processes."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

from .test_submissions import GOOD, _need_sandbox, maag

MARK = "PARTICIPANT-MARK-7431"


def _variant(tmp: Path, name: str, *, prelude: str = "", raise_in_turn: bool = False) -> Path:
    """examples/python-bot, with `prelude` run at import, or raising in every turn."""
    folder = tmp / name
    shutil.copytree(GOOD, folder)
    (folder / "maag-bot.toml").write_text(f'name = "{name}"\nrun = "python3 bot.py"\n')
    bot = folder / "bot.py"
    text = bot.read_text()
    head, sep, rest = text.partition("from __future__ import annotations\n")
    text = head + sep + prelude + "\n" + rest
    if raise_in_turn:
        # Every callback the SDK may call for a turn raises.
        text = text.replace("    def choose_turn(self", f"    def choose_turn(self, *a, **k):\n"
                            f"        raise RuntimeError('{MARK} in choose_turn')\n\n    def _unused(self", 1)
        assert MARK in text
    bot.write_text(text)
    return folder


def test_a_startup_crash_is_shown_by_submit_and_versions_logs(tmp_path: Path) -> None:
    _need_sandbox()
    db = tmp_path / "db.sqlite3"
    assert maag("bot", "add", "alice", "--db", str(db)).returncode == 0
    pkg = _variant(tmp_path, "crasher", prelude=f"raise SystemExit('{MARK} at import')")
    common = ["--db", str(db), "--game", "nim", "--tc", "300ms", "--log-dir", str(tmp_path / "logs")]
    r = maag("bot", "submit", "alice", str(pkg), *common)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "alice@1\trejected" in r.stdout and "bot check failed" in r.stdout, r.stdout
    assert "the bot's output in maag bot check ends with:" in r.stdout and MARK in r.stdout, r.stdout
    r = maag("bot", "versions", "alice", "--logs", "--db", str(db))
    assert r.returncode == 0 and MARK in r.stdout, r.stdout
    # Without --logs the listing is the versions', not the bot's output; the JSON without
    # logs leaves it out (the web view shows it to the owner alone).
    r = maag("bot", "versions", "alice", "--db", str(db))
    assert MARK not in r.stdout
    r = maag("bot", "versions", "alice", "--json", "--db", str(db))
    assert MARK not in r.stdout
    r = maag("bot", "versions", "alice", "--json", "--logs", "--db", str(db))
    (v,) = json.loads(r.stdout)
    assert MARK in v["report"]["bot_output"]["text"]
    # The whole log stays in the version's log folder.
    assert any(MARK in p.read_text(errors="replace") for p in (tmp_path / "logs").rglob("*-check.log"))


def test_a_bot_raising_every_turn_fails_the_check_and_is_rejected(tmp_path: Path) -> None:
    pkg = _variant(tmp_path, "raiser", raise_in_turn=True)
    # maag bot check of the command, outside the sandbox: a failure naming the resigns.
    env_cmd = f"{sys.executable} {pkg / 'bot.py'}"
    r = subprocess.run([sys.executable, "-m", "maag.server", "bot", "check", "--game", "nim", "--tc", "300ms",
                        env_cmd], capture_output=True, text=True, timeout=300, cwd=pkg)
    assert r.returncode != 0, r.stdout + r.stderr
    assert "resigned in every situation" in r.stdout + r.stderr, r.stdout + r.stderr
    assert MARK in r.stdout + r.stderr  # its stderr: the traceback
    _need_sandbox()
    db = tmp_path / "db.sqlite3"
    assert maag("bot", "add", "bob", "--db", str(db)).returncode == 0
    r = maag("bot", "submit", "bob", str(pkg), "--db", str(db), "--game", "nim", "--tc", "300ms")
    assert r.returncode == 1, r.stdout + r.stderr
    assert re.search(r"bob@1\trejected.*resigned in every situation", r.stdout), r.stdout
    assert MARK in r.stdout, r.stdout
    r = maag("bot", "versions", "bob", "--json", "--db", str(db))
    assert [v["status"] for v in json.loads(r.stdout)] == ["rejected"]


def test_maag_replay_shows_the_log_of_a_startup_forfeit(tmp_path: Path) -> None:
    _need_sandbox()
    db = tmp_path / "db.sqlite3"
    pkg = _variant(tmp_path, "noshow", prelude=f"import sys\nprint('{MARK} before dying', flush=True)\n"
                                              "sys.exit(3)")
    r = maag("match", str(pkg), "random", "--game", "nim", "--games", "1", "--json", "--db", str(db))
    assert r.returncode == 0, r.stdout + r.stderr
    (game,) = [json.loads(x) for x in r.stdout.splitlines() if x.startswith('{"event"')]
    assert game["verdict"]["kind"] in ("startup", "crash"), game
    r = maag("replay", str(game["game_id"]), "--db", str(db))
    assert MARK in r.stdout and "log ends with" in r.stdout, r.stdout + r.stderr
