"""Cheating and peeking twins through `maag match` (maag.lab.twin_bot): bot processes that
rebuild the true state from the match's seed and the actions they have seen, on a real
embedded referee that sends each only its seat's observation."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path

from maag.bots import parse_agent
from maag.engine import Game, Observation
from maag.lab.inference import InferringAgent, unspent_mana_breaches


def _counts(log: str) -> tuple[int, int]:
    """A twin's plans on the true state and on the observation, at the end of the last game
    whose end it logged (the match may stop it before it logs the last one's)."""
    found = re.findall(r"(\d+) plan\(s\) on the true state, (\d+) on the observation", log)
    assert found, log
    return int(found[-1][0]), int(found[-1][1])


def test_twins_through_maag_match(tmp_path: Path) -> None:
    # the match is seeded 11: the cheating twin is told so and plans every turn on the true
    # state (the opponent's secrets, shown face down, included); the peeking twin is told
    # 12, finds no deal of that seed behind its observation and plans from the observation
    twin = f"{sys.executable} -m maag.server experiment twin-bot"
    logs = tmp_path / "logs"
    r = subprocess.run([sys.executable, "-m", "maag.server", "match",
                        f"{twin} cheat:mcts:iterations=200 --match-seed 11",
                        f"{twin} peek:mcts:iterations=200 --match-seed 12", "--game", "cards",
                        "--games", "2", "--tc", "2s", "--seed", "11", "--json",
                        "--db", str(tmp_path / "m.sqlite3"), "--log-dir", str(logs)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    assert lines[-1]["games"] == 2
    assert all(g["reason"] == "rules" for g in lines[:-1] if g.get("event") == "game"), lines
    cheat = "".join(p.read_text() for p in logs.glob("*1.log"))
    peek = "".join(p.read_text() for p in logs.glob("*2.log"))
    cheated, lost = _counts(cheat)
    assert cheated > 10 and lost == 0, cheat
    cheated, lost = _counts(peek)
    assert cheated == 0 and lost > 10, peek


def test_the_inferring_agent_draws_a_hand_the_unspent_mana_allows() -> None:
    # positions of random play where the opponent left mana and some uniform draw gives it
    # a card it could have played: the agent's determinization gives it none, and is one
    # of the observation's
    found = 0
    for seed in range(40):
        st, rng = Game("cards").new_state(seed), random.Random(seed)
        while not st.is_terminal and found < 3:
            st.apply(rng.choice(st.legal_codes()))
            if st.is_terminal:
                break
            view = Observation.of(st)
            opp = 1 - view.seat
            mana = view.to_json()["players"][opp]["mana"]
            uniform = [unspent_mana_breaches(view.determinize(s).to_json(), opp, mana) for s in range(16)]
            if mana < 1 or min(uniform) > 0 or max(uniform) == 0:
                continue
            agent = InferringAgent(parse_agent("mcts"), tries=64)
            for k in range(8):
                det = agent.determinization(view, random.Random(k))
                assert unspent_mana_breaches(det.to_json(), opp, mana) == 0
                assert Observation.of(det, view.seat) == view
            found += 1
    assert found == 3
