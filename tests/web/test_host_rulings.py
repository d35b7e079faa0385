"""The host rules from the web view (issue 54): a real `maag serve --web` with real bot
processes playing real games, a host account made by `maag host add`, its sign-in and rulings
over HTTP (cookies kept as a browser keeps them) and in a real headless Chromium.

- nobody but a signed-in host voids or pardons (no cookie, a bot owner's, a wrong token, a
  cross-site page, a host whose token was replaced);
- a ruling is recorded under the host account's name with its why, the game leaves the
  standings, a second void of the same game is refused with the reason;
- on the page: the host signs in at #/host, voids from the replay page and pardons from the
  bot's page; a visitor sees no form.
"""

from __future__ import annotations

import http.cookiejar
import json
import time
import urllib.error
import urllib.request
from typing import Any

from maag.server.storage.base import open_storage

from .conftest import Served, maag


class Client:
    """An HTTP client that keeps cookies, as a browser does (one per person)."""

    def __init__(self, base: str, origin: str | None = None) -> None:
        self.base = base
        self.origin = origin
        jar = urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
        self.opener = urllib.request.build_opener(jar)

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, dict[str, Any]]:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        if self.origin:
            req.add_header("Origin", self.origin)
        try:
            with self.opener.open(req, timeout=30) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())


def _finished_games(s: Served, n: int) -> list[int]:
    """Let the two bots play until `n` games are finished, stop them, return the finished ids."""
    st = open_storage(s.db)
    try:
        end = time.monotonic() + 120
        while len(st.list_games(status="finished")) < n:
            assert time.monotonic() < end, s.log()
            time.sleep(0.2)
        s.stop_bots()
        while any(g.status == "running" for g in st.list_games()):
            assert time.monotonic() < end, s.log()
            time.sleep(0.2)
        return sorted(g.id for g in st.list_games(status="finished"))
    finally:
        st.close()


def _host_token(s: Served, name: str, *extra: str) -> str:
    r = maag("host", "add", name, *extra, "--db", str(s.db))
    assert r.returncode == 0, r.stderr
    assert "#/host" in r.stderr  # where it is used, said beside the token
    return r.stdout.strip().splitlines()[-1]


def test_only_a_signed_in_host_rules_and_each_ruling_is_recorded(served: Served) -> None:
    served.minibot("alice")
    served.minibot("bob")
    games = _finished_games(served, 3)
    token = _host_token(served, "ann")
    first, second = games[0], games[1]

    visitor = Client(served.url)
    assert visitor.call("GET", "/api/host/session") == (200, {"host": None})
    st, ans = visitor.call("POST", f"/api/games/{first}/void", {"why": "no"})
    assert st == 403 and "maag host add" in ans["error"]
    assert visitor.call("POST", "/api/bots/alice/pardon", {"why": "no"})[0] == 403
    # A bot's owner is no host: its session is another cookie.
    owner = Client(served.url)
    assert owner.call("POST", "/api/session", {"token": served.token("carol")})[0] == 200
    assert owner.call("POST", f"/api/games/{first}/void", {"why": "mine"})[0] == 403
    # A wrong token: refused, after the lobby's login throttle (doubling per failure).
    waits = []
    for _ in range(3):
        t0 = time.monotonic()
        st, ans = visitor.call("POST", "/api/host/session", {"token": "maag_host_wrong"})
        waits.append(time.monotonic() - t0)
        assert st == 401 and "maag host add" in ans["error"]
    assert waits[0] >= 0.2 and waits[2] >= 0.9, waits  # 0.25 s, 0.5 s, 1 s
    # A page of another site cannot sign a host in.
    elsewhere = Client(served.url, origin="http://evil.example")
    assert elsewhere.call("POST", "/api/host/session", {"token": token})[0] == 403

    host = Client(served.url)
    assert host.call("POST", "/api/host/session", {"token": token}) == (200, {"host": "ann"})
    assert host.call("GET", "/api/host/session") == (200, {"host": "ann"})
    before = json.loads(served.get("/api/standings"))["standings"]
    st, ruling = host.call("POST", f"/api/games/{first}/void", {"why": "the host's disk filled up"})
    assert st == 200, ruling
    assert (ruling["kind"], ruling["game_id"], ruling["who"], ruling["why"]) == (
        "void", first, "ann", "the host's disk filled up")
    st, ans = host.call("POST", f"/api/games/{first}/void", {"why": "again"})
    assert st == 409 and "voided" in ans["error"]
    missing = host.call("POST", "/api/games/999999/void", {"why": "x"})
    assert missing == (409, {"error": "there is no game 999999"})
    assert host.call("POST", f"/api/games/{second}/void", {})[0] == 400  # no why
    st, ans = host.call("POST", "/api/bots/nobody/pardon", {"why": "x"})
    assert st == 409 and "no game" in ans["error"]
    st, pardon = host.call("POST", "/api/bots/alice/pardon", {"why": "strikes from the outage"})
    assert st == 200 and (pardon["kind"], pardon["bot"], pardon["who"]) == ("pardon", "alice", "ann")

    # Recorded as the command line records them, and the voided game is rated nowhere.
    listed = json.loads(served.get("/api/rulings"))["rulings"]
    assert [(r["kind"], r["who"]) for r in listed] == [("void", "ann"), ("pardon", "ann")]
    shown = maag("game", "show", str(first), "--db", str(served.db))
    assert "voided" in shown.stdout and "by ann" in shown.stdout and "disk filled up" in shown.stdout
    after = json.loads(served.get("/api/standings"))["standings"]
    assert sum(r["games"] for r in after["standings"]) == sum(r["games"] for r in before["standings"]) - 2

    # A new token for ann ends the old one's session at once.
    _host_token(served, "ann", "--replace")
    st, ans = host.call("POST", f"/api/games/{second}/void", {"why": "stale"})
    assert st == 403
    assert host.call("GET", "/api/host/session") == (200, {"host": None})


def test_the_host_rules_from_the_page_and_a_visitor_sees_no_form(served: Served, browser: Any) -> None:
    served.minibot("alice")
    served.minibot("bob")
    games = _finished_games(served, 2)
    token = _host_token(served, "ann")
    contexts: list[Any] = []
    errors: list[str] = []

    def new_page() -> Any:
        ctx = browser.new_context(viewport={"width": 1280, "height": 900})
        contexts.append(ctx)
        pg = ctx.new_page()
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.set_default_timeout(30_000)
        return pg

    try:
        visitor = new_page()
        visitor.goto(f"{served.url}/#/replay/{games[0]}")
        visitor.wait_for_selector("#ply")
        visitor.goto(f"{served.url}/#/bot/alice")
        visitor.wait_for_selector("#bot-summary")
        visitor.goto(f"{served.url}/#/host")
        visitor.wait_for_selector("#host-signin")
        assert visitor.query_selector("#void") is None and visitor.query_selector("#pardon") is None

        pg = new_page()
        pg.goto(f"{served.url}/#/host")
        pg.fill("#host-token", "maag_host_wrong")
        pg.click("#host-signin button")
        pg.wait_for_selector("#host-signin-msg:has-text('unknown token')")
        pg.fill("#host-token", token)
        pg.click("#host-signin button")
        pg.wait_for_selector("#host-account:has-text('Signed in as host ann')")
        assert token not in pg.content()  # the page keeps no token

        pg.goto(f"{served.url}/#/replay/{games[0]}")
        pg.wait_for_selector("#void")
        pg.click("#void button")
        pg.wait_for_selector("#void-msg:has-text('say why')")
        pg.fill("#void-why", "a bot was killed by the host's OOM killer")
        pg.click("#void button")
        pg.wait_for_selector("#void-msg:has-text('recorded: by ann')")
        pg.goto(f"{served.url}/#/bot/bob")
        pg.wait_for_selector("#pardon")
        pg.fill("#pardon-why", "the outage")
        pg.click("#pardon button")
        pg.wait_for_selector("#pardon-msg:has-text('recorded: by ann')")
        pg.goto(f"{served.url}/#/host")
        pg.wait_for_selector("#rulings li")
        text = pg.inner_text("#rulings")
        assert f"#{games[0]} voided by ann" in text and "OOM killer" in text
        assert "bob pardoned" in text and "the outage" in text

        # What the visitor sees now (its page, still at #/host, reloaded): the rulings, no form.
        visitor.reload()
        visitor.wait_for_selector("#rulings li")
        assert "OOM killer" in visitor.inner_text("#rulings")
        visitor.goto(f"{served.url}/#/replay/{games[0]}")
        visitor.wait_for_selector("#ply")
        assert visitor.query_selector("#void") is None
        st = open_storage(served.db)
        try:
            assert st.get_game(games[0]).status == "voided"  # type: ignore[union-attr]
        finally:
            st.close()
    finally:
        for c in contexts:
            c.close()
    assert not errors, errors
