"""The web view in a real headless Chromium against a real `maag serve --web` and real bot
processes: a person plays a whole game by clicking, the replay slider shows what `maag
replay --at N` shows, a spectator's page never holds a hand of a running game (in its DOM
and in the frames of its WebSocket), and the lobby follows games starting and ending by
pushes alone."""

from __future__ import annotations

import json
import time
from typing import Any

from .conftest import Served, maag

PLAY_LIMIT_S = 240.0  # a safety net against hangs only


def board_of(page: Any) -> list[tuple[int, int, str, int, str]]:
    """The units the page draws: (x, y, kind, owner, "hp/max")."""
    out = []
    for sq in page.query_selector_all("#board .sq"):
        u = sq.query_selector(".unit")
        if u is not None:
            out.append((int(sq.get_attribute("data-x")), int(sq.get_attribute("data-y")),
                        str(u.get_attribute("data-kind")), int(u.get_attribute("data-owner")),
                        u.query_selector(".hp").inner_text()))
    return sorted(out)


def board_of_json(state: dict[str, Any]) -> list[tuple[int, int, str, int, str]]:
    return sorted((u["x"], u["y"], u["kind"], u["owner"], f"{u['hp']}/{u['max_hp']}") for u in state["board"])


def test_a_person_plays_a_whole_game_against_greedy_action_by_clicking(served: Served, page: Any) -> None:
    page.goto(served.url + "/#/play")
    page.fill("input[name=opponent]", "greedy-action")
    page.check("input[value='played a few games']")
    page.click("#start")
    try:
        page.wait_for_selector("#legal button.end-turn", timeout=90_000)
    except Exception as e:
        raise AssertionError(f"no turn for the person: {page.inner_text('#main')}\n{served.log()}") from e
    assert page.query_selector_all(".player[data-seat='1'] .card"), "the person sees their own hand"
    clicks = board_clicks = 0
    end = time.monotonic() + PLAY_LIMIT_S
    while page.query_selector("#replay-link") is None:
        assert time.monotonic() < end, "the game did not end"
        done = page.query_selector("#legal button.end-turn")
        if done is None:
            page.wait_for_timeout(50)
            continue
        # On the board: pick a unit or a card of the hand, then one of the squares it may go to.
        source = page.query_selector(".sq.pick, .card.pick")
        if source is not None and clicks % 3 != 2:
            source.click()
            target = page.wait_for_selector(".sq.target", timeout=5_000)
            target.click()
            board_clicks += 1
        else:
            done.click()
        clicks += 1
        page.wait_for_timeout(30)
    assert board_clicks >= 1
    gid = page.get_attribute("#replay-link", "href").rsplit("/", 1)[1]
    over = page.get_attribute("#main", "data-over")
    assert over in ("you won", "you lost", "no result")
    # Stored like any game: the referee re-simulates it, with the person's form in its tags.
    r = maag("replay", gid, "--db", str(served.db))
    assert r.returncode == 0 and "OK" in r.stdout, r.stdout + r.stderr
    raw = json.loads(maag("replay", gid, "--raw", "--db", str(served.db)).stdout)
    assert raw["tags"]["Human"] == 1 and raw["tags"]["Experience"] == "played a few games"
    assert raw["tags"]["Opponent"] == "greedy-action" and raw["tags"]["Match"] == "web:play"
    assert raw["time_control"]["turn_ms"] == 120_000  # the person's clock, not the bots' 1 s
    assert any(a["seat"] == 0 and a["action"]["type"] != "end_turn" for a in raw["actions"])
    # ... and counted on the people's page.
    page.goto(served.url + "/#/people")
    page.wait_for_selector("#people-table")
    text = page.inner_text("#people-table")
    assert "played a few games" in text and "greedy-action" in text


def _one_stored_game(served: Served) -> int:
    served.minibot("r1")
    served.minibot("r2")
    end = time.monotonic() + 120
    while True:
        games = json.loads(served.get("/api/games"))["games"]
        done = [g for g in games if g["status"] == "finished"]
        if done:
            served.stop_bots()
            return int(done[-1]["game_id"])
        assert time.monotonic() < end, "no game was played"
        time.sleep(0.2)


def test_the_replay_slider_shows_the_positions_of_maag_replay_at(served: Served, page: Any) -> None:
    gid = _one_stored_game(served)
    plies = json.loads(served.get(f"/api/replay/{gid}"))["plies"]
    assert plies > 10
    page.goto(served.url + f"/#/replay/{gid}")
    page.wait_for_selector("#board .board")

    def expect(n: int) -> None:
        page.wait_for_function(f"document.querySelector('#board')?.dataset.ply === '{n}'")
        r = maag("replay", str(gid), "--at", str(n), "--json", "--db", str(served.db))
        assert r.returncode == 0, r.stderr
        truth = json.loads(r.stdout)
        assert board_of(page) == board_of_json(truth), n
        assert f"turn {truth['turn']} of" in page.inner_text("#board .turninfo")
        link = page.get_attribute("#position-json", "href")
        assert link == f"/api/replay/{gid}/at/{n}"
        shown = json.loads(served.get(link))
        assert shown["board"] == truth["board"] and shown["turn"] == truth["turn"]
        for seat in ("1", "2"):  # a hand is never shown, an empty one may be (it is public)
            assert shown["hands"][seat] is None or shown["hands"][seat] == truth["hands"][seat] == []

    expect(0)
    for _ in range(3):
        page.click("#next")
    expect(3)
    page.click("#back")
    expect(2)
    mid = plies // 2
    page.eval_on_selector("#ply", f"(e) => {{ e.value = '{mid}'; e.dispatchEvent(new Event('input')); }}")
    expect(mid)
    page.click("#last")
    expect(plies)


def test_a_spectator_never_receives_a_hand_of_a_running_game(served: Served, page: Any) -> None:
    frames: list[str] = []

    def on_ws(ws: Any) -> None:
        if "/ws/game/" in ws.url:
            ws.on("framereceived", lambda payload: frames.append(payload if isinstance(payload, str)
                                                                 else payload.decode()))

    page.on("websocket", on_ws)
    page.goto(served.url + "/#/")
    served.minibot("s1", "--delay", "40")
    served.minibot("s2", "--delay", "40")
    row = page.wait_for_selector("#live-games tr[data-game]", timeout=60_000)
    gid = row.get_attribute("data-game")
    page.click(f"#live-games tr[data-game='{gid}'] a")
    page.wait_for_selector("#board .board")
    seen_running = 0
    hidden_shown = 0
    end = time.monotonic() + 6
    while time.monotonic() < end:
        running = "running" in page.inner_text("#main h2")
        if running:
            seen_running += 1
            # The DOM: hands are drawn as sizes, never as cards.
            assert page.query_selector_all("#board .hand .card") == []
            hidden_shown += len(page.query_selector_all("#board .hidden-hand"))
        page.wait_for_timeout(200)
    served.stop_bots()
    assert seen_running > 3 and hidden_shown > 0
    snaps = [json.loads(f) for f in frames]
    running = [s for s in snaps if s["type"] == "game" and s["result"] is None]
    # The subscription's snapshot and at least one push after it (pushes are coalesced, at
    # most one a game every 0.1 s: how many depends on how long the game ran once watched).
    assert len(running) >= 2, "the page was pushed the game as it went on"
    for s in running:
        view = s["view"]
        for seat in ("1", "2"):
            hand = view["hands"][seat]
            assert hand is None or (hand == [] and view["hand_sizes"][seat] == 0), hand
            assert view["decks"][seat] is None or view["hand_sizes"][seat] == 0
        assert "deck_seed" not in view
    # The frames hold what the referee's observations agree on: a seat's own observation
    # (which the referee sends that seat) has its hand, the spectator's never does.
    assert any(s["view"]["hand_sizes"]["1"] > 0 for s in running)


def test_the_live_list_follows_a_game_starting_and_ending(served: Served, page: Any) -> None:
    requests: list[str] = []
    page.goto(served.url + "/#/")
    page.wait_for_selector("#live p.none")  # "no game is being played"
    page.on("request", lambda r: requests.append(r.url))
    served.minibot("l1", "--delay", "15")
    served.minibot("l2", "--delay", "15")
    row = page.wait_for_selector("#live-games tr[data-game]", timeout=60_000)
    gid = row.get_attribute("data-game")
    page.wait_for_selector(f"#finished-games tr[data-game='{gid}']", timeout=120_000)
    served.stop_bots()
    assert page.query_selector(f"#live-games tr[data-game='{gid}']") is None
    page.wait_for_selector("#standings tr[data-bot='l1']")
    assert requests == [], f"the lobby was pushed its updates, it asked for nothing: {requests}"


def test_a_game_without_a_drawing_of_its_own_shows_its_json(tmp_path: Any, page: Any) -> None:
    served = Served(tmp_path, ("--game", "nim", "--tc", "1s"))
    served.start()
    try:
        gid = _one_stored_game(served)
        page.goto(served.url + f"/#/replay/{gid}/1")
        page.wait_for_function("document.querySelector('#board')?.dataset.ply === '1'")
        shown = json.loads(page.inner_text("#board pre.board-json"))
        assert shown == json.loads(served.get(f"/api/replay/{gid}/at/1"))
        assert "piles" in shown
    finally:
        served.stop()

