"""Determinization strategies: consistency with the observation, randomness across seeds,
the uniform sampler's distribution (scipy chi-square at a strict alpha, fixed seeds), and
what the most-probable and all-unseen strategies promise."""

from __future__ import annotations

import random
from collections import Counter
from math import comb, prod

import pytest
from maag.engine import Observation, State
from maag.engine.games.heroes.codec import CARDS
from maag.engine.observation import STRATEGIES
from scipy.stats import chisquare, hypergeom

from .helpers import GAME, custom_observation_state, midgame, opponent_deck, opponent_hand

ALPHA = 1e-3  # strict: a correct sampler fails one such test in a thousand (and seeds are fixed)
MIDGAMES = [midgame(s) for s in (1, 2, 3, 4)]
STANDARD = (3, 3, 3, 3, 1, 2, 2, 3, 2, 3, 3)  # the standard deck by card index


def _all_hands(unseen: tuple[int, ...], k: int, i: int = 0) -> list[tuple[int, ...]]:
    """Every hand (count vector) of k cards from the multiset `unseen`."""
    if i == len(unseen):
        return [()] if k == 0 else []
    out = []
    for x in range(min(unseen[i], k), -1, -1):
        out += [(x, *rest) for rest in _all_hands(unseen, k - x, i + 1)]
    return out


def _weight(unseen: tuple[int, ...], hand: tuple[int, ...]) -> int:
    """prod C(u_c, h_c): the number of ways to draw `hand` (multivariate hypergeometric)."""
    return prod(comb(u, h) for u, h in zip(unseen, hand, strict=True))


def _unseen(obs: Observation) -> tuple[int, ...]:
    d = obs.unseen()
    return tuple(d.get(c, 0) for c in CARDS)


@pytest.mark.parametrize("strategy", list(STRATEGIES))
@pytest.mark.parametrize("i", range(len(MIDGAMES)))
def test_every_determinization_agrees_with_the_observation(strategy: str, i: int) -> None:
    """Observing a determinization gives back the observation, byte for byte (for the
    all-unseen strategy: everything but the opponent's hand and deck sizes, which it moves)."""
    state = MIDGAMES[i]
    for seat in (0, 1):
        obs = Observation.of(state, seat)
        for seed in range(5):
            det = obs.determinize(seed, strategy)
            again = Observation.of(det, seat)
            if strategy != "all-unseen":
                assert again == obs
            else:
                a, b = again.to_json(), obs.to_json()
                for key in ("hand_sizes", "deck_sizes"):
                    a.pop(key)
                    b.pop(key)
                assert a == b
            assert det.to_json()["board"] == state.to_json()["board"]
            c, t = det.cdata, state.cdata
            assert list(c.hand[seat]) == list(t.hand[seat]) and list(c.deck[seat]) == list(t.deck[seat])


def test_different_seeds_give_different_hidden_cards() -> None:
    for state in MIDGAMES:
        seat = state.current_player
        obs = Observation.of(state, seat)
        hands = {opponent_hand(obs.determinize(seed), seat) for seed in range(30)}
        assert len(hands) > 1
        seeds = {tuple(obs.determinize(seed).cdata.deck_seed) for seed in range(30)}
        assert len(seeds) > 1
    # and the same seed gives the same determinization
    obs = Observation.of(MIDGAMES[0])
    assert obs.determinize(5) == obs.determinize(5)


def _sample_hands(obs: Observation, n: int, seat: int) -> Counter[tuple[int, ...]]:
    return Counter(opponent_hand(obs.determinize(seed), seat) for seed in range(n))


def _hand_chisquare(counts: Counter[tuple[int, ...]], unseen: tuple[int, ...], k: int) -> float:
    hands = _all_hands(unseen, k)
    total_w = comb(sum(unseen), k)
    assert sum(_weight(unseen, h) for h in hands) == total_w
    n = sum(counts.values())
    assert set(counts) <= set(hands), "a sampled hand is not a sub-multiset of the unseen cards"
    observed = [counts.get(h, 0) for h in hands]
    expected = [n * _weight(unseen, h) / total_w for h in hands]
    return float(chisquare(observed, expected).pvalue)


def test_uniform_hands_follow_the_multivariate_hypergeometric() -> None:
    """The whole hand's distribution, over every possible hand, on a position with a small
    unseen multiset (8 cards of 5 kinds, 4 in hand: 50 hands of unequal probability)."""
    unseen = {"knight": 3, "archer": 2, "cleric": 1, "potion": 1, "scroll": 1}
    state = custom_observation_state(unseen, 4)
    obs = Observation.of(state, 0)
    vec = _unseen(obs)
    assert vec == tuple(unseen.get(c, 0) for c in CARDS)
    counts = _sample_hands(obs, 12000, 0)
    assert _hand_chisquare(counts, vec, 4) > ALPHA


def test_the_chisquare_check_catches_a_wrong_sampler() -> None:
    """The same check rejects hands drawn with replacement, so it can fail."""
    unseen = (3, 2, 1, 0, 0, 0, 1, 0, 1, 0, 0)
    rng = random.Random(3)
    cards = [i for i, u in enumerate(unseen) for _ in range(u)]
    wrong: Counter[tuple[int, ...]] = Counter()
    while sum(wrong.values()) < 12000:
        draw = [rng.choice(cards) for _ in range(4)]
        hand = tuple(draw.count(i) for i in range(len(unseen)))
        if all(h <= u for h, u in zip(hand, unseen, strict=True)):  # keep it a possible hand
            wrong[hand] += 1
    assert _hand_chisquare(wrong, unseen, 4) < ALPHA


@pytest.mark.parametrize("i", range(2))
def test_uniform_marginals_in_real_games(i: int) -> None:
    """In real mid-game observations (standard deck), the count of each card kind in the
    sampled hand follows its hypergeometric law (chi-square per kind, Bonferroni)."""
    state = MIDGAMES[i]
    seat = state.current_player
    obs = Observation.of(state, seat)
    vec = _unseen(obs)
    total, k = sum(vec), int(state.cdata.hand_n[1 - seat])
    n = 6000
    samples = [opponent_hand(obs.determinize(10_000 * i + s), seat) for s in range(n)]
    kinds = [c for c in range(len(CARDS)) if vec[c] > 0]
    for c in kinds:
        law = hypergeom(total, vec[c], k)
        support = range(0, min(vec[c], k) + 1)
        observed = Counter(s[c] for s in samples)
        exp = [n * float(law.pmf(x)) for x in support]
        obs_counts = [observed.get(x, 0) for x in support]
        # merge the sparse tail into its neighbour so every expected count is >= 5
        while len(exp) > 2 and exp[-1] < 5:
            exp[-2] += exp.pop()
            obs_counts[-2] += obs_counts.pop()
        assert sum(obs_counts) == n
        p = float(chisquare(obs_counts, exp).pvalue)
        assert p > ALPHA / len(kinds), (CARDS[c], obs_counts, exp)


def test_most_probable_is_the_likeliest_hand() -> None:
    """Brute force over every possible hand: the strategy's hand has the largest
    multivariate hypergeometric probability and, among equally likely hands, the largest
    count vector in card order (ties go to lower card indices); every seed gives it."""
    rng = random.Random(11)
    cases = [Observation.of(s, p) for s in MIDGAMES for p in (0, 1)]
    cases += [Observation.of(custom_observation_state(u, k), 0) for u, k in [
        ({"knight": 3, "archer": 1}, 2),                       # tie: (2,0) and (1,1) both weigh 3
        ({"knight": 2, "archer": 2, "cleric": 2}, 3),
        ({"ninja": 1, "inferno": 2, "scroll": 1, "potion": 2}, 4),
        ({c: rng.randint(0, n - (c == "wizard")) for c, n in zip(CARDS, STANDARD, strict=True)}, 6),
    ] if sum(u.values()) >= k]
    for obs in cases:
        seat = obs.seat
        vec = _unseen(obs)
        det = obs.determinize(1, "most-probable")
        k = sum(opponent_hand(det, seat))
        best = max(_all_hands(vec, k), key=lambda h: (_weight(vec, h), h))
        assert opponent_hand(det, seat) == best
        assert tuple(u - h for u, h in zip(vec, best, strict=True)) == opponent_deck(det, seat)
        for seed in (2, 3):
            assert opponent_hand(obs.determinize(seed, "most-probable"), seat) == best


def test_all_unseen_gives_the_opponent_every_unseen_card() -> None:
    for state in MIDGAMES:
        for seat in (0, 1):
            obs = Observation.of(state, seat)
            det = obs.determinize(4, "all-unseen")
            assert opponent_hand(det, seat) == _unseen(obs)
            assert sum(opponent_deck(det, seat)) == 0
            c, t = det.cdata, state.cdata
            assert c.hand_n[1 - seat] == t.hand_n[1 - seat] + t.deck_n[1 - seat] and c.deck_n[1 - seat] == 0
            assert c.observer == -1
            # on its turn the opponent may play any unseen card: every unseen unit kind is
            # deployable (when a deploy square is free, all of them are)
            if det.current_player != 1 - seat:
                det.apply(0)  # end the observer's turn (it draws from its own deck)
            if det.is_terminal:
                continue
            deployed = {a.to_dict()["card"] for a in det.legal_actions() if a.to_dict()["type"] == "deploy"}
            if deployed:
                assert deployed == {CARDS[i] for i in range(5) if _unseen(obs)[i] > 0}


def test_full_states_and_unknown_strategies() -> None:
    state = MIDGAMES[0]
    obs = Observation.of(state)
    with pytest.raises(ValueError, match="unknown determinization strategy"):
        obs.determinize(1, "oracle")
    # a "determinization" of a full state is the state itself, for every strategy
    from maag.engine._lowlevel import ffi, lib

    for code in STRATEGIES.values():
        out = State(GAME)
        rng = ffi.new("mg_rng *")
        assert lib.mg_determinize(GAME.vt, state._buf, code, rng, out._buf) == lib.MG_OK
        assert out.to_bytes() == state.to_bytes()
    out = State(GAME)
    rc = lib.mg_determinize(GAME.vt, obs.as_state()._buf, 99, ffi.new("mg_rng *"), out._buf)
    assert rc == lib.MG_ERR_CONFIG
