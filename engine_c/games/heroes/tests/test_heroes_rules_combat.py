"""Heroes combat rules (spec §10): damage, items, squares, crystals, chain lightning,
knockback and line of sight. Positions are on map a unless said otherwise:

      x=0 1 2 3 4 5 6 7 8
y=0     d . . . S . . . D        d/D deploy P1/P2, S defense, A assault, P power,
y=1     . . c . . . C . .        c/C crystals of P1/P2
y=2     . . P . . . P . .
y=3     . c . . . . . C .
y=4     d . . . A . . . D
"""

from __future__ import annotations

import pytest
from heroes_position import assert_illegal, at, attack, hp, legal, parse_unit, play, pos
from maag.engine import State


def p2_unit_hp(s: State) -> int:
    """HP of the only P2 non-crystal unit (wherever a knockback put it)."""
    units = [u for u in s.to_json()["board"] if u["owner"] == 2 and u["kind"] != "crystal"]
    assert len(units) == 1
    return int(units[0]["hp"])


# ---- damage: class power, multipliers, items, squares (§10.1-§10.3) ------------------------------

DAMAGE_CASES = [
    # attacker, defender, expected damage
    ("1 knight 3,3", "2 archer 4,3", 200),
    ("1 knight 3,3 runemetal", "2 archer 4,3", 300),                 # 200 + 200/2
    ("1 knight 3,3", "2 knight 4,3", 160),                           # knight 20 % physical
    ("1 knight 3,3", "2 knight 4,3 dragonscale", 120),               # + 20 % with dragonscale
    ("1 knight 3,3", "2 archer 4,3 helm", 200),                      # helm: magical only
    ("1 archer 3,3", "2 archer 4,3", 150),                           # archer melee x0.5
    ("1 archer 3,3", "2 archer 5,3", 300),                           # ranged x1
    ("1 archer 3,3", "2 archer 6,3", 300),                           # range 3
    ("1 archer 3,3", "2 knight 4,3", 120),                           # 300 * 0.5 * 0.8
    ("1 archer 3,3 runemetal", "2 archer 5,3", 450),                 # 300 + 150
    ("1 ninja 3,3", "2 archer 4,3", 400),                            # ninja melee x2
    ("1 ninja 3,3", "2 archer 5,3", 200),                            # ninja ranged x1
    ("1 wizard 3,3", "2 knight 4,3", 200),                           # magical: knight res 0
    ("1 wizard 3,3", "2 wizard 4,3", 180),                           # wizard 10 % magical
    ("1 wizard 3,3", "2 wizard 4,3 helm", 140),                      # 30 %
    ("1 wizard 3,3", "2 archer 4,3 dragonscale", 200),               # dragonscale: physical only
    ("1 cleric 3,3", "2 archer 5,3 helm", 160),
    ("1 knight 2,2", "2 archer 3,2", 300),                           # power square +100
    ("1 archer 2,2", "2 archer 4,2", 400),
    ("1 archer 2,2 runemetal", "2 knight 4,2", 440),                 # (300+150+100) * 0.8
    ("1 wizard 2,2 runemetal", "2 archer 3,2", 400),                 # 200 + 100 + 100
    ("1 knight 3,3 scroll", "2 knight 4,3", 480),                    # 600 * 0.8
    ("1 knight 2,2 runemetal scroll", "2 knight 3,2 hp=1000 dragonscale", 720),  # 1200 * 0.6
    ("1 archer 6,2 runemetal scroll", "2 crystal 7,3 hp=4500", 1650),  # the largest power
    ("1 archer 4,2", "2 knight 4,0", 180),                           # defense square: 300 * 0.6
    ("1 archer 4,2", "2 knight 4,0 dragonscale", 120),               # 60 % physical, the max
    ("1 wizard 4,2", "2 knight 4,0", 200),                           # defense square: no magical res
    ("1 ninja 4,1", "2 archer 4,0", 320),                            # 400 * 0.8 on defense
]


@pytest.mark.parametrize("attacker,defender,damage", DAMAGE_CASES)
def test_damage(attacker: str, defender: str, damage: int) -> None:
    s = pos(attacker, defender)
    a, d = parse_unit(attacker), parse_unit(defender)
    f, t = (a["x"], a["y"]), (d["x"], d["y"])
    before = hp(s, t)
    assert before is not None
    play(s, attack(f, t))
    if d["kind"] == "crystal":
        assert hp(s, t) == before - damage
    else:
        assert p2_unit_hp(s) == max(0, before - damage)


def test_damage_knocks_out_at_zero_and_unit_stays() -> None:
    s = pos("1 archer 3,3", "2 cleric 5,3 hp=300", "2 knight 7,0")
    play(s, attack((3, 3), (5, 3)))
    assert at(s, (5, 3)) == {"x": 5, "y": 3, "kind": "cleric", "owner": 2, "hp": 0, "max_hp": 800,
                             "items": []}
    # A KO'd unit cannot be attacked (only stomped).
    assert_illegal(s, attack((3, 3), (5, 3)))


def test_scroll_is_consumed_by_the_attack() -> None:
    s = pos("1 archer 3,3 scroll runemetal", "2 knight 5,3", "2 knight 3,1")
    play(s, attack((3, 3), (5, 3)))
    assert hp(s, (5, 3)) == 0  # (300 + 150) * 3 * 0.8 = 1080 > 1000
    assert at(s, (3, 3))["items"] == ["runemetal"]  # type: ignore[index]
    play(s, attack((3, 3), (3, 1)))
    assert hp(s, (3, 1)) == 1000 - 360  # 450 * 0.8, no scroll any more


def test_scroll_boosts_every_chain_jump_then_is_consumed() -> None:
    # §17.3 with a scroll: power (200 + 100) * 3 = 900 for the hit and both jumps.
    s = pos("1 wizard 2,2 scroll", "2 knight 4,2", "2 archer 5,2", "2 archer 4,1", "2 cleric 6,2",
            "2 cleric 5,3")
    play(s, attack((2, 2), (4, 2)))
    assert hp(s, (4, 2)) == 100
    assert hp(s, (5, 2)) == 800 - 675   # trunc(900 * 0.75)
    assert hp(s, (6, 2)) == 800 - 504   # trunc(900 * 0.56)
    assert hp(s, (4, 1)) == 800 and hp(s, (5, 3)) == 800
    assert at(s, (2, 2))["items"] == []  # type: ignore[index]


# ---- equipment on units (§9.2) -------------------------------------------------------------------

@pytest.mark.parametrize("unit,card,hp_after,max_after", [
    ("1 knight 3,3 hp=555", "dragonscale", 610, 1100),          # §17.8
    ("1 knight 3,3", "dragonscale", 1100, 1100),
    ("1 archer 3,3", "shining_helmet", 880, 880),
    ("1 archer 3,3 dragonscale", "shining_helmet", 960, 960),   # 880 + 88 capped at 960
    ("1 knight 3,3 hp=1 helm", "dragonscale", 1, 1200),          # 1 + 1/10
    ("1 wizard 3,3 hp=300", "runemetal", 300, 800),
    ("1 cleric 3,3 hp=300", "scroll", 300, 800),
])
def test_equip_hp_and_max_hp(unit: str, card: str, hp_after: int, max_after: int) -> None:
    s = pos(unit, hands={1: [card]})
    before = at(s, (3, 3))
    play(s, {"type": "equip", "card": card, "to": [3, 3]})
    u = at(s, (3, 3))
    assert u is not None and before is not None
    assert (u["hp"], u["max_hp"]) == (hp_after, max_after)
    assert u["items"] == sorted(before["items"] + [card])
    assert s.to_json()["hands"]["1"] == []


def test_equip_rules() -> None:
    s = pos("1 knight 3,3 scroll", "1 archer 3,1 hp=0", "2 knight 5,3",
            hands={1: ["scroll", "runemetal", "dragonscale"]})
    assert_illegal(s, {"type": "equip", "card": "scroll", "to": [3, 3]})      # already has one
    assert_illegal(s, {"type": "equip", "card": "runemetal", "to": [3, 1]})   # KO'd
    assert_illegal(s, {"type": "equip", "card": "runemetal", "to": [5, 3]})   # enemy
    assert_illegal(s, {"type": "equip", "card": "runemetal", "to": [2, 1]})   # own crystal
    assert_illegal(s, {"type": "equip", "card": "runemetal", "to": [4, 3]})   # empty square
    assert_illegal(s, {"type": "equip", "card": "shining_helmet", "to": [3, 3]})  # not in hand
    play(s, {"type": "equip", "card": "runemetal", "to": [3, 3]})


# ---- crystals and the assault square (§10.4, §10.5) ----------------------------------------------

def test_assault_bonus_applies_to_crystals_only() -> None:
    holder = "1 knight 4,4"
    s = pos(holder, "1 archer 5,3")
    play(s, attack((5, 3), (7, 3)))
    assert hp(s, (7, 3)) == 4500 - 600
    s = pos("1 archer 5,3")
    play(s, attack((5, 3), (7, 3)))
    assert hp(s, (7, 3)) == 4500 - 300
    s = pos(holder, "1 archer 5,3", "2 knight 7,2")
    play(s, attack((5, 3), (7, 2)))
    assert hp(s, (7, 2)) == 1000 - 240  # no bonus against units


def test_assault_bonus_needs_a_living_own_unit_on_the_square() -> None:
    s = pos("1 knight 4,4 hp=0", "1 archer 5,3")
    play(s, attack((5, 3), (7, 3)))
    assert hp(s, (7, 3)) == 4200
    s = pos("2 knight 4,4", "1 archer 5,3")
    play(s, attack((5, 3), (7, 3)))
    assert hp(s, (7, 3)) == 4200


def test_assault_bonus_on_a_chain_jump_to_a_crystal() -> None:
    s = pos("1 knight 4,4", "1 wizard 4,1", "2 archer 5,1")
    play(s, attack((4, 1), (5, 1)))
    assert hp(s, (5, 1)) == 600
    assert hp(s, (6, 1)) == 4500 - (150 + 300)


def test_destroyed_crystal_leaves_the_board() -> None:
    s = pos("1 archer 5,3", "2 crystal 7,3 hp=100")
    play(s, attack((5, 3), (7, 3)))
    assert at(s, (7, 3)) is None
    assert not s.is_terminal  # the other P2 crystal stands
    play(s, {"type": "move", "from": [5, 3], "to": [7, 3]})  # an ordinary empty square now


# ---- chain lightning (§10.9) ---------------------------------------------------------------------

def test_chain_lightning_same_direction_first_17_3() -> None:
    s = pos("1 wizard 2,2", "2 knight 4,2", "2 archer 5,2", "2 archer 4,1", "2 cleric 6,2", "2 cleric 5,3")
    ap = s.to_json()["ap"]
    play(s, attack((2, 2), (4, 2)))
    assert [hp(s, q) for q in [(4, 2), (5, 2), (6, 2), (4, 1), (5, 3)]] == [700, 575, 632, 800, 800]
    assert s.to_json()["ap"] == ap - 1


def test_chain_lightning_diagonal_and_west_over_south_17_4() -> None:
    s = pos("1 wizard 3,1", "2 knight 4,2", "2 archer 3,2", "2 archer 4,3")
    play(s, attack((3, 1), (4, 2)))
    assert [hp(s, q) for q in [(4, 2), (3, 2), (4, 3)]] == [800, 650, 688]


def test_chain_prefers_north_over_south() -> None:
    s = pos("1 wizard 2,2", "2 knight 4,2", "2 archer 4,1", "2 archer 4,3")
    play(s, attack((2, 2), (4, 2)))
    assert [hp(s, q) for q in [(4, 2), (4, 1), (4, 3)]] == [700, 575, 800]


def test_chain_skips_own_and_knocked_out_units() -> None:
    s = pos("1 wizard 2,3", "2 knight 3,3", "1 archer 4,3", "2 archer 4,2 hp=0", "2 cleric 3,4")
    play(s, attack((2, 3), (3, 3)))
    assert [hp(s, q) for q in [(3, 3), (4, 3), (4, 2), (3, 4)]] == [800, 800, 0, 650]


def test_chain_continues_after_the_primary_target_is_knocked_out() -> None:
    s = pos("1 wizard 2,2", "2 knight 4,2 hp=10", "2 archer 5,2")
    play(s, attack((2, 2), (4, 2)))
    assert (hp(s, (4, 2)), hp(s, (5, 2))) == (0, 575)


def test_chain_continues_from_a_destroyed_crystal() -> None:
    s = pos("1 wizard 4,1", "2 crystal 6,1 hp=100", "2 archer 7,1", "2 knight 6,2")
    play(s, attack((4, 1), (6, 1)))
    assert at(s, (6, 1)) is None and not s.is_terminal
    # From (6,1), direction E: (7,1) (same direction, 10) beats (6,2) (S, 5); jump 2 goes
    # from (7,1) to (6,2) (SW, the only candidate).
    assert (hp(s, (7, 1)), hp(s, (6, 2))) == (800 - 150, 1000 - 112)


def test_chain_destroying_the_last_crystal_ends_the_game_and_still_jumps() -> None:
    s = pos("1 wizard 4,2", "2 archer 5,2", "2 crystal 6,2 hp=150", "2 knight 7,2", without=((6, 1), (7, 3)))
    play(s, attack((4, 2), (5, 2)))
    assert s.is_terminal and s.winner == 0 and at(s, (6, 2)) is None
    assert hp(s, (7, 2)) == 1000 - 112  # jump 2 still happens: trunc(200 * 0.56)


# ---- knockback (§10.8) ---------------------------------------------------------------------------

def test_knockback_onto_a_knocked_out_unit_17_5() -> None:
    s = pos("1 knight 3,3", "2 archer 4,3 hp=100", "2 cleric 5,3 hp=0")
    play(s, attack((3, 3), (4, 3)))
    assert at(s, (4, 3)) is None
    assert at(s, (5, 3)) == {"x": 5, "y": 3, "kind": "archer", "owner": 2, "hp": 0, "max_hp": 800,
                             "items": []}


def test_knockback_pushes_one_square_away() -> None:
    s = pos("1 knight 3,3", "2 archer 4,3 runemetal")
    play(s, attack((3, 3), (4, 3)))
    assert at(s, (4, 3)) is None
    assert at(s, (5, 3)) == {"x": 5, "y": 3, "kind": "archer", "owner": 2, "hp": 600, "max_hp": 800,
                             "items": ["runemetal"]}


@pytest.mark.parametrize("blocker", ["2 cleric 5,3", "1 cleric 5,3"])
def test_knockback_blocked_by_a_living_unit(blocker: str) -> None:
    s = pos("1 knight 3,3", "2 archer 4,3", blocker)
    play(s, attack((3, 3), (4, 3)))
    assert (hp(s, (4, 3)), hp(s, (5, 3))) == (600, 800)


def test_knockback_blocked_by_a_crystal_and_crystals_are_never_pushed() -> None:
    s = pos("1 knight 4,1", "2 archer 5,1")
    play(s, attack((4, 1), (5, 1)))
    assert (hp(s, (5, 1)), hp(s, (6, 1))) == (600, 4500)
    s = pos("1 knight 5,1")
    play(s, attack((5, 1), (6, 1)))
    assert at(s, (6, 1)) == {"x": 6, "y": 1, "kind": "crystal", "owner": 2, "hp": 4300, "max_hp": 4500,
                             "items": []}
    assert at(s, (7, 1)) is None


def test_knockback_not_off_the_board() -> None:
    s = pos("1 knight 4,3", "2 archer 4,4")
    play(s, attack((4, 3), (4, 4)))
    assert hp(s, (4, 4)) == 600


def test_knockback_not_onto_the_opponents_deploy_square() -> None:
    s = pos("1 knight 2,0", "2 archer 1,0")
    play(s, attack((2, 0), (1, 0)))
    assert (hp(s, (1, 0)), at(s, (0, 0))) == (600, None)


def test_knockback_onto_the_pushed_units_own_deploy_square() -> None:
    s = pos("1 knight 6,0", "2 archer 7,0")
    play(s, attack((6, 0), (7, 0)))
    assert (at(s, (7, 0)), hp(s, (8, 0))) == (None, 600)


def test_knight_reaches_only_adjacent_squares() -> None:
    s = pos("1 knight 3,3", "2 archer 5,3", "2 archer 4,2")
    assert_illegal(s, attack((3, 3), (5, 3)))
    assert_illegal(s, attack((3, 3), (4, 2)))  # diagonal = distance 2


# ---- line of sight (§10.7) -----------------------------------------------------------------------

def test_line_of_sight_17_7() -> None:
    s = pos("1 archer 4,1", "2 knight 7,1")
    expected = [{"type": "move", "from": [4, 1], "to": list(t)} for t in
                [(3, 0), (3, 1), (3, 2), (4, 0), (4, 2), (4, 3), (5, 0), (5, 1), (5, 2)]]
    expected += [{"type": "attack", "from": [4, 1], "to": [6, 1]}, {"type": "end_turn"}]
    assert legal(s) == expected
    assert_illegal(s, attack((4, 1), (7, 1)))


# Spec §10.7's table for the positive quadrant; other signs mirror it.
LOS_CELLS = {(2, 0): {(1, 0)}, (3, 0): {(1, 0), (2, 0)}, (2, 1): {(1, 0), (1, 1)}, (1, 2): {(0, 1), (1, 1)},
             (0, 2): {(0, 1)}, (0, 3): {(0, 1), (0, 2)}, (1, 1): set()}


def _los_cases() -> list[tuple[tuple[int, int], tuple[int, int], bool]]:
    cases = []
    for (ax, ay), cells in LOS_CELLS.items():
        for sx in (1, -1) if ax else (1,):
            for sy in (1, -1) if ay else (1,):
                off = (sx * ax, sy * ay)
                listed = {(sx * cx, sy * cy) for cx, cy in cells}
                box = [(x, y) for x in range(min(0, off[0]), max(0, off[0]) + 1)
                       for y in range(min(0, off[1]), max(0, off[1]) + 1) if (x, y) not in ((0, 0), off)]
                cases += [(off, c, c in listed) for c in box]
    return cases


@pytest.mark.parametrize("offset,cell,blocks", _los_cases())
def test_line_of_sight_table(offset: tuple[int, int], cell: tuple[int, int], blocks: bool) -> None:
    a = (4, 1) if offset[1] >= 0 else (4, 3)
    a = (a[0] - 1 if offset[0] > 0 else a[0] + 1 if offset[0] < 0 else a[0], a[1])
    t = (a[0] + offset[0], a[1] + offset[1])
    c = (a[0] + cell[0], a[1] + cell[1])
    crystals = ((2, 1), (1, 3), (6, 1), (7, 3))
    s = pos(f"1 archer {a[0]},{a[1]}", f"2 knight {t[0]},{t[1]}", f"2 cleric {c[0]},{c[1]}", without=crystals)
    if blocks:
        assert_illegal(s, attack(a, t))
    else:
        play(s, attack(a, t))
    # Own units and knocked-out enemies never block.
    for blocker in (f"1 cleric {c[0]},{c[1]}", f"2 cleric {c[0]},{c[1]} hp=0"):
        s = pos(f"1 archer {a[0]},{a[1]}", f"2 knight {t[0]},{t[1]}", blocker, without=crystals)
        play(s, attack(a, t))
