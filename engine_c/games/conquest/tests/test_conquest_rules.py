"""The rules of spec/conquest.md §3-5 on hand-built positions of the default map: moves and
blitz (§3, §4.1), units moving together (joins), the non-combat move (§4.2), battles with
chosen dice and the casualty order (§5, §5.1), the end of the round (§4.3), and the dice
battle's outcome distribution against exact probabilities computed here independently."""

from __future__ import annotations

from collections import Counter, defaultdict
from functools import cache

import pytest
from conquest_position import END, end_phase_with, move, position
from maag.engine import IllegalActionError, State
from scipy.stats import chisquare


def refused(st: State, action: dict, why: str) -> None:
    before = st.to_bytes()
    with pytest.raises(IllegalActionError, match=why):
        st.apply(action)
    assert st.to_bytes() == before


def owner(st: State, t: str) -> str:
    js = st.to_json()
    return "Red" if t in js["owner"]["Red"] else "Blue"


# ---- moves ---------------------------------------------------------------------------------

def test_a_tank_blitzes_through_an_empty_territory_and_attacks_beyond() -> None:
    st = position({"R1": [0, 15], "B6": [28]})
    refused(st, move(0, "R1", "B1", "B6"), "longer than the unit's move")  # infantry: 1 step
    st.apply(move(15, "R1", "B1", "B6"))
    js = st.to_json()
    assert owner(st, "B1") == "Red" and "B1" in js["conquered"]  # taken at move time, left empty
    assert owner(st, "B6") == "Blue" and js["units"]["B6"] == [15, 28]  # a battle is pending
    assert js["moved"] == [15]


def test_no_path_crosses_enemy_units_and_only_tanks_blitz() -> None:
    st = position({"R1": [15], "R5": [21], "B1": [28]})
    refused(st, move(15, "R1", "B1", "B6"), "crosses enemy units")
    st2 = position({"R6": [15], "R2": [2]}, red=["R2", "R3", "R4", "R5", "R6", "R7"])
    st2.apply(move(15, "R6", "R1", "B1"))  # through empty enemy R1: a blitz
    assert owner(st2, "R1") == "Red" and owner(st2, "B1") == "Red"  # both empty: both taken


def test_a_combat_move_ends_in_enemy_territory_and_a_blitz_too() -> None:
    st = position({"R3": [15], "R1": [28]}, red=["R2", "R3", "R4", "R5", "R6", "R7"])
    refused(st, move(15, "R3", "R6"), "must end in enemy territory")
    refused(st, move(15, "R3", "R6", "R2"), "must end in enemy territory")
    st.apply(move(15, "R3", "R6", "R1"))  # through own R6 into Blue's R1: a battle is pending
    assert st.to_json()["units"]["R1"] == [15, 28] and owner(st, "R1") == "Blue"


def test_units_moving_together_join_and_a_later_move_may_not() -> None:
    st = position({"R1": [0, 1, 2], "R5": [21]})
    st.apply(move(0, "R1", "B5"))
    assert owner(st, "B5") == "Red" and st.to_json()["join"] == {"path": ["R1", "B5"], "blitz": False}
    refused(st, move(1, "R1", "B5"), "must end in enemy territory")  # a move of its own: own territory
    st.apply(move(1, "R1", "B5", join=True))
    st.apply(move(21, "R5", "B1"))  # another move: nothing to join any more
    refused(st, move(2, "R1", "B5", join=True), "join only the move just made")
    assert st.to_json()["units"]["B5"] == [0, 1]
    legal = [a.to_dict() for a in st.legal_actions()]
    assert not any(a.get("join") for a in legal)


def test_a_unit_moves_once_a_turn() -> None:
    st = position({"R1": [0], "R5": [21]})
    st.apply(move(0, "R1", "B1"))
    refused(st, move(0, "B1", "B6"), "moved this turn already")
    st.apply(END)  # B1 is empty: no battle; unit 0 stays marked
    assert st.to_json()["phase"] == "noncombat" and st.to_json()["moved"] == [0]
    refused(st, move(0, "B1", "R1"), "moved this turn already")


def test_the_non_combat_move_stays_in_own_territory() -> None:
    st = position({"R3": [15], "R6": [23], "R2": [2], "B1": [28]}, phase="noncombat")
    refused(st, move(2, "R2", "R6", "R1"), "longer than the unit's move")  # infantry: 1 step
    st.apply(move(15, "R3", "R6", "R1"))  # a tank, 2 steps through own territory
    st.apply(move(23, "R6", "R1"))
    assert st.to_json()["units"]["R1"] == [15, 23] and st.to_json()["moved"] == [15, 23]


def test_non_combat_moves_refuse_enemy_territory() -> None:
    st = position({"R1": [0], "R3": [15]}, phase="noncombat")
    refused(st, move(0, "R1", "B1"), "may only enter own territory")
    st2 = position({"R6": [15]}, phase="noncombat", red=["R2", "R3", "R4", "R5", "R6", "R7"])
    refused(st2, move(15, "R6", "R1", "B1"), "crosses enemy")


def test_opponents_units_dead_units_and_unknown_territories() -> None:
    st = position({"R1": [0], "B1": [28]})
    refused(st, move(28, "B1", "R1"), "belongs to the opponent")
    refused(st, move(1, "R1", "B1"), "no such living unit")  # unit 1 is dead here
    refused(st, move(0, "R5", "B1"), "does not stand where the path starts")
    refused(st, move(0, "R1", "B3"), "must be neighbours")
    with pytest.raises(ValueError, match="unknown territory 'R8'"):
        st.game.action(move(0, "R1", "R8"))


# ---- battles -------------------------------------------------------------------------------

def test_mutual_wipe_out_leaves_the_territory_to_the_defender() -> None:
    st = position({"R1": [0], "B1": [28]})
    st.apply(move(0, "R1", "B1"))
    assert end_phase_with(st, [1, 1]) == 2  # both hit
    js = st.to_json()
    assert owner(st, "B1") == "Blue" and "B1" not in js["units"] and js["phase"] == "noncombat"


def test_casualty_order_support_and_dice_order() -> None:
    # Red attacks B1 with infantry 0, 1, 2, artillery 4 and tank 15 against infantry 28, 29,
    # artillery 32 and tank 43. Attacker order: unsupported infantry 2, 1 (the highest ids),
    # supported infantry 0, artillery 4, tank 15; defender: 29, 28, 32, 43.
    st = position({"R1": [0, 1, 2, 4, 15], "B1": [28, 29, 32, 43]})
    for u in (0, 1, 2, 4, 15):
        st.apply(move(u, "R1", "B1"))
    round1 = [2, 2, 2, 2, 3] + [6, 6, 6, 1]  # 0 (2 <= 2), 4 and 15 hit; the defenders' tank hits
    round2 = [1, 6, 6, 6] + [4]  # unit 1 (now the only unsupported infantry) hits on a 1
    assert end_phase_with(st, round1 + round2) == len(round1 + round2)
    js = st.to_json()
    assert owner(st, "B1") == "Red" and js["units"]["B1"] == [0, 1, 4, 15]  # unit 2 fell first


def test_battles_are_fought_in_canonical_order_each_to_its_end() -> None:
    st = position({"R1": [0, 1], "R5": [21], "B1": [28], "B5": [49]})
    st.apply(move(21, "R5", "B5"))
    st.apply(move(0, "R1", "B1"))
    st.apply(move(1, "R1", "B1"))
    # B1 first (canonical order R1..R7, B1..B7): 2 rounds, then B5.
    used = end_phase_with(st, [6, 6, 6] + [1, 6, 1] + [1, 6])
    assert used == 8
    assert owner(st, "B1") == "Red" and owner(st, "B5") == "Red"
    assert st.to_json()["units"]["B1"] == [0]


def test_a_recorded_dice_sequence_that_runs_out_is_an_error() -> None:
    st = position({"R1": [0], "B1": [28]})
    st.apply(move(0, "R1", "B1"))
    with pytest.raises(AssertionError, match="dice ran out"):
        end_phase_with(st, [6])


# ---- the end of the round ------------------------------------------------------------------

def _red_takes_blue_capital(blue_units: dict[str, list[int]]) -> State:
    st = position({"B6": [15], **blue_units}, red=[f"R{i}" for i in range(1, 8)] + ["B6"])
    st.apply(move(15, "B6", "B3"))  # empty: taken at once
    assert owner(st, "B3") == "Red"
    st.apply(END)
    st.apply(END)
    assert st.to_json()["result"] is None  # no victory before the end of the round
    return st


def test_holding_both_capitals_at_the_end_of_the_round_wins() -> None:
    st = _red_takes_blue_capital({"B1": [28]})
    st.apply(END)
    st.apply(END)
    js = st.to_json()
    assert js["result"] == {"winner": "Red", "by": "capital"} and js["phase"] == "over" and js["round"] == 1


def test_the_victim_retakes_its_capital_in_its_own_turn() -> None:
    st = _red_takes_blue_capital({"B4": [46]})
    st.apply(move(46, "B4", "B3"))
    assert end_phase_with(st, [1, 6]) == 2  # Blue's infantry hits, Red's tank misses
    st.apply(END)
    js = st.to_json()
    assert js["result"] is None and js["round"] == 2 and js["player"] == "Red" and owner(st, "B3") == "Blue"


def test_the_round_limit_is_a_draw_but_a_capital_in_the_last_round_wins() -> None:
    st = position({"R1": [0], "B1": [28]}, rounds=1)
    for _ in range(4):
        st.apply(END)
    assert st.to_json()["result"] == {"winner": None, "by": "round_limit"} and st.to_json()["round"] == 1
    st = _red_takes_blue_capital({"B1": [28]})
    js = st.to_json()
    js["rounds"] = 1
    st = st.game.state_from_json(js)
    st.apply(END)
    st.apply(END)
    assert st.to_json()["result"] == {"winner": "Red", "by": "capital"}


def test_annihilation_when_the_option_is_on() -> None:
    st = position({"R1": [0]}, victory="capital+annihilation")
    for _ in range(4):
        st.apply(END)
    assert st.to_json()["result"] == {"winner": "Red", "by": "annihilation"}
    st = position({}, victory="capital+annihilation")
    for _ in range(4):
        st.apply(END)
    assert st.to_json()["result"] == {"winner": None, "by": "annihilation"}
    st = position({"R1": [0]})  # the option off: a player without units plays on
    for _ in range(4):
        st.apply(END)
    assert st.to_json()["result"] is None and st.to_json()["round"] == 2


# ---- the dice battle's distribution --------------------------------------------------------

def _hits(values: tuple[int, ...]) -> list[float]:
    dist = [1.0]
    for v in values:
        p = min(v, 6) / 6
        nxt = [0.0] * (len(dist) + 1)
        for h, q in enumerate(dist):
            nxt[h] += q * (1 - p)
            nxt[h + 1] += q * p
        dist = nxt
    return dist


def _lose(force: tuple[int, int, int], n: int) -> tuple[int, int, int]:
    """Remove n units: infantry first, then artillery, then tanks (spec §5.1's order by type)."""
    left = list(force)
    for k in range(3):
        take = min(n, left[k])
        left[k] -= take
        n -= take
    return left[0], left[1], left[2]


@cache
def exact(att: tuple[int, int, int], dfn: tuple[int, int, int]) -> dict[tuple[str, int], float]:
    """Outcome probabilities of a battle (infantry, artillery, tanks on each side), as (winner,
    survivors), by the Markov chain over the forces written from the spec's table alone."""
    if sum(att) == 0:
        return {("defender" if sum(dfn) else "both", sum(dfn)): 1.0}
    if sum(dfn) == 0:
        return {("attacker", sum(att)): 1.0}
    i, a, k = att
    s = min(i, a)
    pa = _hits((1,) * (i - s) + (2,) * s + (2,) * a + (3,) * k)
    pd = _hits((2,) * dfn[0] + (2,) * dfn[1] + (3,) * dfn[2])
    stay = pa[0] * pd[0]
    out: defaultdict[tuple[str, int], float] = defaultdict(float)
    for ha, qa in enumerate(pa):
        for hd, qd in enumerate(pd):
            if ha == 0 and hd == 0:
                continue
            for key, q in exact(_lose(att, hd), _lose(dfn, ha)).items():
                out[key] += qa * qd * q / (1 - stay)
    return dict(out)


@pytest.mark.parametrize(("att", "dfn"), [((2, 1, 0), (2, 0, 0)), ((1, 0, 1), (1, 1, 0))])
def test_dice_battles_follow_the_exact_distribution(att: tuple[int, int, int],
                                                   dfn: tuple[int, int, int]) -> None:
    red = [0, 1][:att[0]] + [4][:att[1]] + [15][:att[2]]
    blue = [28, 29][:dfn[0]] + [32][:dfn[1]] + [43][:dfn[2]]
    start = position({"R1": red, "B1": blue})
    for u in red:
        start.apply(move(u, "R1", "B1"))
    counts: Counter[tuple[str, int]] = Counter()
    n = 3000
    for seed in range(n):
        st = start.clone()
        st.seed_rng(seed)
        st.apply(END)
        js = st.to_json()
        left = js["units"].get("B1", [])
        won = "B1" in js["owner"]["Red"]
        counts[("attacker" if won else "defender" if left else "both", len(left))] += 1
    probs = exact(att, dfn)
    keys = sorted(probs)
    assert set(counts) <= set(probs), f"outcomes the exact chain rules out: {set(counts) - set(probs)}"
    expected = [probs[k] * n for k in keys]
    assert chisquare([counts[k] for k in keys], expected).pvalue > 1e-3
