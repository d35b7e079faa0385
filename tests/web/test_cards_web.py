"""The card game in the web view (render/cards.js) in a real headless Chromium against a real
`maag serve --game cards --web` and real bot processes: cards drawn with their names, costs
and text from the card table the server sends once (never per frame); a replay's drawing at
four positions is what `maag replay --at N --json` holds; a spectator's page and its
WebSocket frames never hold a card of a hand while the game runs; and a person plays a whole
game against greedy-action by clicking cards, minions, heroes and targets on the table only."""

from __future__ import annotations

import json
import re
import time
import urllib.error
from pathlib import Path
from typing import Any

import pytest
from maag.engine import registry
from maag.engine.games.cards.pool import POOL, TOKENS

from .conftest import Served, maag

NAME = {c.id: c.name for c in POOL + TOKENS}
SECRETS = {c.id for c in POOL if c.type == "Se"}
HERO = {"mage": "Jaina", "paladin": "Uther"}
PLAY_LIMIT_S = 240.0  # a safety net against hangs only


@pytest.fixture
def cards_served(tmp_path: Path) -> Any:
    s = Served(tmp_path, ("--game", "cards", "--tc", "1s", "--seed", "11"))
    s.start()
    yield s
    s.stop()


def drawn_side(page: Any, seat: int) -> dict[str, Any]:
    """What the page draws of one seat, read from the visible text of the table."""
    side = page.query_selector(f"#board .cards .cd-side[data-seat='{seat}']")
    hero = side.query_selector(".cd-hero")
    atk = hero.query_selector(".atk")
    armor = hero.query_selector(".armor")
    weapon = side.query_selector(".cd-weapon:not(.none)")
    mana = side.query_selector(".cd-mana b").inner_text().split("/")
    hand = side.query_selector(".cd-hand")
    return {
        "hero": (hero.query_selector(".name").inner_text(), int(hero.query_selector(".hp").inner_text()),
                 int(armor.inner_text()) if armor else 0, int(atk.inner_text()) if atk else 0),
        "weapon": None if weapon is None else (weapon.query_selector(".name").inner_text(),
                                               int(weapon.query_selector(".atk").inner_text()),
                                               int(weapon.query_selector(".dur").inner_text())),
        "mana": (int(mana[0]), int(mana[1])),
        "deck": side.query_selector(".cd-deck").inner_text().split(" card")[0],
        "hand": (len(hand.query_selector_all(".cd-card.back")),
                 [c.query_selector(".name").inner_text() for c in hand.query_selector_all(".cd-card.face")]),
        "secrets": len(side.query_selector_all(".cd-secret")),
        "board": [(m.query_selector(".name").inner_text(), int(m.query_selector(".atk").inner_text()),
                   int(m.query_selector(".hp").inner_text()),
                   "damaged" in (m.query_selector(".hp").get_attribute("class") or ""),
                   "Taunt" in (m.query_selector(".kw").inner_text() if m.query_selector(".kw") else ""))
                  for m in side.query_selector_all(".cd-minion")],
    }


def side_of_json(state: dict[str, Any], seat: int, hands_shown: bool) -> dict[str, Any]:
    """The same, from a position's JSON (a full state: `maag replay --at N --json`)."""
    p = state["players"][seat - 1]
    h = p["hero"]
    w = p["weapon"]
    return {
        "hero": (HERO[h["class"]], h["hp"], h["armor"], h["atk"]),
        "weapon": None if w is None else (NAME[w["card"]], w["atk"], w["durability"]),
        "mana": (p["mana"], p["max_mana"]),
        "deck": f"deck: {p['deck_count']}",
        "hand": (0, [NAME[c] for c in p["hand"]]) if hands_shown else (p["hand_count"], []),
        "secrets": p["secret_count"],
        "board": [(NAME[m["card"]], m["atk"], m["hp"], m["hp"] < m["max_hp"], m["taunt"])
                  for m in p["board"]],
    }


def test_the_card_table_is_the_pool_and_the_web_view_serves_it(cards_served: Served) -> None:
    cat = registry.get("cards").catalog
    assert cat is not None, "the card game's spec carries its card table"
    table = cat()
    assert set(table["cards"]) == set(NAME)
    for c in POOL:
        shown = table["cards"][c.id]
        assert (shown["name"], shown["cost"]) == (c.name, c.cost)
        assert shown["text"] == ("" if c.text == "—" else c.text)
    assert table["cards"]["N24"]["atk"] == 4 and table["cards"]["N24"]["hp"] == 5
    assert table["cards"]["P08"]["durability"] == 2 and table["cards"]["P08"]["type"] == "weapon"
    assert table["cards"]["T_GOLEM"]["from"] == "Harvest Golem"
    powers = {k: v["power"] for k, v in table["heroes"].items()}
    assert powers == {"mage": "Fireblast", "paladin": "Reinforce"}
    assert json.loads(cards_served.get("/api/catalog/cards")) == table
    with pytest.raises(urllib.error.HTTPError) as e:
        cards_served.get("/api/catalog/nim")  # a game without one
    assert e.value.code == 404


def test_a_spectator_sees_no_hand_and_the_replay_draws_what_maag_replay_holds(cards_served: Served,
                                                                               page: Any) -> None:
    served = cards_served
    frames: list[str] = []
    catalog_requests: list[str] = []

    def on_ws(ws: Any) -> None:
        if "/ws/game/" in ws.url:
            ws.on("framereceived", lambda payload: frames.append(payload if isinstance(payload, str)
                                                                 else payload.decode()))

    page.on("websocket", on_ws)
    page.on("request", lambda r: catalog_requests.append(r.url) if "/api/catalog/" in r.url else None)
    page.goto(served.url + "/#/")
    # (Slow enough that a loaded machine's browser still watches a few hundred ms of play.)
    served.minibot("s1", "--delay", "60")
    served.minibot("s2", "--delay", "60")
    row = page.wait_for_selector("#live-games tr[data-game]", timeout=60_000)
    gid = row.get_attribute("data-game")
    page.click(f"#live-games tr[data-game='{gid}'] a")
    page.wait_for_selector("#board .cards")
    # While it runs: both hands are card backs, as many as the frame's count, never a face.
    checked = 0
    end = time.monotonic() + PLAY_LIMIT_S
    while "running" in page.inner_text("#main h2"):
        assert time.monotonic() < end, "the game did not end"
        got = page.evaluate("""() => [...document.querySelectorAll('#board .cd-hand')].map((h) =>
            [h.dataset.seat, h.querySelectorAll('.cd-card.back').length,
             h.querySelectorAll('.cd-card.face, [data-card]').length, h.classList.contains('hidden')])""")
        if "running" in page.inner_text("#main h2"):
            for _seat, backs, faces, hidden in got:
                assert faces == 0 and hidden, "a spectator never sees a card of a hand"
                assert backs <= 10
            checked += 1
        page.wait_for_timeout(100)
    served.stop_bots()
    assert checked > 3, "the page was watched while the game ran"
    snaps = [json.loads(f) for f in frames]
    running = [s for s in snaps if s["type"] == "game" and s["result"] is None]
    # The subscription's snapshot and at least one push after it (pushes are coalesced, at
    # most one a game every 0.1 s: how many depends on how long the game ran once watched).
    assert len(running) >= 2, "the page was pushed the game as it went on"
    for f, s in zip(frames, snaps, strict=True):
        if s["type"] != "game" or s["result"] is not None:
            continue
        for key in ('"hand"', '"secrets"', '"deck"'):  # hands, secrets, decks' cards: never in a frame
            assert key not in f
        assert "Chillwind Yeti" not in f and "Fireball" not in f, "frames carry card ids, not the table"
        for p in s["view"]["players"]:
            assert 0 <= p["hand_count"] <= 10 and "hand" not in p
    assert any(p["hand_count"] > 0 for s in running for p in s["view"]["players"])
    # The last frame drawn: the backs the page shows are the frame's counts.
    page.wait_for_selector("#main h2 a")  # the game is over: a replay link
    final = [s for s in snaps if s["type"] == "game"][-1]["view"]
    for seat in (1, 2):
        hand = page.query_selector(f"#board .cd-hand[data-seat='{seat}']")
        assert len(hand.query_selector_all(".cd-card.back")) == final["players"][seat - 1]["hand_count"]

    # The replay: four positions drawn as `maag replay --at N --json` holds them.
    page.click("#main h2 a")
    page.wait_for_selector("#ply")
    plies = json.loads(served.get(f"/api/replay/{gid}"))["plies"]
    assert plies > 20

    def expect(n: int) -> None:
        page.wait_for_function(f"document.querySelector('#board')?.dataset.ply === '{n}'")
        r = maag("replay", str(gid), "--at", str(n), "--json", "--db", str(served.db))
        assert r.returncode == 0, r.stderr
        truth = json.loads(r.stdout)
        for seat in (1, 2):
            assert drawn_side(page, seat) == side_of_json(truth, seat, hands_shown=False), (n, seat)
        info = page.inner_text("#board .cd-middle .turninfo")
        assert f"ply {truth['ply']}" in info

    page.eval_on_selector("#ply", "(e) => { e.value = '0'; e.dispatchEvent(new Event('input')); }")
    expect(0)
    for n in (plies // 3, 2 * plies // 3):
        page.eval_on_selector("#ply", f"(e) => {{ e.value = '{n}'; e.dispatchEvent(new Event('input')); }}")
        expect(n)
    page.click("#last")
    expect(plies)
    assert "game over" in page.inner_text("#board .cd-middle")
    # The log names the cards played and the minions that attack, as `maag replay --show` does.
    log = page.inner_text("#side .log")
    raw = json.loads(maag("replay", str(gid), "--raw", "--db", str(served.db)).stdout)
    played = {NAME[a["action"]["card"]] for a in raw["actions"]
              if a["action"]["type"] == "play" and a["action"]["card"] not in SECRETS}
    assert played and all(f"play {name} (" in log for name in played), played
    if any(a["action"]["type"] == "play" and a["action"]["card"] in SECRETS for a in raw["actions"]):
        assert "play a secret" in log  # face down, as the opponent saw it
    assert re.search(r"\b([NMPRS]\d\d|T_[A-Z]+)\b", log) is None, "no card ids in the log"
    assert "attack with " in log and "attack with minion" not in log, "attackers named"
    assert len(catalog_requests) == 1, f"the card table is fetched once per page: {catalog_requests}"


def test_a_person_plays_a_whole_card_game_against_greedy_action_by_clicking(cards_served: Served,
                                                                           page: Any) -> None:
    served = cards_served
    page.goto(served.url + "/#/play")
    page.fill("input[name=opponent]", "greedy-action")
    page.click("#start")
    try:
        page.wait_for_selector("#cd-end-turn", timeout=90_000)
    except Exception as e:
        raise AssertionError(f"no turn for the person: {page.inner_text('#main')}\n{served.log()}") from e
    me = 1 if page.query_selector("#board .cd-side.bottom[data-seat='1']") else 2
    # the person's own hand is face up, with names and costs; the opponent's face down
    faces = page.query_selector_all(f"#board .cd-hand[data-seat='{me}'] .cd-card.face")
    assert faces and all(f.query_selector(".name").inner_text() in NAME.values() for f in faces)
    assert page.query_selector_all(f"#board .cd-hand[data-seat='{3 - me}'] .cd-card.face") == []
    assert page.query_selector("#legal button.action, #legal button.end-turn"), "the list stays as a fallback"
    clicks = {"card": 0, "minion": 0, "hero": 0, "power": 0, "target": 0, "end": 0}
    in_turn = 0
    end = time.monotonic() + PLAY_LIMIT_S
    while page.query_selector("#replay-link") is None:
        assert time.monotonic() < end, "the game did not end"
        done = page.query_selector("#cd-end-turn")
        if done is None:
            page.wait_for_timeout(40)
            continue
        # What can act is outlined: attack with minions and the hero first, then cards, then the power.
        source = next(filter(None, (page.query_selector(f"#board .{c}.pick")
                                    for c in ("cd-minion", "cd-hero", "cd-card", "cd-power"))), None)
        if source is None or in_turn >= 12:
            done.click()
            clicks["end"] += 1
            in_turn = 0
        else:
            kind = (source.get_attribute("class") or "").split()[0].removeprefix("cd-")
            source.click()
            clicks[kind] += 1
            in_turn += 1
            if page.query_selector("#board .cards .selected") is not None:
                # its targets are outlined: the enemy hero if it may be hit, else any
                target = (page.query_selector(f"#board .cd-hero.target[data-seat='{3 - me}']")
                          or page.query_selector("#board .target"))
                assert target is not None, "a selected source has targets"
                target.click()
                clicks["target"] += 1
        page.wait_for_timeout(20)
    gid = page.get_attribute("#replay-link", "href").rsplit("/", 1)[1]
    assert clicks["target"] >= 1 and clicks["card"] >= 1 and clicks["end"] >= 1, clicks
    raw = json.loads(maag("replay", gid, "--raw", "--db", str(served.db)).stdout)
    assert raw["result"]["winner"] in (0, 1, -1) and raw["result"]["reason"] in ("rules", "turn_limit"), \
        f"played to its end: {raw['result']}"
    mine = [a["action"] for a in raw["actions"] if a["seat"] == me - 1]
    types = {a["type"] for a in mine}
    assert {"play", "end_turn"} <= types and types & {"attack", "power"}, types
    assert any(a.get("target") for a in mine), "a target chosen by clicking"
    assert raw["tags"]["Human"] == 1 and raw["tags"]["Opponent"] == "greedy-action"
    # every action the person sent came from a click on the table: as many as the clicks
    assert len(mine) == clicks["card"] + clicks["minion"] + clicks["hero"] + clicks["power"] + clicks["end"]
    r = maag("replay", gid, "--db", str(served.db))
    assert r.returncode == 0 and "OK" in r.stdout, r.stdout + r.stderr
