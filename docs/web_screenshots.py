"""Make docs/web-standings.png, docs/web-game.png and docs/web-replay.png: a `maag serve --web`
on heroes' 9x5 map, bundled agents as bot processes, the page in the system's headless
Chromium (Playwright, nothing downloaded); docs/web-conquest.png, a conquest game; and
docs/web-cards.png, a person's seat in the card game.

    python docs/web_screenshots.py [OUT_DIR] [--only heroes|conquest|cards]   (default: this file's folder)

First greedy-action, random and first play each other until 12 games are stored (the
standings), then mcts and greedy-turn play a game at 1 s a turn, which the game view shows
as it goes; the replay view shows a stored game half-way through. For conquest, a second
`maag serve --game conquest` where conquest-hard and conquest-easy play two games; the
replay view shows the last one where a battle is pending, from a third of the way on. For the
card game, a third `maag serve --game cards`: the page takes a seat against greedy-action and
plays by clicking the table (`cards_shot`).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _maag(*args: str) -> str:
    return subprocess.run([sys.executable, "-m", "maag.server", *args], capture_output=True, text=True,
                          check=True).stdout


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main(out: Path, game: str = "heroes") -> None:
    from playwright.sync_api import sync_playwright

    tmp = Path(tempfile.mkdtemp(prefix="maag-shots-"))
    db, web, port_file = tmp / "db.sqlite3", _free_port(), tmp / "port"
    serve = subprocess.Popen([sys.executable, "-m", "maag.server", "serve", "--port", "0", "--port-file",
                              str(port_file), "--db", str(db), "--web", f"127.0.0.1:{web}", "--tc", "1s",
                              "--spill-dir", str(tmp / "spill"), "-q", "--game", game])
    procs: list[subprocess.Popen[bytes]] = []
    url = f"http://127.0.0.1:{web}"

    def bot(agent: str) -> None:
        token = _maag("bot", "add", agent, "--db", str(db)).strip().splitlines()[-1]
        env = {**os.environ, "MAAG_TOKEN": token}
        connect = f"127.0.0.1:{port_file.read_text().strip()}"
        minibot = agent in ("random", "first")  # the referee's own bots; the others are bundled agents
        cmd = ([sys.executable, "-m", "maag.server.net.minibot", "--agent", agent, "--name", agent] if minibot
               else [sys.executable, "-m", "maag.server", "bot", "run", agent])
        procs.append(subprocess.Popen([*cmd, "--connect", connect], env=env, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL))

    def stop_bots() -> None:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(30)
        procs.clear()

    def stored() -> list[dict[str, object]]:
        with urllib.request.urlopen(url + "/api/games", timeout=30) as r:
            return [g for g in json.loads(r.read())["games"] if g["status"] == "finished"]

    try:
        while not (port_file.exists() and port_file.read_text().strip()):
            time.sleep(0.1)
        if game == "cards":
            cards_shot(url, out)
            return
        if game == "conquest":
            # These agents answer at once: a game is over before a page can follow it live, so
            # the picture is a replay, at the first position from a third of the way on where a
            # battle is pending (both sides' units in one territory).
            for agent in ("conquest-hard", "conquest-easy"):
                bot(agent)
            while len(stored()) < 2:
                time.sleep(0.5)
            stop_bots()
            gid = stored()[-1]["game_id"]
            with urllib.request.urlopen(f"{url}/api/replay/{gid}", timeout=30) as r:
                plies = json.loads(r.read())["plies"]
            ply = plies // 3
            for n in range(plies // 3, plies):
                with urllib.request.urlopen(f"{url}/api/replay/{gid}/at/{n}", timeout=30) as r:
                    v = json.loads(r.read())
                side = {u: p for p, kinds in v["roster"].items() for ids in kinds.values() for u in ids}
                if any(len({side[u] for u in ids}) > 1 for ids in v["units"].values()):
                    ply = n
                    break
            with sync_playwright() as p:
                b = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
                page = b.new_page(viewport={"width": 1200, "height": 860})
                page.goto(url + f"/#/replay/{gid}/{ply}")
                page.wait_for_function(f"document.querySelector('#board')?.dataset.ply === '{ply}'")
                page.screenshot(path=str(out / "web-conquest.png"))
                b.close()
            return
        for agent in ("greedy-action", "random", "first"):
            bot(agent)
        while len(stored()) < 12:
            time.sleep(0.5)
        stop_bots()
        replay_id = next(g["game_id"] for g in stored() if "greedy-action" in g["seats"])  # type: ignore[operator]
        for agent in ("mcts", "greedy-turn"):
            bot(agent)
        time.sleep(25)
        with sync_playwright() as p:
            b = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            page = b.new_page(viewport={"width": 1200, "height": 760})
            page.goto(url + "/#/")
            page.wait_for_selector("#live-games tr[data-game]")
            page.wait_for_selector("#standings")
            page.screenshot(path=str(out / "web-standings.png"))
            page.click("#live-games tr[data-game] a")
            page.wait_for_selector("#board .board")
            page.wait_for_timeout(1500)
            page.screenshot(path=str(out / "web-game.png"))
            page.goto(url + f"/#/replay/{replay_id}")
            page.wait_for_selector("#board .board")
            plies = int(page.get_attribute("#ply", "max") or "0")
            page.goto(url + f"/#/replay/{replay_id}/{plies // 2}")
            page.reload()
            page.wait_for_function(f"document.querySelector('#board')?.dataset.ply === '{plies // 2}'")
            page.screenshot(path=str(out / "web-replay.png"))
            b.close()
    finally:
        stop_bots()
        serve.terminate()
        serve.wait(30)
        shutil.rmtree(tmp, ignore_errors=True)


def cards_shot(url: str, out: Path) -> None:
    """docs/web-cards.png: a person's seat against greedy-action, played by clicking the table
    (minions attack first, then cards are played, the hero power last; damage on the enemy
    hero when it may be hit) until both sides have minions from the fifth turn on; then a
    card with targets is picked up, its targets outlined."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        page = b.new_page(viewport={"width": 1200, "height": 1000})
        for _attempt in range(5):  # a game lost early is played again
            page.goto(url + "/#/play")
            page.fill("input[name=opponent]", "greedy-action")
            page.click("#start")
            page.wait_for_selector("#cd-end-turn", timeout=90_000)
            turns = 0
            while page.query_selector("#replay-link") is None:
                if page.query_selector("#cd-end-turn") is None:
                    page.wait_for_timeout(40)
                    continue
                boards = [len(page.query_selector_all(f"#board .cd-board[data-seat='{s}'] .cd-minion"))
                          for s in (1, 2)]
                aimed = page.query_selector("#board .cd-card.pick.type-spell, #board .cd-power.pick")
                if turns >= 5 and min(boards) >= 2 and aimed is not None:
                    aimed.click()
                    if page.query_selector("#board .target") is not None:
                        page.mouse.move(0, 0)
                        page.screenshot(path=str(out / "web-cards.png"))
                        b.close()
                        return
                    continue
                source = next(filter(None, (page.query_selector(f"#board .{c}.pick")
                                            for c in ("cd-minion", "cd-hero", "cd-card", "cd-power"))), None)
                if source is None:
                    page.click("#cd-end-turn")
                    turns += 1
                    continue
                source.click()
                if page.query_selector("#board .cards .selected") is not None:
                    target = (page.query_selector("#board .cd-side.top .cd-hero.target")
                              or page.query_selector("#board .cd-side.top .target")
                              or page.query_selector("#board .target"))
                    assert target is not None, "a selected source has targets"
                    target.click()
                page.wait_for_timeout(20)
        b.close()
        raise RuntimeError("no game reached a position worth a picture")


if __name__ == "__main__":
    args = sys.argv[1:]
    only = None
    if "--only" in args:
        only = args[args.index("--only") + 1]
        del args[args.index("--only"):args.index("--only") + 2]
    folder = Path(args[0]) if args else Path(__file__).resolve().parent
    if only in (None, "heroes"):
        main(folder)
    if only in (None, "conquest"):
        main(folder, "conquest")
    if only in (None, "cards"):
        main(folder, "cards")
