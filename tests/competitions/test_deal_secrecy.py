"""The attack of issue "trust": can a bot compute the hidden deal of its tournament games?

A seat knows the public things: the tournament's command line and its defaults, the two bots'
names, the format, and its own first observation. Before seeds were secret, the tournament's
default base seed was 1 and every game's seed a hash of (base, round, pair, index), so a bot
could try the few candidate seeds, keep the one whose start matched its observation, and
know the opponent's hand, the deck order and every future draw.

The test plays tournaments through `maag tournament` (real referee, bot processes) and then
runs that attack on every stored game, from seat 1's first observation:
- with an explicit --seed the attack must succeed (it is a real attack: anyone who knows the
  seed can compute the deals, as --seed's help says);
- with the defaults it must find no candidate at all, so the attacker is left with the
  uniform determinization of what it cannot see.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from maag.engine import Game
from maag.server.storage.base import open_storage

GAMES_PER_PAIR = 4
GUESSED_BASES = range(0, 64)  # the default (1) and every small --seed someone might type


def _hash_seed(*parts: Any) -> int:
    """Both ways a schedule has derived a game's seed from public parts (without and with the
    game's index in its pair)."""
    h = hashlib.sha256(json.dumps(list(parts)).encode()).digest()
    return int.from_bytes(h[:8], "big") & (2**63 - 1)


def candidate_seeds(names: tuple[str, str]) -> set[int]:
    lo, hi = sorted(names)
    out = set()
    for base in GUESSED_BASES:
        for k in range(GAMES_PER_PAIR // 2):
            out.add(_hash_seed(base, 0, lo, hi, k))
            for s in (0, 1):
                out.add(_hash_seed(base, 0, lo, hi, k, s))
    return out


def attack(game: str, config: dict[str, Any], seen: dict[str, Any], names: tuple[str, str]) -> list[int]:
    """Candidate seeds whose deal gives seat 1 exactly the observation it saw."""
    g = Game(game, config)
    return [s for s in candidate_seeds(names) if g.new_state(s).observation(0).to_json() == seen]


def play(tmp: Path, *extra: str) -> list[Any]:
    db = tmp / "t.sqlite3"
    cmd = [sys.executable, "-m", "maag.server", "tournament", "--bot", "first", "--bot", "random",
           "--games-per-pair", str(GAMES_PER_PAIR), "--game", "cards", "--tc", "1s", "--db", str(db),
           "--json", *extra]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=tmp)
    assert r.returncode == 0, r.stderr[-3000:]
    st = open_storage(db)
    try:
        games = [g for g in st.list_games() if g.status == "finished"]
        return [(g, st.get_replay(g.id)) for g in games]
    finally:
        st.close()


def run_attack(played: list[Any]) -> list[int]:
    """For each game, how many candidate seeds give the real deal away: the same first
    observation for seat 1 *and* the same hidden hand, deck and draws.

    A candidate that only matches the observation is a coincidence, not a leak: seat 1's first
    observation (its few cards and who starts) has a few thousand values, so among the ~400
    guessed seeds one matches by chance in about one game in twenty; what it predicts for the
    hidden part is then wrong, and the attacker learns nothing it can trust.
    """
    found = []
    for g, replay in played:
        real = Game(replay["game"], replay["config"]).new_state(int(replay["seed"]))
        seen = real.observation(0).to_json()
        hits = attack(replay["game"], replay["config"], seen, (g.seats[0], g.seats[1]))
        whole = real.to_json()
        g_ = Game(replay["game"], replay["config"])
        found.append(sum(g_.new_state(s).to_json() == whole for s in hits))
    return found


def test_a_known_seed_gives_the_deals_away(tmp_path: Path) -> None:
    played = play(tmp_path, "--seed", "1")
    assert len(played) == GAMES_PER_PAIR
    assert all(n >= 1 for n in run_attack(played))  # the attack works when the seed is public


def test_default_deals_cannot_be_computed_by_a_bot(tmp_path: Path) -> None:
    played = play(tmp_path)
    assert len(played) == GAMES_PER_PAIR
    assert run_attack(played) == [0] * GAMES_PER_PAIR
    seeds = [int(r["seed"]) for _, r in played]
    # Mirrored: each deal is played twice (once from each seat), and only twice.
    assert sorted(seeds.count(s) for s in set(seeds)) == [2] * (GAMES_PER_PAIR // 2)


def test_independent_deals_give_every_game_its_own_seed(tmp_path: Path) -> None:
    played = play(tmp_path, "--deals", "independent")
    seeds = [int(r["seed"]) for _, r in played]
    assert len(set(seeds)) == GAMES_PER_PAIR
    assert run_attack(played) == [0] * GAMES_PER_PAIR
