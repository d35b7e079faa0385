"""Properties of whole random games (hypothesis, deterministic under tests/conftest.py's
profile): no state along them is invalid; every card is accounted for (hand + deck + secrets
+ revealed = the decklist, The Coin for the second player); observations hide exactly the
opponent's hand, deck order and secrets; determinizations follow the unseen multiset (a
chi-square test)."""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as hs
from maag.engine import Game, Observation, State
from maag.engine.games.cards.decks import DECKS
from scipy.stats import chisquare

DECK_NAMES = ["M", "P", "X"]


def games() -> hs.SearchStrategy[tuple[Game, int]]:
    return hs.tuples(hs.sampled_from(DECK_NAMES), hs.sampled_from(DECK_NAMES), hs.integers(0, 2**32)).map(
        lambda t: (Game("cards", {"deck1": t[0], "deck2": t[1]}), t[2]))


def check_invariants(st: State) -> None:
    js = st.to_json()
    for seat, p in enumerate(js["players"]):
        assert len(p["hand"]) <= 10 and len(p["board"]) <= 7 and len(p["deck"]) <= 30
        assert len(p["secrets"]) <= 5 and len(set(p["secrets"])) == len(p["secrets"])
        assert 0 <= p["mana"] <= 10 and 0 <= p["max_mana"] <= 10
        assert p["hero"]["hp"] <= 30 and p["hero"]["armor"] >= 0
        for m in p["board"]:
            assert m["hp"] <= m["max_hp"] and m["atk"] >= 0
            if not js["terminal"]:
                assert m["hp"] > 0, "a dead minion stayed on the board"
        if p["weapon"] is not None and not js["terminal"]:
            assert p["weapon"]["durability"] > 0
        held = Counter(p["hand"] + p["deck"] + p["secrets"])
        held.update(p["revealed"])
        want = Counter({cid: n for cid, n in DECKS[p["deck_list"]][1]})
        if js["first"] != seat + 1:
            want["T_COIN"] = 1
        assert held == want, f"seat {seat + 1}: cards appeared or vanished"
    if not js["terminal"]:
        assert js["players"][0]["hero"]["hp"] > 0 and js["players"][1]["hero"]["hp"] > 0


@settings(max_examples=25, deadline=None)
@given(games())
def test_random_games_never_leave_an_invalid_state(case: tuple[Game, int]) -> None:
    game, seed = case
    st = game.new_state(seed=seed)
    rnd = random.Random(seed)
    while not st.is_terminal:
        check_invariants(st)
        again = game.state_from_json(st.to_json())
        assert again == st and again.hash() == st.hash()
        acts = st.legal_actions()
        st.apply(acts[rnd.randrange(len(acts))])
    check_invariants(st)


def _hidden_texts(obs: dict[str, Any], seat: int) -> list[str]:
    opp = obs["players"][2 - seat]
    return [k for k in ("hand", "deck", "secrets") if k in opp]


@settings(max_examples=15, deadline=None)
@given(games())
def test_observations_hide_the_opponents_hand_deck_and_secrets(case: tuple[Game, int]) -> None:
    game, seed = case
    st = game.new_state(seed=seed)
    rnd = random.Random(seed)
    for _ in range(60):
        if st.is_terminal:
            break
        full = st.to_json()
        for seat in (1, 2):
            obs = st.observation(seat - 1).to_json()
            assert _hidden_texts(obs, seat) == []
            opp, mine = obs["players"][2 - seat], obs["players"][seat - 1]
            real = full["players"][2 - seat]
            assert (opp["hand_count"], opp["deck_count"], opp["secret_count"]) == (
                len(real["hand"]), len(real["deck"]), len(real["secrets"]))
            assert mine["hand"] == full["players"][seat - 1]["hand"]
            assert mine["deck"] == dict(Counter(full["players"][seat - 1]["deck"]))
            assert opp["board"] == real["board"]
        acts = st.legal_actions()
        st.apply(acts[rnd.randrange(len(acts))])


def _midgame(seed: int) -> State:
    st = Game("cards", {"deck1": "M", "deck2": "P", "first": "1"}).new_state(seed=seed)
    rnd = random.Random(seed)
    while st.to_json()["ply"] < 8:
        acts = st.legal_actions()
        st.apply(acts[rnd.randrange(len(acts))])
    return st


def test_determinized_hands_follow_the_unseen_multiset() -> None:
    st = _midgame(11)
    obs = Observation.of(st, 0)
    js = obs.to_json()
    opp = js["players"][1]
    assert opp["secret_count"] == 0 and opp["hand_count"] >= 3
    unseen = Counter(obs.unseen())
    unseen.pop("T_COIN", None)
    n = 4000
    seen: Counter[str] = Counter()
    coins = 0
    for i in range(n):
        hand = obs.determinize(seed=i).to_json()["players"][1]["hand"]
        coins += hand.count("T_COIN")
        seen.update(c for c in hand if c != "T_COIN")
    assert coins == n * ("T_COIN" in st.to_json()["players"][1]["hand"])  # the Coin is known to be held
    cards = sorted(unseen)
    total = sum(unseen.values())
    drawn = sum(seen.values())
    expected = [drawn * unseen[c] / total for c in cards]
    observed = [seen[c] for c in cards]
    assert set(seen) <= set(unseen), "a card the opponent cannot hold was dealt to it"
    assert chisquare(observed, expected).pvalue > 1e-3


def test_two_observers_of_one_public_history_see_the_same_bytes() -> None:
    """Two deals that differ only in seat 2's hidden cards look the same to seat 1."""
    st = _midgame(5)
    js = st.to_json()
    other = json.loads(json.dumps(js))
    p2 = other["players"][1]
    pool = p2["hand"] + p2["deck"]
    random.Random(1).shuffle(pool)
    p2["hand"], p2["deck"] = pool[:len(p2["hand"])], pool[len(p2["hand"]):]
    twin = st.game.state_from_json(other)
    assert twin != st
    assert twin.observation(0).to_bytes() == st.observation(0).to_bytes()
    assert twin.observation(1).to_bytes() != st.observation(1).to_bytes()
