"""The page's header and a rejected version's report, as a person sees them in a real
headless Chromium against a real `maag serve --web` (issue 54's web glitches):

- a view with nothing live (a replay, a bot's page) never says "disconnected" because the
  view before it closed its own WebSocket; a live view still says "live";
- a version rejected by `maag bot check` (its report holds the check alone) reads as such,
  not "undefined (undefined, undefined): failed"."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from .conftest import Served
from .test_browser import _one_stored_game
from .uploads import need_sandbox, package, serve, targz, upload, wait_final


def _status(page: Any) -> str:
    return str(page.inner_text("#status")).strip()


def test_a_replay_opened_from_the_live_lobby_is_not_marked_disconnected(served: Served, page: Any) -> None:
    gid = _one_stored_game(served)
    page.goto(served.url + "/#/")
    page.wait_for_function("document.getElementById('status').textContent === 'live'")
    page.goto(served.url + f"/#/replay/{gid}")
    page.wait_for_selector("#board .board")
    page.wait_for_timeout(1000)  # the lobby's socket has closed by now
    assert _status(page) == ""
    page.goto(served.url + "/#/bot/r1")
    page.wait_for_selector("#versions, .none")
    page.wait_for_timeout(500)
    assert _status(page) == ""
    # Back to the lobby: live again.
    page.goto(served.url + "/#/")
    page.wait_for_function("document.getElementById('status').textContent === 'live'")


def test_the_lobby_says_disconnected_when_the_server_goes(served: Served, page: Any) -> None:
    page.goto(served.url + "/#/")
    page.wait_for_function("document.getElementById('status').textContent === 'live'")
    # SIGTERM with a page open: the server closes its WebSockets and stops at once (it waited
    # for aiohttp's own time limit, 30 s and more, while a page held one open).
    t0 = time.monotonic()
    served.stop()
    assert time.monotonic() - t0 < 10
    page.wait_for_function("document.getElementById('status').textContent === 'disconnected'")


def test_a_version_rejected_by_the_check_reads_as_such(tmp_path: Path, page: Any) -> None:
    need_sandbox()
    s = serve(tmp_path)
    try:
        token = s.token("alice")
        # A bot that never answers its first situation: `maag bot check` fails it.
        mute = package(tmp_path, "mute", run="python3 -c 'import time; time.sleep(600)'")
        st, ans, _ = upload(s, "alice", targz(mute), token)
        assert st == 202, ans
        v = wait_final(s, "alice", 1, timeout=300)
        assert v["status"] == "rejected" and v["reason"].startswith("bot check failed"), v
        page.goto(s.url + "/#/bot/alice")
        page.wait_for_selector("#versions tr[data-version='1'] .report")
        text = page.inner_text("#versions tr[data-version='1']")
        assert "undefined" not in text, text
        assert "maag bot check's situations: failed" in text, text
    finally:
        s.stop()
