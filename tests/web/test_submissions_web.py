"""A bot's page in a real headless Chromium (issue 43), against a real `maag serve --web`
(nim, 300 ms a turn) that builds and validates uploads in the real sandbox: a visitor sees the
versions, the validation report, the score plot and the recent games with their replays, and
neither the build log nor the bot's logs; the owner, signed in with the bot's token (an
HttpOnly, SameSite=Strict session cookie that is not the token), sees the build log and the
bot's log of each game; the upload form stores a new version, which becomes active and
retires the one before."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from .conftest import Served
from .uploads import GOOD, need_sandbox, package, serve, targz, upload, wait_final

MARKS = ("BUILD42MARK", "LOGMARK")


def _play_games(s: Served, tokens: dict[str, str], n: int) -> None:
    """Real games between alice (under its own token) and bob: the referee's random bots, slowed
    (20 ms an action) so that they play a few games, not dozens, before they are stopped: the
    page lists the last 30 games, and the smoke games must stay among them."""
    bots = [subprocess.Popen([sys.executable, "-m", "maag.server.net.minibot", "--connect",
                              f"127.0.0.1:{s.port}", "--name", name, "--delay", "20"],
                             env={**os.environ, "MAAG_TOKEN": tok}, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL) for name, tok in tokens.items()]
    s.bots.extend(bots)
    from maag.server.storage.base import open_storage

    st = open_storage(s.db)
    try:
        end = time.monotonic() + 120
        while sum(1 for g in st.list_games(status="finished") if "alice" in g.seats) < n:
            assert time.monotonic() < end, s.log()
            time.sleep(0.2)
        s.stop_bots()
        while any(g.status == "running" for g in st.list_games()):  # a game left is ended by the referee
            assert time.monotonic() < end, s.log()
            time.sleep(0.2)
    finally:
        st.close()


def test_owner_sees_logs_visitor_does_not_and_the_form_uploads(tmp_path: Path, browser: Any) -> None:
    need_sandbox()
    s = serve(tmp_path)
    contexts: list[Any] = []
    errors: list[str] = []
    try:
        token = s.token("alice")
        noisy = package(tmp_path, "noisy", build="echo building-BUILD$((40+2))MARK",
                        prelude="import sys\nprint('LOGMARK from the bot', file=sys.stderr, flush=True)")
        st, ans, _ = upload(s, "alice", targz(noisy), token)
        assert st == 202, ans
        assert wait_final(s, "alice", 1)["status"] == "active"
        _play_games(s, {"alice": token, "bob": s.token("bob")}, 3)

        def new_page() -> Any:
            ctx = browser.new_context(viewport={"width": 1280, "height": 900})
            contexts.append(ctx)
            pg = ctx.new_page()
            pg.on("pageerror", lambda e: errors.append(str(e)))
            pg.set_default_timeout(30_000)
            return pg

        # A visitor: from the lobby's standings to the bot's page.
        visitor = new_page()
        visitor.goto(s.url + "/#/")
        visitor.click("#standings a.bot-link:text-is('alice')")
        visitor.wait_for_selector("#versions tr[data-version='1'][data-status='active']")
        assert visitor.url.endswith("#/bot/alice")
        report = visitor.inner_text("#versions")
        assert "smoke games in the sandbox" in report and "passed" in report
        assert visitor.query_selector_all("#versions .report a[href^='#/replay/']")
        assert len(visitor.query_selector_all("svg.history circle")) >= 3
        assert visitor.query_selector("svg.history polyline[data-as='alice']") is not None
        # The rating history: every finished game against bob, in order; two bots' online Elo
        # is zero-sum.
        alice, bob = (json.loads(s.get(f"/api/bots/{n}")) for n in ("alice", "bob"))
        from maag.server.storage.base import open_storage

        st = open_storage(s.db)
        try:
            played = sorted(g.id for g in st.list_games(status="finished")
                            if set(g.seats) == {"alice", "bob"})
        finally:
            st.close()
        assert [p["game_id"] for p in alice["history"]] == played == [p["game_id"] for p in bob["history"]]
        assert alice["history"][-1]["elo"] == pytest.approx(-bob["history"][-1]["elo"], abs=0.2)
        wins = sum(p["score"] for p in alice["history"])
        assert alice["history"][-1]["score_pct"] == pytest.approx(100 * wins / len(played), abs=0.01)
        # Its Elo on its page is its row of the standings (one figure for a bot everywhere).
        table = json.loads(s.get("/api/standings"))["standings"]["standings"]
        row = next(r for r in table if r["bot"] == "alice")
        assert alice["standing"] == row
        assert f"Elo {math.floor(row['elo'] + 0.5)} " in visitor.inner_text("#bot-standing")
        assert visitor.query_selector_all("#bot-games tr[data-game] a[href^='#/replay/']")
        assert visitor.query_selector("#signin") is not None and visitor.query_selector("#upload") is None
        assert not visitor.query_selector_all(".build-log, .log-tail, .version-logs")
        html = visitor.content()
        assert not any(m in html for m in MARKS)
        # A replay from the bot's page opens.
        visitor.click("#bot-games tr[data-game] a[href^='#/replay/']")
        visitor.wait_for_selector("#ply")
        # A wrong token signs nobody in.
        visitor.goto(s.url + "/#/bot/alice")
        visitor.fill("#token", "maag_wrong")
        visitor.click("#signin button")
        visitor.wait_for_selector("#signin-msg:has-text('unknown or revoked token')")
        assert visitor.query_selector("#owner") is None

        # The owner signs in with the bot's token.
        owner = new_page()
        owner.goto(s.url + "/#/bot/alice")
        owner.fill("#token", token)
        owner.click("#signin button")
        owner.wait_for_selector("#owner")
        [cookie] = owner.context.cookies()
        assert cookie["name"] == "maag_session" and cookie["value"] != token
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
        assert token not in owner.url
        assert token not in owner.evaluate("document.cookie + JSON.stringify(localStorage)")
        owner.wait_for_selector("#versions tr[data-version='1'] .build-log")
        owner.click("#versions tr[data-version='1'] .build-log summary")
        assert "BUILD42MARK" in owner.inner_text("#versions tr[data-version='1'] .build-log pre")
        tails = owner.query_selector_all("#bot-games .log-tail")
        assert tails
        owner.click("#bot-games .log-tail summary >> nth=-1")  # the oldest game: a smoke game
        assert "LOGMARK" in owner.eval_on_selector_all("#bot-games .log-tail pre",
                                                       "els => els.map(e => e.textContent).join('\\n')")
        owner.click("#versions tr[data-version='1'] .version-logs summary")
        owner.wait_for_selector("#versions tr[data-version='1'] .version-logs .log-file")
        assert "LOGMARK" in owner.inner_text("#versions tr[data-version='1'] .version-logs")

        # The upload form stores a version, which the page follows until it is active.
        pkg = tmp_path / "good.tar.gz"
        pkg.write_bytes(targz(GOOD))
        owner.set_input_files("#package", str(pkg))
        owner.click("#upload button")
        owner.wait_for_selector("#upload-msg:has-text('stored as version 2')")
        owner.wait_for_selector("#versions tr[data-version='2'][data-status='active']", timeout=180_000)
        owner.wait_for_selector("#versions tr[data-version='1'][data-status='retired']")
        assert wait_final(s, "alice", 2)["status"] == "active"

        # Signed out, the owner's page is a visitor's again.
        owner.click("#signout")
        owner.wait_for_selector("#signin")
        assert not owner.query_selector_all(".build-log, .log-tail, .version-logs")
        assert not errors, errors
    finally:
        for ctx in contexts:
            ctx.close()
        s.stop()
