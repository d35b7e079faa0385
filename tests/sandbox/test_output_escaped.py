"""Issue 53: what a bot or its build printed never drives the host's terminal nor fools a
reader. Hostile packages print ESC sequences (OSC 0 sets the window title, OSC 52 writes the
clipboard, CSI 2J clears the screen, the 8-bit CSI), a carriage return faking a line, a bidi
override and isolate, and rich markup (`[red]`, `[link=file:///etc/passwd]`); the commands
that show their logs and reasons run as real processes on a real SQLite database with the
real sandbox:

- `maag match PKG random --game nim` whose build fails (the error names the build log's end);
- `maag replay ID` of a game a hosted bot lost by crashing (its log's end is shown);
- `maag bot submit` of a package whose build fails, and `maag bot versions` (text and
  `--json --logs`);
- the web view's JSON of that bot's page, its version's logs, the replay and the games list.

Each output holds no raw control, bidi or format character (no ESC byte), and the hostile
text is there, escaped (`\\x1b`, `\\u202e`), not dropped; rich markup is shown as it is."""

from __future__ import annotations

import http.cookiejar
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import unicodedata
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.timeout(600)

# What the hostile programs print (each line on stdout and stderr).
ATTACK_LINES = [
    "\x1b]0;PWNED-TITLE\x07 window title",
    "\x1b]52;c;cHduZWQ=\x07 clipboard",
    "\x1b[2J\x1b[H\x9b2J screen cleared",
    "all tests passed\rFAKE-LINE over it",
    "\u202eevil-override\u202c and \u2066isolate\u2069",
    "[red]x[/red] and [link=file:///etc/passwd]click[/link]",
]
NOISE = ("import sys\n\n\ndef attack() -> None:\n"
         f"    for line in {ATTACK_LINES!r}:\n"
         "        print(line, flush=True)\n"
         "        print(line, file=sys.stderr, flush=True)\n\n\n"
         "attack()\n")
CRASHING_BOT = """
import os

import noise  # prints the attack at start-up

from maag.clients import Bot, TurnResult, run_bot_blocking


class Crashing(Bot):
    name = "noisy"
    want_legal = True
    games = ("nim",)

    def choose_turn(self, observation, limit):
        noise.attack()  # once more, just before it dies
        os._exit(3)


run_bot_blocking(Crashing, os.environ["MAAG_CONNECT"], token=os.environ["MAAG_TOKEN"])
"""


def unsafe(text: str) -> list[str]:
    """Every character of `text` that must not reach a terminal or a page raw."""
    return sorted({f"U+{ord(c):04X}" for c in text
                   if c not in "\n\t" and unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp")})


def assert_shown_escaped(raw: bytes, what: str, *, markup: bool = True) -> None:
    """`raw` (a command's output) holds no ESC byte and no control, bidi or format character,
    and the attack is there as escapes, so a reader sees what the bot printed."""
    text = raw.decode("utf-8")
    assert b"\x1b" not in raw and unsafe(text) == [], f"{what}: raw {unsafe(text)} in {text[-3000:]!r}"
    for shown in ("\\x1b]0;PWNED-TITLE\\x07", "\\x1b]52;c;cHduZWQ=", "\\x1b[2J", "\\x9b2J",
                  "all tests passed\\rFAKE-LINE", "\\u202eevil-override\\u202c", "\\u2066isolate\\u2069"):
        assert shown in text, f"{what}: {shown!r} not shown in {text[-3000:]!r}"
    if markup:  # shown as written: not read as rich markup (which would drop it)
        assert "[red]x[/red]" in text and "[link=file:///etc/passwd]click[/link]" in text, text[-3000:]


def need_sandbox() -> None:
    if shutil.which("bwrap") is None or os.geteuid() != 0:
        if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
            pytest.fail("hosted packages run in the sandbox: needs bubblewrap and root (CI)")
        pytest.skip("hosted packages run in the sandbox: needs bubblewrap and root")


def maag(*args: str | Path, tmp: Path) -> subprocess.CompletedProcess[bytes]:
    """A `maag` command as its own process; its output as bytes, exactly as a terminal gets it."""
    return subprocess.run([sys.executable, "-m", "maag.server", *map(str, args)], capture_output=True,
                          timeout=300, stdin=subprocess.DEVNULL, env={**os.environ, "TMPDIR": str(tmp)})


def package(folder: Path, *, build: str | None, bot: str) -> Path:
    folder.mkdir(parents=True)
    # Notes are the participant's text too (the web view shows the manifest): TOML escapes.
    notes = "\\u001b]0;NOTES-TITLE\\u0007 \\u202enotes"
    (folder / "maag-bot.toml").write_text('name = "noisy"\nrun = "python3 bot.py"\n'
                                          + (f'build = "{build}"\n' if build else "")
                                          + f'notes = "{notes}"\n')
    (folder / "noise.py").write_text(NOISE)
    (folder / "bot.py").write_text(bot)
    return folder


@dataclass
class World:
    """Everything the hostile packages left, made once for the module's tests."""

    tmp: Path
    db: Path
    token: str
    failed_match: subprocess.CompletedProcess[bytes]
    submitted: subprocess.CompletedProcess[bytes]
    crash_game: int


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    need_sandbox()
    tmp = tmp_path_factory.mktemp("escaped")
    (tmp / "tmp").mkdir()
    db = tmp / "web.sqlite3"  # the name Served (the web view's process) opens
    added = maag("bot", "add", "noisy", "--db", db, tmp=tmp / "tmp")
    assert added.returncode == 0, added.stderr
    token = added.stdout.decode().strip().splitlines()[-1]
    failing = package(tmp / "failing", build="python3 noise.py; exit 3", bot="raise SystemExit(1)\n")
    crashing = package(tmp / "crashing", build=None, bot=CRASHING_BOT)
    failed_match = maag("match", failing, "random", "--game", "nim", "--games", "1", "--tc", "300ms",
                        "--db", db, tmp=tmp / "tmp")
    assert failed_match.returncode == 1, failed_match.stderr[-3000:]
    submitted = maag("bot", "submit", "noisy", failing, "--db", db, "--game", "nim", "--tc", "300ms",
                     "--log-dir", tmp / "logs", tmp=tmp / "tmp")
    assert submitted.returncode == 1, submitted.stderr[-3000:]
    played = maag("match", crashing, "random", "--game", "nim", "--games", "1", "--tc", "300ms",
                  "--db", db, "--json", tmp=tmp / "tmp")
    assert played.returncode == 0, played.stderr[-3000:]
    [game] = [json.loads(line) for line in played.stdout.decode().splitlines() if '"event": "game"' in line]
    assert game["verdict"] is not None and game["seat1"] == "noisy", game
    return World(tmp, db, token, failed_match, submitted, game["game_id"])


def test_maag_match_whose_build_fails(world: World) -> None:
    err = world.failed_match.stderr
    assert b"the build failed" in err, err[-3000:]
    assert_shown_escaped(world.failed_match.stdout + err, "maag match (a failed build)")


def test_maag_replay_of_a_crashed_hosted_bot(world: World) -> None:
    r = maag("replay", str(world.crash_game), "--db", world.db, tmp=world.tmp / "tmp")
    assert r.returncode == 0, r.stderr
    assert b"log ends with:" in r.stdout, r.stdout
    assert_shown_escaped(r.stdout + r.stderr, "maag replay")


def test_maag_bot_submit_and_versions(world: World) -> None:
    out = world.submitted.stdout + world.submitted.stderr
    assert b"rejected" in out and b"build failed" in out, out[-3000:]
    assert_shown_escaped(out, "maag bot submit")
    listed = maag("bot", "versions", "noisy", "--db", world.db, tmp=world.tmp / "tmp")
    assert listed.returncode == 0, listed.stderr
    assert_shown_escaped(listed.stdout + listed.stderr, "maag bot versions")
    # As JSON, the logs are data: every control and non-ASCII character a JSON escape, exact.
    logs = maag("bot", "versions", "noisy", "--json", "--logs", "--db", world.db, tmp=world.tmp / "tmp")
    assert logs.returncode == 0, logs.stderr
    assert b"\x1b" not in logs.stdout + logs.stderr and unsafe((logs.stdout + logs.stderr).decode()) == []
    [v] = json.loads(logs.stdout)
    assert ATTACK_LINES[0] in v["build_log"] and ATTACK_LINES[4] in v["build_log"]


@pytest.fixture(scope="module")
def web_url(world: World) -> Iterator[str]:
    """`maag serve --web` on the world's database: the web view's base URL."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    port_file = world.tmp / "port"
    with open(world.tmp / "serve.log", "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "maag.server", "serve", "--port", "0", "--port-file",
                                 str(port_file), "--db", str(world.db), "--web", f"127.0.0.1:{port}",
                                 "--spill-dir", str(world.tmp / "spill"), "--game", "nim", "--tc", "300ms",
                                 "--upload-log-dir", str(world.tmp / "upload-logs")],
                                stdout=subprocess.DEVNULL, stderr=log, stdin=subprocess.DEVNULL)
    try:
        end = time.monotonic() + 90
        while not (port_file.exists() and port_file.read_text().strip()):
            assert proc.poll() is None and time.monotonic() < end, \
                (world.tmp / "serve.log").read_text(errors="replace")[-3000:]
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def test_the_web_views_json_has_no_raw_control_character(world: World, web_url: str) -> None:
    """The page shows these strings with textContent; what it gets is escaped server-side, so
    no ESC and no bidi override reaches it, and the owner still reads what the bot printed."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    req = urllib.request.Request(web_url + "/api/session", data=json.dumps({"token": world.token}).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    with opener.open(req, timeout=30) as r:
        assert json.loads(r.read()) == {"bot": "noisy"}

    def get(path: str) -> Any:
        with opener.open(web_url + path, timeout=60) as r:
            return json.loads(r.read())

    page = get("/api/bots/noisy")
    assert page["owner"]
    paths = ["/api/bots/noisy/versions/1/logs", f"/api/replay/{world.crash_game}", "/api/games"]
    got = {"/api/bots/noisy": page, **{path: get(path) for path in paths}}
    bad = {path: unsafe("".join(_strings(answer))) for path, answer in got.items()}
    assert not any(bad.values()), bad
    [v] = page["versions"]
    assert "\\x1b]0;PWNED-TITLE\\x07" in v["build_log"] and "\\u202eevil-override" in v["build_log"]
    assert "\\x1b]0;PWNED-TITLE" in v["reason"]
    assert v["manifest"]["notes"] == "\\x1b]0;NOTES-TITLE\\x07 \\u202enotes"
    tails = [t for g in page["games"] for t in g.get("log_tails", {}).values()]
    assert any("\\x1b]52;c;cHduZWQ=" in t and "\\u2066isolate\\u2069" in t for t in tails), page["games"]
