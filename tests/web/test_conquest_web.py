"""Conquest in the web view: the map's layout (conquest's codec `layout`: places computed from
the borders, since map files carry no coordinates) and its drawing (render/conquest.js) in a
real headless Chromium: a replayed game's map shows every territory with the owner and the
units by type of the position's JSON, and a person plays moves by clicking the map."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from maag.engine import Game, registry
from maag.engine.games.conquest import codec, mapfile

from .conftest import Served, maag

BOX_W, BOX_H = 96, 56  # a territory's box in render/conquest.js


def _layout(options: dict[str, Any] | None = None) -> dict[str, Any]:
    game = Game("conquest", options or {})
    fn = registry.get("conquest").layout
    assert fn is not None, "conquest's codec defines layout and the registry picks it up"
    return fn(game.config)


def _ring_map(tmp: Path) -> Path:
    """A map of 12 territories in a ring with two chords: no bundled map looks like it."""
    lines = ["conquest-map 1", "name ring12", "players North South",
             "unit infantry attack 1 defense 2 move 1 cost 3 hp 1"]
    lines += [f"territory Q{i} owner {'North' if i < 6 else 'South'} production 0"
              + (" capital" if i in (0, 6) else "") for i in range(12)]
    lines += [f"edge Q{i} Q{(i + 1) % 12}" for i in range(12)] + ["edge Q2 Q9", "edge Q3 Q8"]
    lines += ["units Q0 North infantry 2", "units Q6 South infantry 2"]
    path = tmp / "ring12.map"
    path.write_text("\n".join(lines) + "\n")
    return path


def _check_layout(lay: dict[str, Any], m: mapfile.Map) -> None:
    names = [t["name"] for t in lay["territories"]]
    assert names == m.territories, "every territory placed once, in the map's order"
    assert {frozenset(e) for e in lay["edges"]} == {frozenset((m.territories[a], m.territories[b]))
                                                    for a, b in m.edges}
    assert len(lay["edges"]) == len(m.edges)
    assert lay["players"] == list(m.players) and lay["types"] == [t.name for t in m.types]
    assert lay["capitals"] == [m.territories[c] for c in m.capital]
    at = {t["name"]: (t["x"], t["y"]) for t in lay["territories"]}
    assert all(isinstance(v, int) for p in at.values() for v in p)
    assert len(set(at.values())) == len(at), "positions are distinct"
    for x, y in at.values():  # each box inside the picture
        assert BOX_W / 2 <= x <= lay["width"] - BOX_W / 2 and BOX_H / 2 <= y <= lay["height"] - BOX_H / 2
    pts = list(at.values())
    for i, p in enumerate(pts):  # no two boxes overlap
        for q in pts[i + 1:]:
            assert abs(p[0] - q[0]) >= BOX_W or abs(p[1] - q[1]) >= BOX_H, (p, q)
    for a, b in lay["edges"]:  # no border line runs through a territory it does not join
        (ax, ay), (bx, by) = at[a], at[b]
        for t, (x, y) in at.items():
            if t in (a, b):
                continue
            ex, ey = bx - ax, by - ay
            s = max(0.0, min(1.0, ((x - ax) * ex + (y - ay) * ey) / (ex * ex + ey * ey)))
            assert math.hypot(ax + s * ex - x, ay + s * ey - y) > 45, (a, b, t)


def test_the_conquest_layout_places_every_territory_of_the_map_apart() -> None:
    lay = _layout()
    m = mapfile.load(mapfile.DEFAULT)
    _check_layout(lay, m)
    at = {t["name"]: t["x"] for t in lay["territories"]}
    assert at[lay["capitals"][0]] < at[lay["capitals"][1]], "the first player's capital on the left"
    assert len(json.dumps(lay)) < 2000, "small enough to send with every pushed snapshot"


def test_the_conquest_layout_of_a_map_file(tmp_path: Path) -> None:
    path = _ring_map(tmp_path)
    _check_layout(_layout({"map": str(path)}), mapfile.load(str(path)))


def test_the_conquest_layout_is_the_same_every_time() -> None:
    first = _layout()
    codec.place.cache_clear()
    assert _layout() == first
    code = ("import json; from maag.engine import Game, registry; "
            "print(json.dumps(registry.get('conquest').layout(Game('conquest').config)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == first, "and in another process"


# ---- the drawing in a browser ---------------------------------------------------------------

@pytest.fixture
def conquest_served(tmp_path: Path) -> Any:
    s = Served(tmp_path, ("--game", "conquest", "--tc", "1s"))
    s.start()
    yield s
    s.stop()


def _stored_game(served: Served) -> int:
    served.minibot("c1")
    served.minibot("c2")
    end = time.monotonic() + 120
    while True:
        done = [g for g in json.loads(served.get("/api/games"))["games"] if g["status"] == "finished"]
        if done:
            served.stop_bots()
            return int(done[-1]["game_id"])
        assert time.monotonic() < end, f"no game was played\n{served.log()}"
        time.sleep(0.2)


def drawn_map(page: Any) -> dict[str, tuple[str, dict[str, Counter[str]]]]:
    """What the page's map shows: territory -> (owner, player -> unit type -> count), the
    counts read from the visible text ("7i 3a 3t") with the legend's abbreviations."""
    types = {s.get_attribute("data-abbr"): s.get_attribute("data-type")
             for s in page.query_selector_all("#board .cq-legend span[data-type]")}
    out: dict[str, tuple[str, dict[str, Counter[str]]]] = {}
    for g in page.query_selector_all("#board svg.cq-map g.terr"):
        name = g.get_attribute("data-name")
        assert name not in out, f"{name} drawn twice"
        units: dict[str, Counter[str]] = {}
        for line in g.query_selector_all("text.units"):
            c: Counter[str] = Counter()
            for item in line.text_content().split():
                n = len(item.rstrip("abcdefghijklmnopqrstuvwxyz"))
                c[types[item[n:]]] += int(item[:n])
            units[line.get_attribute("data-player")] = c
        out[name] = (g.get_attribute("data-owner"), units)
    return out


def map_of_json(state: dict[str, Any]) -> dict[str, tuple[str, dict[str, Counter[str]]]]:
    kind = {u: (p, k) for p, ks in state["roster"].items() for k, ids in ks.items() for u in ids}
    owner = {t: p for p, ts in state["owner"].items() for t in ts}
    out: dict[str, tuple[str, dict[str, Counter[str]]]] = {}
    for t, p in owner.items():
        units: dict[str, Counter[str]] = {}
        for u in state["units"].get(t, []):
            units.setdefault(kind[u][0], Counter())[kind[u][1]] += 1
        out[t] = (p, units)
    return out


def test_a_replayed_conquest_game_shows_the_map_with_owners_and_armies(conquest_served: Served,
                                                                      page: Any) -> None:
    served = conquest_served
    gid = _stored_game(served)
    plies = json.loads(served.get(f"/api/replay/{gid}"))["plies"]
    assert plies > 10
    m = mapfile.load(mapfile.DEFAULT)
    territories = m.territories
    page.goto(served.url + f"/#/replay/{gid}")
    page.wait_for_selector("#board svg.cq-map")
    assert len(page.query_selector_all("#board svg.cq-map line.border")) == len(m.edges)

    def expect(n: int) -> None:
        page.wait_for_function(f"document.querySelector('#board')?.dataset.ply === '{n}'")
        r = maag("replay", str(gid), "--at", str(n), "--json", "--db", str(served.db))
        assert r.returncode == 0, r.stderr
        truth = json.loads(r.stdout)
        shown = drawn_map(page)
        assert sorted(shown) == sorted(territories), "every territory of the map is drawn"
        assert shown == map_of_json(truth), n
        info = page.inner_text("#board .turninfo")
        assert f"round {truth['round']}" in info
        if truth["result"] is None:
            assert f"{truth['player']} to move: {truth['phase']} move" in info
            mover = page.inner_text("#board .player.to-move")
            assert mover.startswith(truth["player"])
        for p, ts in truth["owner"].items():
            assert f"{len(ts)} territories" in page.inner_text(f"#board .player[data-player='{p}']")
        taken = {g.get_attribute("data-name") for g in page.query_selector_all("#board g.terr.taken")}
        assert taken == set(truth["conquered"])

    expect(0)
    page.click("#next")
    expect(1)
    mid = plies // 2
    page.eval_on_selector("#ply", f"(e) => {{ e.value = '{mid}'; e.dispatchEvent(new Event('input')); }}")
    expect(mid)
    page.click("#last")
    expect(plies)
    assert "over" in page.inner_text("#board .turninfo")
    # the log names the moved unit's type
    assert "move infantry" in page.inner_text("#side .log") or "move tank" in page.inner_text("#side .log")


def test_a_person_moves_units_by_clicking_the_conquest_map(conquest_served: Served, page: Any) -> None:
    served = conquest_served
    page.goto(served.url + "/#/play")
    page.fill("input[name=opponent]", "random")
    page.click("#start")
    page.wait_for_selector("#board svg.cq-map g.terr.pick", timeout=90_000)
    before = drawn_map(page)
    page.click("#board g.terr.pick")
    source = page.get_attribute("#board g.terr.selected", "data-name")
    page.click("#board g.terr.target")
    target = page.get_attribute("#board g.terr.target.chosen", "data-name")
    choice = page.wait_for_selector("#board .cq-choice")
    kind = choice.inner_text().split(":")[0].split(" ")[0]
    choice.click()
    page.wait_for_function("document.querySelector('#play-log')?.innerText.includes('you: move')")
    # The next turn keeps the source and the target chosen: the same move again is one click.
    second = page.wait_for_selector("#board .cq-choice", timeout=30_000)
    after = drawn_map(page)
    me = page.get_attribute("#board .player[data-seat='1']", "data-player")
    assert sum(after[source][1][me].values()) == sum(before[source][1][me].values()) - 1
    assert after[target][1][me][kind] == before[target][1].get(me, Counter())[kind] + 1
    second.click()
    page.wait_for_function("document.querySelector('#play-log')?.innerText.split('you: move').length === 3")
    page.wait_for_selector("#resign")
    page.click("#resign")
    page.wait_for_selector("#replay-link", timeout=60_000)
    gid = page.get_attribute("#replay-link", "href").rsplit("/", 1)[1]
    raw = json.loads(maag("replay", gid, "--raw", "--db", str(served.db)).stdout)
    mine = [a["action"] for a in raw["actions"] if a["seat"] == 0]
    assert len(mine) >= 2 and all(a["type"] == "move" and a["path"][0] == source and a["path"][-1] == target
                                  for a in mine[:2])
