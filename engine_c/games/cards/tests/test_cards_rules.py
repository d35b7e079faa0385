"""The card game's rules (spec/cards.md), one hand-built position per rule, above all what
the reference traces never show (cards-README.md "Not covered"): Mirror Image, Stranglethorn
Tiger, Light's Justice, a tie when both heroes die in one death phase, The Coin at 10 mana,
a burned card, fatigue, secrets on the opponent's turn, auras after a silence, deathrattle
summons in their source's slot. The invariants every game shares are in
tests/engine/test_every_game.py; the traces are replayed in test_cards_conformance.py."""

from __future__ import annotations

import pytest
from cards_position import END, attack, me, minion, play, player, position, ref
from maag.engine import Game, IllegalActionError, State

# ---- summons and the board ------------------------------------------------------------------


def test_mirror_image_summons_two_taunt_images_at_the_right_end() -> None:
    st = position(player(hand=["M02"], board=[minion("N09")]))
    st.apply(play(0, "M02"))
    board = me(st)["board"]
    assert [m["card"] for m in board] == ["N09", "T_IMAGE", "T_IMAGE"]
    assert all(m["taunt"] and m["atk"] == 0 and m["hp"] == 2 for m in board[1:])
    assert me(st)["mana"] == 9


def test_a_summoning_spell_is_unplayable_on_a_full_board_and_a_seventh_slot_takes_one_copy() -> None:
    full = position(player(hand=["M02"], board=[minion("N09")] * 7))
    assert all(a.to_dict()["type"] != "play" for a in full.legal_actions())
    with pytest.raises(IllegalActionError, match="board is full"):
        full.apply(play(0, "M02"))
    six = position(player(hand=["M02"], board=[minion("N09")] * 6))
    six.apply(play(0, "M02"))
    assert [m["card"] for m in me(six)["board"]][-1] == "T_IMAGE" and len(me(six)["board"]) == 7


def test_a_deathrattle_summon_takes_the_dead_minions_slot() -> None:
    st = position(player(hand=["M08"], board=[minion("N09"), minion("N17"), minion("N24")]))
    st.apply(play(0, "M08", ref(1, 1)))  # Fireball the Harvest Golem
    assert [m["card"] for m in me(st)["board"]] == ["N09", "T_GOLEM", "N24"]


def test_cairne_leaves_baine_in_his_place() -> None:
    st = position(player(hand=["M08"]), p2=player("paladin", board=[minion("N09"), minion("N31", hp=5),
                                                                      minion("N09")]))
    st.apply(play(0, "M08", ref(2, 1)))
    assert [m["card"] for m in me(st, 2)["board"]] == ["N09", "T_BAINE", "N09"]


# ---- simultaneous deaths (spec v1.3 §3.1 "Summon placement", §5.7) ------------------------------


def cards(st: State, seat: int) -> list[str]:
    return [m["card"] for m in me(st, seat)["board"]]


@pytest.mark.parametrize("left_eid, right_eid", [(20, 5), (5, 20)])
def test_golems_dying_either_side_of_a_survivor_return_to_their_sides(left_eid: int, right_eid: int) -> None:
    # Flamestrike (4 to each enemy minion): a Raptor and two Harvest Golems die, the Yeti and
    # the Ogre survive. Each Damaged Golem takes its source's slot among the survivors, in
    # either eid order (the slot is not counted at each removal).
    board = [minion("N09", eid=10), minion("N17", eid=left_eid), minion("N24", eid=11),
             minion("N17", eid=right_eid), minion("N30", eid=12)]
    st = position(player(hand=["M12"]), p2=player("paladin", board=board))
    st.apply(play(0, "M12"))
    assert cards(st, 2) == ["T_GOLEM", "N24", "T_GOLEM", "N30"]
    assert [m["hp"] for m in me(st, 2)["board"]] == [1, 1, 1, 3]


def test_neighbouring_golems_dying_together_keep_their_order() -> None:
    board = [minion("N24", eid=10), minion("N17", eid=20, hp=1), minion("N31", eid=5, hp=1),
             minion("N24", eid=11)]
    st = position(player(hand=["M03"]), p2=player("paladin", board=board))
    st.apply(play(0, "M03"))  # Arcane Explosion: Cairne's deathrattle resolves first (eid 5)
    assert cards(st, 2) == ["N24", "T_GOLEM", "T_BAINE", "N24"]


def test_a_deathrattle_summon_is_hit_by_a_later_deathrattle_of_the_same_death_phase() -> None:
    # Arcane Explosion kills a Harvest Golem (eid 5) and an Abomination (eid 6): the golem's
    # deathrattle resolves first, so its Damaged Golem is on the board when the Abomination
    # deals 2 to every character, and dies of it.
    board = [minion("N17", eid=5, hp=1), minion("N27", eid=6, hp=1)]
    st = position(player(hand=["M03"]), p2=player("paladin", board=board))
    st.apply(play(0, "M03"))
    assert cards(st, 2) == []
    assert me(st, 1)["hero"]["hp"] == 28 and me(st, 2)["hero"]["hp"] == 28


def test_an_earlier_deathrattle_does_not_see_a_later_summon() -> None:
    # The same deaths in the other eid order: the Abomination's damage comes first, the
    # Damaged Golem arrives after it and lives.
    board = [minion("N17", eid=6, hp=1), minion("N27", eid=5, hp=1)]
    st = position(player(hand=["M03"]), p2=player("paladin", board=board))
    st.apply(play(0, "M03"))
    assert cards(st, 2) == ["T_GOLEM"] and me(st, 2)["board"][0]["hp"] == 1
    assert me(st, 1)["hero"]["hp"] == 28 and me(st, 2)["hero"]["hp"] == 28


@pytest.mark.parametrize("seed", range(8))
def test_knife_juggler_throws_for_each_deathrattle_summon_after_every_deathrattle(seed: int) -> None:
    # Arcane Explosion kills two Harvest Golems and an Abomination beside a Knife Juggler
    # (buffed to survive). The deathrattles resolve first, in eid order: two Damaged Golems,
    # then 2 damage to everything (the golems and the enemy Raptor die); then the juggler's
    # two knives, one per summon, can only find the enemy hero.
    kj = minion("N11", eid=5, hp=5, ench=[{"src": "P09", "kind": "buff", "atk": 0, "hp": 4}])
    board = [kj, minion("N17", eid=6, hp=1), minion("N17", eid=7, hp=1), minion("N27", eid=8, hp=1)]
    st = position(player(hand=["M03"], board=[minion("N09", eid=9)]), p2=player("paladin", board=board),
                  seed=seed)
    st.apply(play(0, "M03"))
    assert cards(st, 1) == [] and cards(st, 2) == ["N11"]
    assert me(st, 2)["board"][0]["hp"] == 2  # 1 from the explosion, 2 from the Abomination
    assert me(st, 1)["hero"]["hp"] == 30 - 2 - 2 and me(st, 2)["hero"]["hp"] == 28


def test_the_defias_bandit_enters_right_of_its_ringleader_only_with_combo() -> None:
    st = position(player(hand=["R01", "T_COIN", "R01"], board=[minion("N09")]))
    st.apply(play(0, "R01"))  # no card before it: no combo
    assert [m["card"] for m in me(st)["board"]] == ["N09", "R01"]
    st.apply(play(0, "T_COIN"))
    st.apply(play(0, "R01"))
    assert [m["card"] for m in me(st)["board"]] == ["N09", "R01", "R01", "T_BANDIT"]


def test_polymorph_keeps_the_slot_and_makes_a_new_sick_minion_without_its_deathrattle() -> None:
    board = [minion("N09"), minion("N03"), minion("N09")]
    st = position(player(hand=["M09"]), p2=player("paladin", board=board))
    before = me(st, 2)["board"][1]["eid"]
    st.apply(play(0, "M09", ref(2, 1)))
    sheep = me(st, 2)["board"][1]
    assert sheep["card"] == "T_SHEEP" and sheep["eid"] != before and sheep["hp"] == 1
    assert me(st, 1)["hero"]["hp"] == 30  # Leper Gnome's deathrattle did not fire


# ---- stealth, weapons, combat ---------------------------------------------------------------


def test_stranglethorn_tiger_cannot_be_chosen_by_enemies_until_it_attacks() -> None:
    st = position(player(hand=["M08"], board=[minion("N09")]),
                  p2=player("paladin", board=[minion("N28")]))
    targets = [a.to_dict()["target"] for a in st.legal_actions() if a.to_dict()["type"] in ("play", "attack")]
    assert ref(2, 0) not in targets and ref(2) in targets
    with pytest.raises(IllegalActionError, match="not a legal target"):
        st.apply(play(0, "M08", ref(2, 0)))
    st.apply(END)
    st.apply(attack(0, ref(1)))  # the tiger attacks: it is seen from now on
    tiger = me(st, 2)["board"][0]
    assert not tiger["stealth"] and me(st, 1)["hero"]["hp"] == 25


def test_a_friendly_stealthed_minion_can_be_chosen() -> None:
    st = position(player(hand=["P09"], board=[minion("N28")]))
    st.apply(play(0, "P09", ref(1, 0)))
    assert me(st)["board"][0]["atk"] == 9


def test_lights_justice_lets_the_hero_attack_and_breaks_after_four_swings() -> None:
    st = position(player("paladin", hand=["P02"]), p2=player(board=[minion("N24")]))
    st.apply(play(0, "P02"))
    assert me(st)["weapon"] == {"card": "P02", "atk": 1, "durability": 4, "eid": me(st)["weapon"]["eid"]}
    st.apply(attack(None, ref(2, 0)))  # the yeti strikes back for 4
    assert me(st)["hero"]["hp"] == 26 and me(st, 2)["board"][0]["hp"] == 4
    assert me(st)["weapon"]["durability"] == 3
    with pytest.raises(IllegalActionError, match="cannot attack"):
        st.apply(attack(None, ref(2)))
    for _ in range(3):
        st.apply(END)
        st.apply(END)
        st.apply(attack(None, ref(2)))
    assert me(st)["weapon"] is None and me(st, 2)["hero"]["hp"] == 27


def test_taunt_forces_attacks_but_not_spells() -> None:
    st = position(player(hand=["M08"], board=[minion("N09")]),
                  p2=player("paladin", board=[minion("N09"), minion("N25")]))
    attacks = [a.to_dict()["target"] for a in st.legal_actions() if a.to_dict()["type"] == "attack"]
    assert attacks == [ref(2, 1)]
    spells = [a.to_dict()["target"] for a in st.legal_actions() if a.to_dict()["type"] == "play"]
    assert ref(2) in spells and ref(2, 0) in spells


def test_divine_shield_absorbs_one_hit() -> None:
    st = position(player(board=[minion("N09")]), p2=player("paladin", board=[minion("N01")]))
    st.apply(attack(0, ref(2, 0)))
    squire = me(st, 2)["board"][0]
    assert not squire["ds"] and squire["hp"] == 1
    assert me(st)["board"][0]["hp"] == 1  # the squire still struck back


def test_windfury_attacks_twice_and_a_charge_minion_attacks_at_once() -> None:
    st = position(player(hand=["N04"], board=[minion("N06")]))
    st.apply(play(0, "N04"))
    st.apply(attack(1, ref(2)))
    st.apply(attack(0, ref(2)))
    st.apply(attack(0, ref(2)))
    assert me(st, 2)["hero"]["hp"] == 27
    assert not [a for a in st.legal_actions() if a.to_dict()["type"] == "attack"]


def test_a_minion_summoned_this_turn_cannot_attack() -> None:
    st = position(player(hand=["N09"]))
    st.apply(play(0, "N09"))
    assert me(st)["board"][0]["sick"]
    assert not [a for a in st.legal_actions() if a.to_dict()["type"] == "attack"]


# ---- the end of a game ----------------------------------------------------------------------


def test_both_heroes_dying_in_one_death_phase_is_a_tie() -> None:
    st = position(player(hp=2, hand=["M08"]), p2=player("paladin", hp=2, board=[minion("N27")]))
    st.apply(play(0, "M08", ref(2, 0)))  # Abomination dies: 2 damage to all characters
    assert st.is_terminal and st.winner == -1
    assert st.to_json()["winner"] == 0


def test_a_hero_at_zero_loses_and_nothing_more_is_legal() -> None:
    st = position(player(hand=["M08"]), p2=player("paladin", hp=6))
    st.apply(play(0, "M08", ref(2)))
    assert st.is_terminal and st.winner == 0 and st.legal_actions() == []


def test_the_action_that_kills_a_hero_is_played_out_then_the_game_ends() -> None:
    # Arcane Explosion kills an Abomination (eid 5) and a Harvest Golem (eid 6); the
    # Abomination's deathrattle kills the enemy hero, the golem's still resolves in the same
    # death phase (spec §5.3, §5.7: the game-over check follows the action), and nothing is
    # legal afterwards.
    board = [minion("N27", eid=5, hp=1), minion("N17", eid=6, hp=1)]
    st = position(player(hand=["M03"]), p2=player("paladin", hp=2, board=board))
    st.apply(play(0, "M03"))
    assert st.is_terminal and st.winner == 0 and st.legal_actions() == []
    assert cards(st, 2) == ["T_GOLEM"] and me(st, 2)["hero"]["hp"] == 0 and me(st)["hero"]["hp"] == 28
    assert me(st)["cards_played_this_turn"] == 1 and me(st)["mana"] == 8


def test_missiles_left_after_the_hero_dies_find_no_target() -> None:
    # Each hit picks among the living (spec §3.2): once the only enemy is dead, the other
    # missiles are not dealt.
    st = position(player(hand=["M01"]), p2=player("paladin", hp=1))
    st.apply(play(0, "M01"))
    assert st.is_terminal and st.winner == 0 and me(st, 2)["hero"]["hp"] == 0


def test_fatigue_grows_one_two_three() -> None:
    st = position(player(deck=[]), p2=player("paladin", deck=[]))
    hps = []
    for _ in range(6):
        st.apply(END)
        hps.append((me(st, 1)["hero"]["hp"], me(st, 2)["hero"]["hp"]))
    assert hps == [(30, 29), (29, 29), (29, 27), (27, 27), (27, 24), (24, 24)]
    assert me(st, 2)["fatigue"] == 3


def test_the_ply_limit_is_a_tie() -> None:
    st = position(ply=89)
    st.apply(END)
    assert st.is_terminal and st.winner == -1 and st.to_json()["capped"]


# ---- mana, The Coin, overload, combo -------------------------------------------------------


@pytest.mark.parametrize(("mana", "locked", "after"), [(10, 0, 10), (9, 0, 10), (3, 0, 4), (8, 2, 9)])
def test_the_coin_gives_one_mana_this_turn_never_above_ten(mana: int, locked: int, after: int) -> None:
    st = position(player(hand=["T_COIN"], mana=mana, overload_locked=locked))
    st.apply(play(0, "T_COIN"))
    assert me(st)["mana"] == after and me(st)["cards_played_this_turn"] == 1


def test_overload_locks_crystals_next_turn() -> None:
    st = position(player(hand=["S01", "S03"], max_mana=7, mana=7))
    st.apply(play(0, "S01", ref(2)))
    st.apply(play(0, "S03"))
    assert me(st)["overload_pending"] == 3
    st.apply(END)
    st.apply(END)
    p = me(st)
    assert (p["max_mana"], p["overload_locked"], p["overload_pending"], p["mana"]) == (8, 3, 0, 5)


def test_combo_doubles_eviscerate_and_gives_si7_a_target() -> None:
    st = position(player(hand=["R02", "R03", "R02"]))
    st.apply(play(0, "R02", ref(2)))  # first card: 2 damage
    assert me(st, 2)["hero"]["hp"] == 28
    si7 = [a.to_dict() for a in st.legal_actions() if a.to_dict().get("card") == "R03"]
    assert si7 and all(a["target"] is not None for a in si7)
    st.apply(play(1, "R02", ref(2)))  # combo: 4
    assert me(st, 2)["hero"]["hp"] == 24
    no_combo = position(player(hand=["R03"]))
    plays = [a.to_dict() for a in no_combo.legal_actions() if a.to_dict()["type"] == "play"]
    assert [a["target"] for a in plays] == [None]


# ---- hands and decks -------------------------------------------------------------------------


def test_an_eleventh_card_is_burned_and_shown() -> None:
    hand = ["N09"] * 10
    st = position(p2=player("paladin", hand=hand, deck=["M08", "N24"]))
    st.apply(END)
    p = me(st, 2)
    assert p["hand"] == hand and p["deck"] == ["N24"] and p["revealed"] == {"M08": 1}


def test_drawing_takes_the_top_of_the_deck() -> None:
    st = position(player(hand=["M05"], deck=["N24", "N30", "N09"]))
    st.apply(play(0, "M05"))
    assert me(st)["hand"] == ["N24", "N30"] and me(st)["deck"] == ["N09"]


# ---- secrets ---------------------------------------------------------------------------------


def test_ice_block_saves_its_owner_on_the_opponents_turn_only() -> None:
    st = position(player(hand=["M08", "M08"]), p2=player("paladin", hp=5, secrets=["M06"]), current=1)
    st.apply(play(0, "M08", ref(2)))
    p = me(st, 2)
    assert p["hero"]["hp"] == 5 and p["hero"]["immune"] and p["secrets"] == [] and p["revealed"] == {"M06": 1}
    st.apply(play(0, "M08", ref(2)))  # immune: prevented
    assert me(st, 2)["hero"]["hp"] == 5
    st.apply(END)
    assert not me(st, 2)["hero"]["immune"]
    own = position(player(hp=1, deck=[], secrets=["M06"]), current=2)
    own.apply(END)  # fatigue on its own turn: Ice Block waits
    assert own.is_terminal and own.winner == 1


def test_counterspell_counters_and_the_mana_is_spent() -> None:
    st = position(player(hand=["M04", "M08"]), p2=player("paladin", secrets=["M07"]))
    st.apply(play(0, "M04", ref(2)))
    p1, p2 = me(st, 1), me(st, 2)
    assert p2["hero"]["hp"] == 30 and not p2["hero"]["frozen"] and p2["secrets"] == []
    assert p1["mana"] == 8 and p1["hand"] == ["M08"] and p1["cards_played_this_turn"] == 1
    st.apply(play(0, "M08", ref(2)))
    assert me(st, 2)["hero"]["hp"] == 24


def test_noble_sacrifice_summons_a_defender_that_takes_the_attack() -> None:
    st = position(player(board=[minion("N24")]), p2=player("paladin", secrets=["P03"]))
    st.apply(attack(0, ref(2)))
    assert me(st, 2)["hero"]["hp"] == 30 and me(st, 2)["board"] == [] and me(st, 2)["secrets"] == []
    assert me(st)["board"][0]["hp"] == 3  # the Defender struck back for 2


def test_noble_sacrifice_waits_on_a_full_board() -> None:
    st = position(player(board=[minion("N24")]),
                  p2=player("paladin", secrets=["P03"], board=[minion("N09")] * 7))
    st.apply(attack(0, ref(2, 0)))
    assert me(st, 2)["secrets"] == ["P03"]


def test_a_secret_cannot_be_played_twice() -> None:
    st = position(player(hand=["M06"], secrets=["M06"]))
    assert all(a.to_dict()["type"] != "play" for a in st.legal_actions())
    with pytest.raises(IllegalActionError, match="already in play"):
        st.apply(play(0, "M06"))


# ---- auras, enrage, silence, freeze ---------------------------------------------------------


def test_auras_follow_the_board_and_a_silence_ends_them_without_killing() -> None:
    st = position(player(hand=["N10"], board=[minion("N33"), minion("N09", hp=1)]))
    board = me(st)["board"]
    assert (board[1]["atk"], board[1]["hp"], board[1]["max_hp"]) == (4, 1, 3)
    st.apply(play(0, "N10", ref(1, 0)))  # Ironbeak Owl silences the Champion
    board = me(st)["board"]
    assert (board[1]["atk"], board[1]["hp"], board[1]["max_hp"]) == (3, 1, 2)
    assert board[0]["silenced"] and board[2]["atk"] == 2  # the owl lost its aura bonus too


def test_losing_a_health_aura_never_kills_but_caps_health() -> None:
    st = position(player(hand=["M08"]), p2=player("paladin", board=[minion("N33"), minion("N24", hp=6)]))
    assert me(st, 2)["board"][1]["hp"] == 6
    st.apply(play(0, "M08", ref(2, 0)))
    yeti = me(st, 2)["board"][0]
    assert (yeti["atk"], yeti["hp"], yeti["max_hp"]) == (4, 5, 5)


def test_enrage_comes_with_damage_and_goes_with_healing() -> None:
    st = position(player("paladin", hand=["P05"], board=[minion("N08", hp=2), minion("N20")]))
    board = me(st)["board"]
    assert board[0]["atk"] == 5 and board[0]["ench"] == [{"src": "N08", "kind": "enrage", "atk": 3, "hp": 0}]
    assert board[1]["atk"] == 3 and not board[1]["windfury"]
    st.apply(play(0, "P05", ref(1, 0)))
    assert me(st)["board"][0]["atk"] == 2 and me(st)["board"][0]["ench"] == []


def test_raging_worgen_enraged_gets_windfury() -> None:
    st = position(player(hand=["M04"], board=[minion("N20")]))
    st.apply({"type": "power", "target": ref(1, 0)})
    worgen = me(st)["board"][0]
    assert worgen["atk"] == 4 and worgen["windfury"] and worgen["hp"] == 2


def test_a_frozen_windfury_attacker_stays_frozen_through_its_next_turn() -> None:
    st2 = position(player(board=[minion("N32")]), p2=player(board=[minion("M10")]))
    st2.apply(attack(0, ref(2, 0)))  # Water Elemental freezes the harpy after its first attack
    assert me(st2)["board"][0]["frozen"]
    st2.apply(END)
    st2.apply(END)
    assert me(st2)["board"][0]["frozen"]  # it had attacked: no thaw at its end of turn
    assert not [a for a in st2.legal_actions() if a.to_dict()["type"] == "attack"]
    st2.apply(END)
    st2.apply(END)
    assert not me(st2)["board"][0]["frozen"]


def test_frostbolt_freezes_even_through_a_divine_shield() -> None:
    st = position(player(hand=["M04"]), p2=player("paladin", board=[minion("N01")]))
    st.apply(play(0, "M04", ref(2, 0)))
    squire = me(st, 2)["board"][0]
    assert squire["frozen"] and not squire["ds"] and squire["hp"] == 1


# ---- powers ----------------------------------------------------------------------------------


def test_hero_powers_cost_two_once_a_turn() -> None:
    st = position(player(mana=3))
    st.apply({"type": "power", "target": ref(2)})
    assert me(st, 2)["hero"]["hp"] == 29 and me(st)["mana"] == 1
    with pytest.raises(IllegalActionError, match="already used"):
        st.apply({"type": "power", "target": ref(2)})
    pal = position(player("paladin", board=[minion("N09")] * 7))
    assert all(a.to_dict()["type"] != "power" for a in pal.legal_actions())


def test_knife_juggler_throws_after_the_battlecry_resolved() -> None:
    # Elven Archer kills the only enemy minion; the knife then can only hit the hero.
    st = position(player(hand=["N02"], board=[minion("N11")]),
                  p2=player("paladin", board=[minion("T_RECRUIT")]))
    st.apply(play(0, "N02", ref(2, 0)))
    assert me(st, 2)["board"] == [] and me(st, 2)["hero"]["hp"] == 29


# ---- setup ------------------------------------------------------------------------------------


def test_setup_deals_three_and_four_plus_the_coin_and_the_seed_repeats_the_game() -> None:
    game = Game("cards", {"first": "2"})
    st = game.new_state(seed=5)
    p1, p2 = me(st, 1), me(st, 2)
    assert st.to_json()["first"] == 2 and st.current_player == 1
    assert len(p2["hand"]) == 4 and len(p1["hand"]) == 5 and p1["hand"][4] == "T_COIN"
    assert p2["mana"] == 1 and p2["deck_count"] == 26 and p1["deck_count"] == 26
    a, b = game.new_state(seed=9), game.new_state(seed=9)
    a.seed_rng(3)
    b.seed_rng(3)
    a.random_playout()
    b.random_playout()
    assert a == b


def test_random_decks_respect_the_copy_limits() -> None:
    from collections import Counter

    from maag.engine.games.cards.pool import POOL

    legendary = {c.id for c in POOL if "LEGENDARY" in c.enc}
    for seed in range(30):
        st = Game("cards", {"deck1": "random", "deck2": "random"}).new_state(seed=seed)
        for p in st.to_json()["players"]:
            counts = Counter(p["hand"] + p["deck"])
            counts.pop("T_COIN", None)
            assert sum(counts.values()) == 30
            assert all(n <= (1 if c in legendary else 2) for c, n in counts.items())
