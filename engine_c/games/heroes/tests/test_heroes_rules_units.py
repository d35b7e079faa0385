"""Heroes unit and card rules: movement and stomping (§9.5, §11), heal and revive (§10.6),
ninja teleport, knock-out removal (§6.1), deploy (§9.1), potion and equip (§9.2), inferno
(§9.3) and swap card (§9.4). Map a unless said otherwise (see test_heroes_rules_combat.py)."""

from __future__ import annotations

import pytest
from heroes_position import (
    END,
    assert_illegal,
    at,
    attack,
    deck,
    deploy,
    equip,
    hand,
    heal,
    hp,
    legal,
    move,
    play,
    pos,
    spell,
    swap,
    teleport,
)

# ---- movement ------------------------------------------------------------------------------------


def test_move_is_a_jump_within_speed() -> None:
    s = pos("1 knight 3,3", "2 knight 4,3", "1 archer 3,2")
    play(s, move((3, 3), (5, 3)))                 # over an enemy: no path needed
    assert at(s, (3, 3)) is None and at(s, (5, 3))["kind"] == "knight"  # type: ignore[index]
    s = pos("1 knight 3,3")
    play(s, move((3, 3), (4, 2)))                 # diagonal counts 2
    assert_illegal(s, move((4, 2), (6, 1)))       # onto a crystal
    assert_illegal(s, move((4, 2), (5, 0)))       # distance 3 > speed 2
    assert_illegal(s, move((4, 2), (4, 2)))       # same square


def test_ninja_speed_is_three() -> None:
    s = pos("1 ninja 3,3")
    assert_illegal(s, move((3, 3), (7, 3)))       # distance 4
    assert_illegal(s, move((3, 3), (5, 1)))
    play(s, move((3, 3), (5, 2)))                 # distance 3
    play(s, move((5, 2), (8, 2)))


def test_no_move_onto_the_opponents_deploy_square() -> None:
    s = pos("1 knight 7,1", "2 knight 7,3 hp=0", "1 knight 1,0")
    assert_illegal(s, move((7, 1), (8, 0)))
    play(s, move((1, 0), (0, 0)))                 # own deploy square: fine
    s = pos("2 archer 1,1", current=2)
    assert_illegal(s, move((1, 1), (0, 0)))


def test_only_own_living_units_act() -> None:
    s = pos("1 knight 3,3 hp=0", "2 knight 5,3")
    assert_illegal(s, move((3, 3), (4, 3)))       # KO'd
    assert_illegal(s, move((5, 3), (6, 3)))       # the opponent's
    assert_illegal(s, move((2, 1), (3, 1)))       # crystal
    assert_illegal(s, move((4, 4), (4, 3)))       # nothing there


# ---- stomping (§9.5, §11) ------------------------------------------------------------------------

def test_stomp_an_enemy_knocked_out_unit() -> None:
    s = pos("1 knight 3,3", "2 archer 4,3 hp=0")
    assert move((3, 3), (4, 3)) in legal(s)
    play(s, move((3, 3), (4, 3)))
    assert at(s, (4, 3))["owner"] == 1  # type: ignore[index]
    assert len([u for u in s.to_json()["board"] if u["owner"] == 2]) == 2  # only the crystals


def test_stomp_an_own_knocked_out_unit() -> None:
    s = pos("1 archer 3,3", "1 wizard 5,3 hp=0 runemetal")
    play(s, move((3, 3), (5, 3)))
    assert at(s, (5, 3)) == {"x": 5, "y": 3, "kind": "archer", "owner": 1, "hp": 800, "max_hp": 800,
                             "items": []}


def test_no_stomp_on_the_opponents_deploy_square() -> None:
    s = pos("1 knight 7,0", "2 archer 8,0 hp=0", "1 cleric 8,2")
    assert_illegal(s, move((7, 0), (8, 0)))
    assert_illegal(s, move((8, 2), (8, 0)))
    assert_illegal(s, heal((8, 2), (8, 0)))


def test_cleric_onto_an_enemy_knocked_out_unit_is_a_move() -> None:
    s = pos("1 cleric 3,3", "2 archer 5,3 hp=0")
    assert move((3, 3), (5, 3)) in legal(s)
    assert_illegal(s, heal((3, 3), (5, 3)))
    assert s.rate(s.game.action(move((3, 3), (5, 3)))) == 1400  # rated as the reference's "HEAL"
    play(s, move((3, 3), (5, 3)))
    assert at(s, (5, 3))["kind"] == "cleric" and at(s, (3, 3)) is None  # type: ignore[index]


def test_cleric_onto_an_own_knocked_out_unit_is_a_revive() -> None:
    s = pos("1 cleric 3,3", "1 archer 5,3 hp=0")
    assert_illegal(s, move((3, 3), (5, 3)))
    play(s, heal((3, 3), (5, 3)))
    assert hp(s, (5, 3)) == 400 and at(s, (3, 3))["kind"] == "cleric"  # type: ignore[index]


def test_no_move_onto_a_living_unit() -> None:
    s = pos("1 knight 3,3", "2 archer 4,3", "1 archer 3,4")
    assert_illegal(s, move((3, 3), (4, 3)))
    assert_illegal(s, move((3, 3), (3, 4)))


# ---- heal and revive (§10.6) ---------------------------------------------------------------------

@pytest.mark.parametrize("cleric,target,hp_after", [
    ("1 cleric 3,3", "1 knight 4,3 hp=100", 700),              # 3 x 200
    ("1 cleric 3,3", "1 knight 5,3 hp=100", 700),              # distance 2
    ("1 cleric 3,3", "1 knight 4,2 hp=900", 1000),             # capped at max hp
    ("1 cleric 3,3", "1 knight 4,2 hp=900 dragonscale", 1100),
    ("1 cleric 3,3", "1 knight 4,3 hp=0", 400),                # revive 2 x 200
    ("1 cleric 2,2", "1 knight 3,2 hp=100", 1000),             # power square: 3 x 300
    ("1 cleric 2,2", "1 archer 3,2 hp=0", 600),
    ("1 cleric 3,3 runemetal", "1 archer 4,3 hp=0", 600),      # 2 x 300
    ("1 cleric 3,3 runemetal", "1 knight 4,3 hp=50", 950),
    ("1 cleric 2,2 runemetal scroll", "1 knight 3,2 hp=0", 1000),  # min(2400, max), §19 Q11
    ("1 cleric 3,3 scroll", "1 archer 4,3 hp=0", 800),           # 1200 capped
])
def test_heal_amounts(cleric: str, target: str, hp_after: int) -> None:
    s = pos(cleric, target)
    f = tuple(int(v) for v in cleric.split()[2].split(","))
    t = tuple(int(v) for v in target.split()[2].split(","))
    play(s, heal(f, t))  # type: ignore[arg-type]
    assert hp(s, t) == hp_after  # type: ignore[arg-type]
    assert "scroll" not in at(s, f)["items"]  # type: ignore[arg-type,index]


def test_heal_needs_no_line_of_sight() -> None:
    s = pos("1 cleric 3,3", "2 knight 4,3", "1 archer 5,3 hp=100")
    play(s, heal((3, 3), (5, 3)))
    assert hp(s, (5, 3)) == 700


def test_heal_rules() -> None:
    s = pos("1 cleric 3,3", "1 knight 4,3", "1 archer 6,3 hp=100", "2 archer 3,4 hp=100",
            "1 crystal 1,3 hp=100")
    assert_illegal(s, heal((3, 3), (4, 3)))   # full health
    assert_illegal(s, heal((3, 3), (6, 3)))   # distance 3
    assert_illegal(s, heal((3, 3), (3, 4)))   # an enemy (that is an attack)
    assert_illegal(s, heal((3, 3), (3, 1)))   # empty square
    s = pos("1 cleric 2,3", "1 crystal 1,3 hp=100")
    assert_illegal(s, heal((2, 3), (1, 3)))   # own crystals are never healed


def test_heal_consumes_the_scroll() -> None:
    s = pos("1 cleric 3,3 scroll", "1 knight 4,3 hp=100", "2 archer 3,1")
    play(s, heal((3, 3), (4, 3)))
    assert hp(s, (4, 3)) == 1000
    assert at(s, (3, 3))["items"] == []  # type: ignore[index]
    play(s, attack((3, 3), (3, 1)))
    assert hp(s, (3, 1)) == 600


# ---- ninja teleport ------------------------------------------------------------------------------

def test_ninja_swaps_with_an_own_unit_anywhere() -> None:
    s = pos("1 ninja 0,2 scroll", "1 knight 8,2 hp=300 dragonscale")
    play(s, teleport((0, 2), (8, 2)))
    assert at(s, (0, 2)) == {"x": 0, "y": 2, "kind": "knight", "owner": 1, "hp": 300, "max_hp": 1100,
                             "items": ["dragonscale"]}
    assert at(s, (8, 2)) == {"x": 8, "y": 2, "kind": "ninja", "owner": 1, "hp": 800, "max_hp": 800,
                             "items": ["scroll"]}


def test_ninja_teleport_rules() -> None:
    s = pos("1 ninja 3,3", "1 archer 3,1 hp=0", "1 archer 8,3 hp=0", "2 knight 6,3", "1 knight 4,3")
    assert_illegal(s, teleport((3, 3), (2, 1)))   # own crystal
    assert_illegal(s, teleport((3, 3), (8, 3)))   # KO'd own unit (too far to stomp)
    assert_illegal(s, teleport((3, 3), (3, 1)))   # KO'd own unit within reach: that is a stomp
    assert move((3, 3), (3, 1)) in legal(s)
    assert_illegal(s, teleport((3, 3), (6, 3)))   # enemy
    assert_illegal(s, move((3, 3), (4, 3)))       # a teleport is not a move
    s = pos("1 knight 3,3", "1 archer 8,3")
    assert_illegal(s, teleport((3, 3), (8, 3)))   # only ninjas teleport


# ---- knock-out removal at the owner's end of turn (§6.1) -----------------------------------------

def test_knocked_out_unit_is_removed_at_its_owners_end_of_turn() -> None:
    s = pos("1 archer 3,3", "2 cleric 5,3 hp=300", "2 knight 8,2")
    play(s, attack((3, 3), (5, 3)))
    assert hp(s, (5, 3)) == 0
    play(s, END)
    assert hp(s, (5, 3)) == 0                     # survives P1's end of turn and P2's whole turn
    play(s, move((8, 2), (7, 2)))
    play(s, END)
    assert at(s, (5, 3)) is None


def test_own_knocked_out_units_go_at_own_end_of_turn() -> None:
    s = pos("1 archer 3,3 hp=0", "1 knight 4,4", "2 knight 5,3 hp=0")
    play(s, END)
    assert at(s, (3, 3)) is None and hp(s, (5, 3)) == 0


def test_revived_unit_stays() -> None:
    s = pos("1 cleric 3,3", "1 archer 4,3 hp=0")
    play(s, heal((3, 3), (4, 3)))
    play(s, END)
    assert hp(s, (4, 3)) == 400


# ---- deploy (§9.1) -------------------------------------------------------------------------------

def test_deploy() -> None:
    s = pos(hands={1: ["wizard", "knight"]})
    play(s, deploy("wizard", (0, 4)))
    assert at(s, (0, 4)) == {"x": 0, "y": 4, "kind": "wizard", "owner": 1, "hp": 800, "max_hp": 800,
                             "items": []}
    assert hand(s, 1) == {"knight": 1}
    assert_illegal(s, deploy("knight", (0, 4)))   # occupied by a living unit
    assert_illegal(s, deploy("knight", (8, 0)))   # the opponent's deploy square
    assert_illegal(s, deploy("knight", (1, 0)))   # not a deploy square
    assert_illegal(s, deploy("wizard", (0, 0)))   # no wizard left in hand
    assert_illegal(s, {"type": "deploy", "card": "inferno", "to": [0, 0]})
    play(s, deploy("knight", (0, 0)))


def test_deploy_onto_an_own_knocked_out_unit_replaces_it() -> None:
    s = pos("1 knight 0,0 hp=0 dragonscale", hands={1: ["archer"]})
    assert deploy("archer", (0, 0)) in legal(s)
    play(s, deploy("archer", (0, 0)))
    assert at(s, (0, 0)) == {"x": 0, "y": 0, "kind": "archer", "owner": 1, "hp": 800, "max_hp": 800,
                             "items": []}


def test_p2_deploys_on_its_own_squares() -> None:
    s = pos(hands={2: ["ninja"]}, current=2)
    deploys = [a for a in legal(s) if a["type"] == "deploy"]
    assert deploys == [deploy("ninja", (8, 0)), deploy("ninja", (8, 4))]
    assert_illegal(s, deploy("ninja", (0, 0)))


# ---- potion and items (§9.2) ---------------------------------------------------------------------

def test_potion_heals_1000_capped_and_is_not_kept() -> None:
    s = pos("1 knight 3,3 hp=50 dragonscale", "1 archer 4,4 hp=700", hands={1: ["potion", "potion"]})
    play(s, equip("potion", (3, 3)))
    assert at(s, (3, 3)) == {"x": 3, "y": 3, "kind": "knight", "owner": 1, "hp": 1050, "max_hp": 1100,
                             "items": ["dragonscale"]}
    play(s, equip("potion", (3, 3)))              # not kept as an item: usable again
    assert hp(s, (3, 3)) == 1100
    assert hand(s, 1) == {}


def test_potion_revives_to_100() -> None:
    s = pos("1 wizard 3,3 hp=0 runemetal", hands={1: ["potion"]})
    assert equip("potion", (3, 3)) in legal(s)
    play(s, equip("potion", (3, 3)))
    assert at(s, (3, 3)) == {"x": 3, "y": 3, "kind": "wizard", "owner": 1, "hp": 100, "max_hp": 800,
                             "items": ["runemetal"]}


def test_potion_rules() -> None:
    s = pos("1 knight 3,3", "2 archer 5,3 hp=10", "1 crystal 2,1 hp=10", hands={1: ["potion"]})
    assert_illegal(s, equip("potion", (3, 3)))    # full health
    assert_illegal(s, equip("potion", (5, 3)))    # enemy
    assert_illegal(s, equip("potion", (2, 1)))    # crystal
    assert_illegal(s, {"type": "deploy", "card": "potion", "to": [0, 0]})


# ---- inferno (§9.3) ------------------------------------------------------------------------------

def test_inferno_damage_by_resistance() -> None:
    s = pos("1 knight 5,2",                           # own: untouched
            "2 archer 4,1",                           # 350
            "2 wizard 4,2",                           # 315
            "2 archer 4,3 helm",                      # 280
            "2 wizard 5,1 hp=880 helm",               # 245 (§17.8)
            "2 knight 5,3 dragonscale",               # physical items do not help: 350
            "2 cleric 6,2 hp=0",                      # KO'd enemy: removed
            "2 knight 6,3 hp=200",                    # KO'd by it
            hands={1: ["inferno"]})
    play(s, spell((5, 2)))
    assert [hp(s, q) for q in [(5, 2), (4, 1), (4, 2), (4, 3), (5, 1), (5, 3), (6, 3), (6, 1)]] == \
        [1000, 450, 485, 600, 635, 750, 0, 4150]
    assert at(s, (6, 2)) is None
    assert hand(s, 1) == {}


def test_inferno_ignores_the_defense_square() -> None:
    s = pos("2 knight 4,0", hands={1: ["inferno"]})
    play(s, spell((4, 0)))
    assert hp(s, (4, 0)) == 650


def test_inferno_crystal_bonus_and_own_units_untouched() -> None:
    s = pos("1 archer 4,4", "1 knight 6,0 hp=10", hands={1: ["inferno"]})
    play(s, spell((6, 0)))
    assert (hp(s, (6, 1)), hp(s, (6, 0))) == (4500 - 650, 10)


def test_inferno_on_empty_squares_spends_the_card() -> None:
    s = pos(hands={1: ["inferno", "knight"]}, ap=5)
    board = s.to_json()["board"]
    play(s, spell((0, 2)))                            # only an own crystal nearby
    j = s.to_json()
    assert j["board"] == board and j["ap"] == 4 and hand(s, 1) == {"knight": 1}


def test_inferno_is_offered_on_every_square() -> None:
    s = pos(hands={1: ["inferno"]})
    assert [a["to"] for a in legal(s) if a["type"] == "spell"] == [[x, y] for x in range(9) for y in range(5)]


def test_inferno_destroying_the_last_crystals_wins() -> None:
    s = pos("2 crystal 6,1 hp=300", "2 crystal 7,3 hp=350", "2 knight 8,2", hands={1: ["inferno"]})
    play(s, spell((7, 2)))
    assert s.is_terminal and s.winner == 0
    assert at(s, (6, 1)) is None and at(s, (7, 3)) is None and hp(s, (8, 2)) == 650


# ---- swap card (§9.4) ----------------------------------------------------------------------------

def test_swap_card_returns_the_card_to_the_deck() -> None:
    s = pos(hands={1: ["scroll", "scroll", "knight"]}, seeds=(123, 456))
    d = deck(s, 1)
    play(s, swap("scroll"))
    assert hand(s, 1) == {"scroll": 1, "knight": 1}
    assert deck(s, 1) - d == {"scroll": 1} and not d - deck(s, 1)
    assert s.to_json()["deck_seed"] == {"1": 123, "2": 456}
    assert_illegal(s, swap("potion"))


def test_swap_card_needs_a_non_empty_deck() -> None:
    s = pos(hands={1: ["scroll", "knight"]}, decks={1: {}})
    assert [a for a in legal(s) if a["type"] == "swap_card"] == []
    assert_illegal(s, swap("scroll"), match="deck")
