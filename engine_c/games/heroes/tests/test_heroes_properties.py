"""Property tests of the heroes core over random play, for all maps and both draw modes:
invariants after every action, enumeration against validation over the whole structured
action-code space, illegal codes leave the state byte-identical, clones, JSON round trips,
observations and determinizations. Deterministic (tests/conftest.py's hypothesis profile).

A game is driven by a C random playout for a drawn number of actions (to reach mid- and
late-game positions quickly), then by hypothesis-chosen legal actions."""

from __future__ import annotations

import os
import random
from collections import Counter
from functools import cache
from typing import Any

import heroes_oracle as oracle
import pytest
from heroes_position import game
from hypothesis import given, settings
from hypothesis import strategies as st
from maag.engine import EngineError, GameOverError, State
from maag.engine._lowlevel import ffi, lib

MAPS = ["a", "a-small", "a-tiny"]
DRAWS = ["seeded", "random"]
SIZES = {"a": (9, 5), "a-small": (7, 4), "a-tiny": (5, 3)}
CHECK = lib.mg_heroes_vt.check


def pack(t: int, card: int = 0, fx: int = 0, fy: int = 0, tx: int = 0, ty: int = 0) -> int:
    return t | card << 4 | fx << 8 | fy << 12 | tx << 16 | ty << 20


@cache
def code_space(map_name: str) -> tuple[int, ...]:
    """Every action code with fields in range for the map (cards 0..15 so that the
    undefined card indices are in it too)."""
    w, h = SIZES[map_name]
    squares = [(x, y) for x in range(w) for y in range(h)]
    codes = [0]
    codes += [pack(t, c, 0, 0, x, y) for t in (1, 2, 3) for c in range(16) for x, y in squares]
    codes += [pack(t, 0, fx, fy, tx, ty) for t in (4, 5, 6, 7) for fx, fy in squares for tx, ty in squares]
    codes += [pack(8, c) for c in range(16)]
    return tuple(codes)


# ---- invariants ---------------------------------------------------------------------------------------

def cards_of(j: dict[str, Any], p: int) -> Counter[str]:
    return Counter(j["hands"][str(p)]) + Counter(j["decks"][str(p)])


def check_state(s: State) -> dict[str, Any]:
    """Invariants of one state; returns its JSON form."""
    j = s.to_json()
    full = oracle.full_deck(j["map"])
    for p in (1, 2):
        on_board = Counter(u["kind"] for u in j["board"] if u["owner"] == p and u["kind"] != "crystal")
        assert not (cards_of(j, p) + on_board) - full, f"player {p} holds more than the deck composition"
        assert len(j["hands"][str(p)]) <= 6
    assert 0 <= j["ap"] <= j["ap_per_turn"]
    assert j["current"] == (1 if j["turn"] % 2 else 2) and s.current_player == j["current"] - 1
    for u in j["board"]:
        assert u["max_hp"] == oracle.BASE_HP[u["kind"]] + sum(
            oracle.BASE_HP[u["kind"]] // 10 for i in u["items"] if i in ("dragonscale", "shining_helmet"))
        assert 0 <= u["hp"] <= u["max_hp"]
        if u["kind"] == "crystal":
            assert u["hp"] > 0 and u["items"] == []
    assert s.hash() == s.hash() == s.clone().hash()
    c = s.cdata
    assert c.zob == lib.hr_zobrist_full(c)
    back = s.game.state_from_json(j)
    assert back.to_bytes() == s.to_bytes() and back.hash() == s.hash()
    assert s.is_terminal == j["terminal"]
    if not s.is_terminal:
        assert j["winner"] == 0 and s.winner is None
        assert s.evaluate(0) == oracle.evaluate(j, 0) and s.evaluate(1) == oracle.evaluate(j, 1)
    return j


def check_transition(before: dict[str, Any], action: dict[str, Any], s: State) -> None:
    """What one applied action may change (cards, AP, turn, seeds)."""
    after = s.to_json()
    p, o = str(before["current"]), str(3 - before["current"])
    t = action["type"]
    if t != "end_turn":
        assert after["ap"] == before["ap"] - 1 and after["turn"] == before["turn"]
        assert after["deck_seed"] == before["deck_seed"]
        assert (after["hands"][o], after["decks"][o]) == (before["hands"][o], before["decks"][o])
        played = Counter([action["card"]]) if t in ("deploy", "equip", "spell", "swap_card") else Counter()
        assert Counter(before["hands"][p]) - Counter(after["hands"][p]) == played
        assert not Counter(after["hands"][p]) - Counter(before["hands"][p])
        returned = played if t == "swap_card" else Counter()
        assert Counter(after["decks"][p]) - Counter(before["decks"][p]) == returned
        assert not Counter(before["decks"][p]) - Counter(after["decks"][p])
        return
    if after["terminal"]:
        for key in ("turn", "current", "ap"):
            assert after[key] == before[key]
        assert (after["hands"], after["decks"], after["deck_seed"]) == \
            (before["hands"], before["decks"], before["deck_seed"])
    else:
        assert (after["turn"], after["current"], after["ap"]) == \
            (before["turn"] + 1, int(o), before["ap_per_turn"])
        for q in (p, o):
            hb, ha = Counter(before["hands"][q]), Counter(after["hands"][q])
            assert cards_of(after, int(q)) == cards_of(before, int(q))
            assert not hb - ha and ha.total() == min(6, cards_of(before, int(q)).total())
            if before["draws"] == "random" or ha == hb:
                assert after["deck_seed"][q] == before["deck_seed"][q]
    assert not [u for u in after["board"] if u["owner"] == before["current"] and u["hp"] == 0]


def check_codes(s: State, rng: random.Random) -> None:
    """check() accepts exactly the legal list over the whole structured code space; the
    legal list has no duplicates; codes outside it are refused by apply, state untouched."""
    legal = s.legal_codes()
    assert len(set(legal)) == len(legal)
    buf = s.cdata
    accepted = {c for c in code_space(s.to_json()["map"]) if CHECK(buf, c) == 0}
    assert accepted == set(legal)
    if legal:
        assert legal[-1] == 0
        ap = s.to_json()["ap"]
        assert lib.hr_reference_legal_count(buf) == (len(legal) - 1 if ap > 0 else 1)
    before = s.to_bytes()
    illegal = [c for c in code_space(s.to_json()["map"]) if c not in accepted]
    samples = rng.sample(illegal, 25) + [rng.getrandbits(32) for _ in range(10)]
    for code in samples:
        if code in accepted:
            continue
        with pytest.raises(EngineError):
            s.apply(code)
        assert s.to_bytes() == before
    clone = s.clone()
    if legal:
        clone.apply(legal[rng.randrange(len(legal))])
        if not clone.is_terminal:
            clone.apply(0)
    assert s.to_bytes() == before


def check_observation(s: State, seeds: range) -> None:
    j = s.to_json()
    for seat in (0, 1):
        me, opp = str(seat + 1), str(2 - seat)
        o = s.observation(seat)
        oj = o.to_json()
        assert oj["hands"][opp] == [] and "deck_seed" not in oj
        assert (o.cdata.deck_seed[0], o.cdata.deck_seed[1], o.cdata.observer) == (0, 0, seat)
        assert Counter(oj["decks"][opp]) == cards_of(j, int(opp))
        assert (oj["hands"][me], oj["decks"][me]) == (j["hands"][me], j["decks"][me])
        for key in ("board", "turn", "current", "ap", "terminal", "winner"):
            assert oj[key] == j[key]
        assert oj["hand_sizes"][opp] == len(j["hands"][opp])
        assert oj["deck_sizes"][opp] == sum(j["decks"][opp].values())
        assert o.cdata.zob == lib.hr_zobrist_full(o.cdata)
        assert s.game.state_from_json(oj).to_bytes() == o.to_bytes()
        for seed in seeds:
            d = o.determinize(seed)
            dj = d.to_json()
            assert d.cdata.observer == -1 and "observer" not in dj
            assert (dj["hands"][me], dj["decks"][me]) == (j["hands"][me], j["decks"][me])
            for key in ("board", "turn", "current", "ap", "terminal", "winner"):
                assert dj[key] == j[key]
            assert len(dj["hands"][opp]) == len(j["hands"][opp])
            assert cards_of(dj, int(opp)) == cards_of(j, int(opp))
            assert d.cdata.zob == lib.hr_zobrist_full(d.cdata)
            assert s.game.state_from_json(dj).to_bytes() == d.to_bytes()
            if seat == s.current_player:
                assert d.legal_codes() == s.legal_codes()
    assert s.determinize(1).to_bytes() == s.to_bytes()  # a full state is copied


# ---- drivers ---------------------------------------------------------------------------------------------

games = st.tuples(st.sampled_from(MAPS), st.sampled_from(DRAWS), st.integers(0, 2**32 - 1),
                  st.integers(0, 250))


def start(spec: tuple[str, str, int, int]) -> State:
    map_name, draws, seed, prefix = spec
    s = game(map_name, draws).new_state(seed)
    s.random_playout(prefix)
    return s


@settings(max_examples=200)
@given(spec=games, data=st.data())
def test_random_play_invariants(spec: tuple[str, str, int, int], data: st.DataObject) -> None:
    s = start(spec)
    before = check_state(s)
    for _ in range(60):
        if s.is_terminal:
            break
        legal = s.legal_actions()
        a = legal[data.draw(st.integers(0, len(legal) - 1))]
        s.apply(a)
        after = check_state(s)
        check_transition(before, a.to_dict(), s)
        before = after
    if s.is_terminal:
        assert s.legal_codes() == []
        with pytest.raises(GameOverError):
            s.apply(0)


@settings(max_examples=100)
@given(spec=games, data=st.data())
def test_check_accepts_exactly_the_legal_list(spec: tuple[str, str, int, int], data: st.DataObject) -> None:
    s = start(spec)
    rng = random.Random(spec[2])
    for _ in range(16):
        check_codes(s, rng)
        if s.is_terminal:
            break
        legal = s.legal_codes()
        s.apply(legal[data.draw(st.integers(0, len(legal) - 1))])


@settings(max_examples=100)
@given(spec=games, data=st.data())
def test_observation_and_determinization(spec: tuple[str, str, int, int], data: st.DataObject) -> None:
    s = start(spec)
    for _ in range(8):
        check_observation(s, range(3))
        if s.is_terminal:
            break
        legal = s.legal_codes()
        s.apply(legal[data.draw(st.integers(0, len(legal) - 1))])


def check_groups(s: State) -> None:
    """legal_groups and group_legal (the rollout policies' one-group enumeration) agree
    with legal and action_groups: the same groups in the same order, the same actions; and
    apply_legal agrees with apply on every legal action."""
    vt = s.game.vt
    n = vt.legal(s.cdata, ACTS)
    legal = [ACTS[i] for i in range(n)]
    start, group = ffi.new("int[]", n + 1), ffi.new("int[]", max(n, 1))
    runs = vt.action_groups(s.cdata, ACTS, n, start, group) if n else 0
    by_group: dict[int, list[int]] = {}
    for r in range(runs):
        by_group.setdefault(group[r], []).extend(legal[start[r]:start[r + 1]])
    expect = [g for g in by_group if g != 0]
    ng = vt.legal_groups(s.cdata, GROUPS)
    assert [GROUPS[i] for i in range(ng)] == expect
    for g in expect:
        k = vt.group_legal(s.cdata, g, ACTS)
        assert [ACTS[i] for i in range(k)] == by_group[g]
    if n:
        assert vt.group_legal(s.cdata, 0, ACTS) == 1 and ACTS[0] == 0
    for a in legal:  # apply_legal (no checks) does what apply does
        x, y = s.clone(), s.clone()
        assert vt.apply(x.cdata, a, x._rng) == vt.apply_legal(y.cdata, a, y._rng) == lib.MG_OK
        assert x.to_bytes() == y.to_bytes()


ACTS = ffi.new("mg_action[]", lib.MG_MAX_ACTIONS)
GROUPS = ffi.new("int[]", lib.MG_MAX_ACTIONS)


@settings(max_examples=100)
@given(spec=games, data=st.data())
def test_groups_agree_with_the_legal_list(spec: tuple[str, str, int, int], data: st.DataObject) -> None:
    s = start(spec)
    for _ in range(30):
        check_groups(s)
        if s.is_terminal:
            break
        legal = s.legal_codes()
        s.apply(legal[data.draw(st.integers(0, len(legal) - 1))])


@pytest.mark.parametrize("map_name", MAPS)
@pytest.mark.parametrize("draws", DRAWS)
def test_random_games_to_the_end(map_name: str, draws: str) -> None:
    """Whole random games (C playouts) end, with a sane final state, and the Python-driven
    game from the same start does too, with invariants after every action."""
    g = game(map_name, draws)
    winners: Counter[int] = Counter()
    for seed in range(40):
        s = g.new_state(seed)
        n = s.random_playout()
        assert n > 0 and s.is_terminal and s.winner in (-1, 0, 1)
        winners[s.winner] += 1
        check_state(s)
    if map_name != "a":  # on map a random play reaches the turn limit
        assert winners[0] + winners[1] > 0
    rng = random.Random(map_name + draws)
    for seed in range(2):
        s = g.new_state(1000 + seed)
        before = check_state(s)
        steps = 0
        while not s.is_terminal:
            legal = [a for a in s.legal_actions() if a.code != 0] or s.legal_actions()
            a = rng.choice(legal)
            s.apply(a)
            after = check_state(s)
            check_transition(before, a.to_dict(), s)
            before = after
            steps += 1
        assert steps > 10


def test_random_codes_on_random_states() -> None:
    """Arbitrary 32-bit codes never crash: refused codes leave the state untouched, and any
    accepted code was in the legal list."""
    rng = random.Random(5)
    for map_name in MAPS:
        for seed in range(15):
            s = game(map_name, "seeded").new_state(seed)
            s.random_playout(rng.randrange(300))
            legal = set(s.legal_codes())
            before = s.to_bytes()
            for _ in range(400):
                code = rng.getrandbits(rng.choice((8, 16, 24, 32)))
                if CHECK(s.cdata, code) == 0:
                    assert code in legal
                    continue
                with pytest.raises(EngineError):
                    s.apply(code)
                assert s.to_bytes() == before


def test_determinizations_differ_between_seeds() -> None:
    checked = 0
    for map_name in MAPS:
        for seed in range(5):
            s = game(map_name).new_state(seed)
            s.random_playout(seed * 7)
            if s.is_terminal:
                continue
            for seat in (0, 1):
                o = s.observation(seat)
                oj = o.to_json()
                opp = str(2 - seat)
                pool = Counter(oj["decks"][opp])
                if pool.total() <= oj["hand_sizes"][opp] or len(pool) < 2:
                    continue  # only one possible hand
                checked += 1
                hands = {tuple(o.determinize(k).to_json()["hands"][opp]) for k in range(16)}
                assert len(hands) > 1, (map_name, seed, seat)
    assert checked >= 20


def test_clone_is_independent() -> None:
    s = game("a").new_state(3)
    s.random_playout(40)
    before = s.to_bytes()
    c = s.clone()
    assert c.to_bytes() == before and c == s
    c.random_playout()
    assert c.is_terminal and s.to_bytes() == before and not s.is_terminal
    # and the other way round
    c = s.clone()
    s.random_playout()
    assert c.to_bytes() == before


def test_c_playout_loop() -> None:
    """The C playout loop (no Python between actions) over every map and draw mode; the
    sanitizer run lengthens it with MAAG_FUZZ_SECONDS."""
    seconds = float(os.environ.get("MAAG_FUZZ_SECONDS", "0.2"))
    vt = ffi.addressof(lib.mg_heroes_vt)
    games_n, actions, elapsed = ffi.new("long *"), ffi.new("long *"), ffi.new("double *")
    for map_name in MAPS:
        for draws in DRAWS:
            s = game(map_name, draws).new_state(11)
            rc = lib.mg_bench_playouts(vt, s.cdata, seconds / 6, 99, games_n, actions, elapsed)
            assert rc == 0 and games_n[0] > 0 and actions[0] > games_n[0]
