"""Heroes game flow: action points (§6), winning, losing and the turn limit (§12, §19 Q7/Q8),
seeded draws and opening deals (§4, §17.1, §17.2, §17.10), the enumeration at game start
(§17.6), the heuristic and the pruner (§14, §15, §17.9) and action ratings (§16.1)."""

from __future__ import annotations

from collections import Counter
from functools import cache

import heroes_oracle as oracle
import pytest
from heroes_position import (
    CARDS,
    END,
    assert_illegal,
    attack,
    deck,
    deploy,
    equip,
    game,
    hand,
    hp,
    legal,
    move,
    play,
    pos,
    spell,
    swap,
)
from maag.engine import Game, GameOverError, IllegalActionError, State
from maag.engine._lowlevel import lib

MAPS = ["a", "a-small", "a-tiny"]

# ---- action points (§6) --------------------------------------------------------------------------


@pytest.mark.parametrize("map_name", MAPS)
def test_three_ap_on_turn_one_then_five(map_name: str) -> None:
    s = game(map_name).new_state(7)
    j = s.to_json()
    assert (j["turn"], j["current"], j["ap"], s.current_player) == (1, 1, 3, 0)
    play(s, END)  # accepted with AP left
    j = s.to_json()
    assert (j["turn"], j["current"], j["ap"], s.current_player) == (2, 2, 5, 1)
    play(s, END)
    assert (s.to_json()["turn"], s.to_json()["ap"], s.current_player) == (3, 5, 0)


def test_end_turn_is_listed_last_and_only_end_turn_at_ap_zero() -> None:
    s = pos("1 knight 3,3", "2 archer 5,3", hands={1: ["wizard", "inferno"]}, ap=2)
    assert legal(s)[-1] == END and legal(s).count(END) == 1
    play(s, move((3, 3), (4, 3)))
    play(s, attack((4, 3), (5, 3)))
    assert legal(s) == [END]
    assert lib.hr_reference_legal_count(s.cdata) == 1


def test_no_action_at_ap_zero() -> None:
    units = ("1 knight 3,3", "2 archer 4,3", "1 cleric 0,0", "1 archer 1,0 hp=10")
    cards = {1: ["wizard", "inferno", "potion", "runemetal"]}
    with_ap = pos(*units, hands=cards, ap=5)
    s = pos(*units, hands=cards, ap=0)
    actions = [a for a in legal(with_ap) if a != END]
    assert {a["type"] for a in actions} == {"move", "attack", "heal", "deploy", "spell", "equip", "swap_card"}
    for a in actions:
        assert_illegal(s, a, match="action points")
    play(s, END)
    assert s.to_json()["ap"] == 5


@pytest.mark.parametrize("ap,start_ap,turn_limit",
                         [(5, 3, 100), (4, 3, 200), (3, 2, 300), (1, 1, 500), (7, 6, 100)])
def test_ap_configuration(ap: int, start_ap: int, turn_limit: int) -> None:
    g = Game("heroes", {"map": "a-tiny", "ap": ap})
    assert (g.config["start_ap"], g.config["turn_limit"]) == (start_ap, turn_limit)
    s = g.new_state(1)
    assert s.to_json()["ap"] == start_ap
    s.apply(END)
    assert s.to_json()["ap"] == ap


# ---- winning and losing (§12) --------------------------------------------------------------------

def _assert_over(s: State, winner: int) -> None:
    assert s.is_terminal and s.winner == winner
    j = s.to_json()
    assert j["terminal"] and j["winner"] == (winner + 1 if winner >= 0 else 0)
    assert s.legal_codes() == []
    assert_illegal(s, END, exc=GameOverError)
    value = 0.0 if winner < 0 else 60000.0
    assert (s.evaluate(0), s.evaluate(1)) == ((value, -value) if winner != 1 else (-value, value))


def test_crystal_win_mid_turn() -> None:
    s = pos("1 archer 5,3", "2 crystal 7,3 hp=100", "2 knight 8,2", without=((6, 1),))
    play(s, attack((5, 3), (7, 3)))
    _assert_over(s, 0)
    assert s.to_json()["ap"] == 4 and s.to_json()["turn"] == 3


def test_crystal_win_by_a_chain_jump() -> None:
    s = pos("1 wizard 4,1", "2 archer 5,1", "2 crystal 6,1 hp=100", without=((7, 3),))
    play(s, attack((4, 1), (5, 1)))
    _assert_over(s, 0)


def test_p2_wins_on_crystals() -> None:
    s = pos("2 knight 2,2", "1 crystal 2,1 hp=150", "1 knight 0,0", without=((1, 3),), current=2)
    play(s, attack((2, 2), (2, 1)))
    _assert_over(s, 1)


def test_win_on_units_at_end_of_turn() -> None:
    s = pos("1 knight 3,3", hands={1: [], 2: ["potion"]}, decks={2: {"inferno": 2, "scroll": 1}})
    play(s, move((3, 3), (4, 3)))
    assert not s.is_terminal  # only checked at the end of a turn
    play(s, END)
    _assert_over(s, 0)
    j = s.to_json()
    assert (j["turn"], j["current"], j["hands"]["1"]) == (3, 1, [])  # no draw, no turn change


def test_the_player_ending_the_turn_can_lose() -> None:
    s = pos("1 knight 3,3 hp=0", "2 archer 5,3", hands={1: ["potion"]}, decks={1: {"scroll": 2}})
    play(s, END)
    _assert_over(s, 1)


def test_knocked_out_units_count_as_units() -> None:
    s = pos("1 knight 3,3", "2 archer 5,3 hp=0", hands={2: []}, decks={2: {"scroll": 2}})
    play(s, END)
    assert not s.is_terminal and hp(s, (5, 3)) == 0
    play(s, END)  # P2's KO'd unit is removed at P2's end of turn: P2 has nothing left
    _assert_over(s, 0)


def test_unit_cards_in_the_deck_count_as_units() -> None:
    s = pos("1 knight 3,3", hands={2: []}, decks={2: {"ninja": 1}})
    play(s, END)
    assert not s.is_terminal and s.current_player == 1


def test_simultaneous_loss_is_a_draw() -> None:
    # P1 loses its last (KO'd) unit at its end of turn while P2 has no crystal left (§19 Q8).
    s = pos("1 knight 3,3 hp=0", "2 archer 5,3", decks={1: {"scroll": 1}}, without=((6, 1), (7, 3)))
    play(s, END)
    _assert_over(s, -1)


def test_crystal_check_at_end_of_turn() -> None:
    s = pos("1 knight 3,3", "2 archer 5,3", without=((6, 1), (7, 3)))
    play(s, END)
    _assert_over(s, 0)


# ---- turn limit (§12.3, §19 Q7) ------------------------------------------------------------------

def test_turn_limit_is_a_draw() -> None:
    s = pos("1 knight 3,3", "2 archer 5,3", turn=99, current=1)
    play(s, END)
    assert not s.is_terminal and s.to_json()["turn"] == 100
    play(s, END)
    _assert_over(s, -1)
    assert s.to_json()["turn"] == 100 and s.to_json()["current"] == 2


def test_crystal_win_during_turn_100_is_a_draw() -> None:
    s = pos("2 archer 3,3", "1 crystal 1,3 hp=100", "1 knight 8,2", without=((2, 1),), turn=100, current=2)
    play(s, attack((3, 3), (1, 3)))
    _assert_over(s, -1)


def test_configured_turn_limit() -> None:
    s = pos("1 knight 3,3", "2 archer 5,3", turn=9, turn_limit=10)
    play(s, END)
    play(s, END)
    _assert_over(s, -1)


# ---- seeded draws (§4.3, §17.1) ------------------------------------------------------------------

def test_seeded_draws_17_1() -> None:
    expected = ["cleric", "runemetal", "knight", "scroll", "potion", "dragonscale", "wizard", "runemetal",
                "dragonscale", "knight"]
    seeds = [7, 16, 27, 42, 61, 86, 118, 160, 215, 286]
    # The oracle reproduces the vector ...
    d = list(oracle.DECKS["standard"])
    seed, got = 0, []
    for _ in range(10):
        c, seed = oracle.draw_one(d, seed)
        got.append((CARDS[c], seed))
    assert got == list(zip(expected, seeds, strict=True))
    # ... and so does the engine, refilling an empty hand at the end of the turn (6 cards) ...
    p2_hand = ["knight", "archer", "cleric", "potion", "scroll", "inferno"]
    s = pos(hands={1: [], 2: p2_hand}, decks={1: dict(oracle.full_deck("a"))}, seeds=(0, 777))
    play(s, END)
    assert hand(s, 1) == Counter(expected[:6])
    assert s.to_json()["deck_seed"] == {"1": 86, "2": 777}
    # ... and a hand of 2 with the remaining deck and seed 86 (4 cards).
    rest = oracle.full_deck("a") - Counter(expected[:6])
    s = pos(hands={1: ["cleric", "scroll"], 2: p2_hand}, decks={1: dict(rest)}, seeds=(86, 5))
    play(s, END)
    assert hand(s, 1) == Counter(["cleric", "scroll"] + expected[6:])
    assert s.to_json()["deck_seed"]["1"] == 286


def test_draws_stop_when_the_deck_is_empty() -> None:
    s = pos(hands={1: ["scroll", "scroll"]}, decks={1: {"knight": 1, "inferno": 1}}, seeds=(3, 4))
    play(s, END)
    assert hand(s, 1) == {"scroll": 2, "knight": 1, "inferno": 1} and deck(s, 1) == {}
    seed = s.to_json()["deck_seed"]["1"]
    play(s, END)
    play(s, END)  # nothing to draw: the seed stays
    assert s.to_json()["deck_seed"]["1"] == seed


def test_the_new_player_also_draws_up_to_six() -> None:
    # Normally a no-op; with an imported short hand the second draw of §6.1 fills it.
    s = pos("1 knight 3,3", "2 knight 5,3", hands={1: ["potion"] * 2 + ["scroll"] * 2 + ["inferno"] * 2,
                                                  2: ["scroll"]}, seeds=(10, 20))
    d2 = [deck(s, 2)[c] for c in CARDS]
    h2 = [hand(s, 2)[c] for c in CARDS]
    seed = oracle.draw_up(d2, h2, 20)
    play(s, END)
    assert [hand(s, 2)[c] for c in CARDS] == h2 and s.to_json()["deck_seed"] == {"1": 10, "2": seed}


def test_full_turn_sanity_17_10() -> None:
    s = game("a").new_state(12345)
    j = s.to_json()
    card = j["hands"]["1"][0]
    play(s, swap(card))
    assert s.to_json()["ap"] == 2
    play(s, END)
    k = s.to_json()
    assert len(k["hands"]["1"]) == 6 and (k["turn"], k["current"], k["ap"]) == (2, 2, 5)
    assert k["deck_seed"]["1"] == oracle.next_seed(j["deck_seed"]["1"])
    assert k["deck_seed"]["2"] == j["deck_seed"]["2"] and k["hands"]["2"] == j["hands"]["2"]


def test_random_draws_conserve_cards_and_follow_the_rng() -> None:
    obj = pos(hands={1: ["knight"]}, seeds=(11, 22), draws="random").to_json()
    results = []
    for rng_seed in range(8):
        s = game("a", "random").state_from_json(obj, rng_seed=rng_seed)
        before = hand(s, 1) + deck(s, 1)
        s.apply(END)
        assert hand(s, 1) + deck(s, 1) == before and sum(hand(s, 1).values()) == 6
        assert s.to_json()["deck_seed"] == {"1": 11, "2": 22}  # untouched in random mode
        again = game("a", "random").state_from_json(obj, rng_seed=rng_seed)
        again.apply(END)
        assert again.to_bytes() == s.to_bytes()
        results.append(tuple(sorted(hand(s, 1).items())))
    assert len(set(results)) > 1


# ---- opening deals (§4.2, §17.2) -----------------------------------------------------------------

OPENING_17_2 = [
    ("standard", 0, 3, [0, 1, 1, 1, 0, 0, 1, 1, 1, 0, 0], 2490),
    ("standard", 500, 4, [0, 0, 1, 2, 0, 0, 1, 0, 0, 1, 1], 21834),
    ("standard", 999, 1, [1, 0, 1, 1, 0, 0, 0, 1, 1, 0, 1], 4904),
    ("small", 0, 3, [1, 0, 0, 1, 1, 1, 0, 2, 0, 0, 0], 2490),
    ("small", 500, 2, [1, 0, 0, 1, 1, 0, 0, 0, 0, 1, 2], 12154),
    ("tiny", 0, 1, [1, 0, 0, 1, 1, 0, 1, 1, 0, 1, 0], 86),
    ("tiny", 500, 1, [1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0], 2500),
]


@pytest.mark.parametrize("deck_kind,seed,deals,hand_counts,seed_after", OPENING_17_2)
def test_opening_deal_oracle_17_2(deck_kind: str, seed: int, deals: int, hand_counts: list[int],
                                  seed_after: int) -> None:
    assert oracle.opening_deal(deck_kind, seed) == (hand_counts, seed_after, deals)


@cache
def _deal_table(deck_kind: str) -> dict[tuple[tuple[int, ...], int], set[int]]:
    table: dict[tuple[tuple[int, ...], int], set[int]] = {}
    for s0 in range(1000):
        h, s1, _ = oracle.opening_deal(deck_kind, s0)
        table.setdefault((tuple(h), s1), set()).add(s0)
    return table


@pytest.mark.parametrize("map_name", MAPS)
def test_new_games_deal_like_the_reference(map_name: str) -> None:
    """Every seeded new game's opening hands are the reference's deal (§4.2) from some deck
    seed 0..999, and the initial deck seeds are spread over that range."""
    deck_kind = oracle.MAP_DECK[map_name]
    table = _deal_table(deck_kind)
    starts = set()
    for seed in range(60):
        j = game(map_name).new_state(seed).to_json()
        for p in ("1", "2"):
            counts = tuple(Counter(j["hands"][p])[c] for c in CARDS)
            key = (counts, j["deck_seed"][p])
            assert key in table, f"seed {seed}: player {p}'s opening is no reference deal"
            starts |= table[key]
            assert Counter(j["hands"][p]) + Counter(j["decks"][p]) == oracle.full_deck(map_name)
    assert len(starts) > 40


@pytest.mark.parametrize("map_name", MAPS)
def test_random_draw_openings_have_three_units(map_name: str) -> None:
    for seed in range(30):
        j = game(map_name, "random").new_state(seed).to_json()
        for p in ("1", "2"):
            assert len(j["hands"][p]) == 6
            assert sum(c in CARDS[:5] for c in j["hands"][p]) == 3


# ---- enumeration at game start (§17.6) -----------------------------------------------------------

def test_enumeration_at_game_start_17_6() -> None:
    s = pos(hands={1: ["archer", "wizard", "ninja", "potion", "potion", "runemetal"]}, turn=1, ap=3)
    expected = [deploy("archer", (0, 0)), deploy("archer", (0, 4)), swap("archer"),
                deploy("wizard", (0, 0)), deploy("wizard", (0, 4)), swap("wizard"),
                deploy("ninja", (0, 0)), deploy("ninja", (0, 4)), swap("ninja"),
                swap("potion"), swap("runemetal")]
    assert legal(s) == expected + [END]
    assert lib.hr_reference_legal_count(s.cdata) == 11


def test_enumeration_order_units_then_cards() -> None:
    # Units in x-outer, y-inner square order, each unit's targets dx outer, dy inner;
    # then cards in card-index order, each card's drops then its swap.
    s = pos("1 knight 3,3", "1 archer 1,0", hands={1: ["scroll", "knight"]}, ap=5)
    got = legal(s)
    froms = [tuple(a["from"]) for a in got if "from" in a]
    assert froms == sorted(froms, key=lambda f: (f[0], f[1]))
    for f in set(froms):
        tos = [tuple(a["to"]) for a in got if a.get("from") == list(f)]
        assert tos == sorted(tos)
    cards = [a for a in got if "card" in a]
    assert cards == [deploy("knight", (0, 0)), deploy("knight", (0, 4)), swap("knight"),
                     equip("scroll", (1, 0)), equip("scroll", (3, 3)), swap("scroll")]


# ---- heuristic (§14, §17.9) ----------------------------------------------------------------------

@pytest.mark.parametrize("map_name", MAPS)
def test_heuristic_at_the_start_is_zero(map_name: str) -> None:
    for seed in range(5):
        s = game(map_name).new_state(seed)
        assert (s.evaluate(0), s.evaluate(1)) == (0.0, 0.0)


def test_heuristic_inferno_asymmetry_17_9() -> None:
    s = game("a").new_state(3)
    j = s.to_json()
    p1 = Counter(j["hands"]["1"]) + Counter(j["decks"]["1"])
    # Take one inferno away from P1 altogether.
    if "inferno" in j["hands"]["1"]:
        j["hands"]["1"].remove("inferno")
    else:
        j["decks"]["1"]["inferno"] -= 1
    assert p1["inferno"] == 2
    t = game("a").state_from_json(j)
    assert (t.evaluate(0), t.evaluate(1)) == (-750.0, -750.0)


@pytest.mark.parametrize("units,delta", [
    (("1 archer 2,2 scroll",), 800 + 1600 + 120 + 2 * 80),     # hp + 2 base + power square + 2 eq
    (("1 knight 4,4 runemetal",), 1000 + 2000 + 120 - 60),
    (("1 knight 4,4 hp=0 runemetal",), 0 + 1000 + 0 - 30),     # KO'd: base x1, no square, eq x1
    (("1 cleric 0,0 hp=300",), 300 + 1600 - 75),                # deploy square -75
    (("1 wizard 8,4 helm",), 880 + 1600 - 75 + 80),             # either side's deploy square
    (("1 crystal 2,1 hp=100",), -(4400)),                       # crystal: hp + 9000
])
def test_heuristic_board_terms(units: tuple[str, ...], delta: int) -> None:
    # Compared with the same position without the units (card terms kept equal via decks).
    decks: dict[int, dict[str, int]] = {1: {}, 2: {}}
    base = pos(decks=decks)
    s = pos(*units, decks=decks)
    assert s.evaluate(0) - base.evaluate(0) == delta
    assert s.evaluate(1) - base.evaluate(1) == -delta


def test_heuristic_card_terms() -> None:
    s = pos(hands={1: ["knight", "archer", "potion"], 2: ["inferno"]}, decks={1: {}, 2: {}})
    assert s.evaluate(0) == 1750 + 1400 - 750
    assert s.evaluate(1) == -(1750 + 1400) - 750    # P2 view: (B2 + I1) - (B1 + I2)
    s = pos(hands={1: ["inferno"], 2: []}, decks={1: {}, 2: {}})
    assert (s.evaluate(0), s.evaluate(1)) == (750, 750)  # P1's inferno counts for P2 too
    for p in (0, 1):
        assert s.evaluate(p) == oracle.evaluate(s.to_json(), p)


# ---- pruner (§15, §17.9) -------------------------------------------------------------------------

def test_pruner_17_9() -> None:
    s = pos(hands={1: ["archer", "cleric", "cleric", "inferno", "potion"]}, ap=3, turn=1)
    kept = [a.to_dict() for a in s.prune(s.legal_actions())]
    infernos = [a for a in kept if a["type"] == "spell"]
    assert len(infernos) == 1 and infernos[0]["to"] in ([6, 2], [7, 2])
    assert [a for a in kept if a["type"] != "spell"] == [
        deploy("archer", (0, 0)), deploy("archer", (0, 4)), deploy("cleric", (0, 0)),
        deploy("cleric", (0, 4)), swap("cleric"), END]
    assert kept == oracle.prune(s.to_json(), legal(s))


def test_pruner_keeps_order_and_drops_subset_infernos() -> None:
    s = pos("1 knight 3,3", "2 archer 5,2", "2 archer 5,3 hp=0", hands={1: ["inferno", "inferno", "scroll"]})
    acts = s.legal_actions()
    kept = [a.to_dict() for a in s.prune(acts)]
    assert kept == oracle.prune(s.to_json(), legal(s))
    # swap of the scroll (held once) goes, swap of the inferno (held twice) stays
    assert [a for a in kept if a["type"] != "spell"] == [a for a in legal(s) if a["type"] != "spell"
                                                         and a != swap("scroll")]
    assert swap("inferno") in kept
    spells = [a["to"] for a in kept if a["type"] == "spell"]
    # maximal target sets: {(5,2),(5,3),(6,1)} from (5,2)/(6,2)..., the crystals' (6,2)/(7,2)...
    assert spells and all(oracle.spell_targets(s.to_json(), *t) for t in spells)


# ---- ratings (§16.1) -----------------------------------------------------------------------------

def test_ratings() -> None:
    s = pos("1 wizard 2,2", "1 knight 3,3 hp=500 scroll", "1 cleric 4,4", "1 archer 8,2 hp=0 runemetal helm",
            "2 archer 4,2", "2 knight 5,3 hp=0", "1 knight 0,0",
            hands={1: ["inferno", "potion", "scroll", "dragonscale", "ninja"]})
    rated = {str(a): s.rate(a) for a in s.legal_actions()}
    g = s.game

    def r(d: dict[str, object]) -> int:
        return rated[str(g.action(d))]

    assert r(attack((2, 2), (4, 2))) == 300 + 200         # wizard: power + 200
    assert r(move((3, 3), (5, 3))) == 2 * 1000             # stomp: 2 x max hp
    assert r(move((4, 4), (5, 3))) == 1400                # cleric onto an enemy KO'd unit ("HEAL")
    assert r(move((2, 2), (2, 3))) == 0 and r(move((4, 4), (4, 3))) == 0
    assert r(move((0, 0), (0, 1))) == 0 and r(move((2, 2), (1, 2))) == 0
    assert r(move((3, 3), (4, 3))) == 0 and r(move((0, 0), (0, 2))) == 0
    assert r(move((4, 4), (4, 3))) == 0
    t = pos("1 knight 3,3", "1 knight 1,0")
    assert t.rate(t.game.action(move((3, 3), (4, 4)))) == 30   # special squares: assault, ...
    assert t.rate(t.game.action(move((3, 3), (2, 2)))) == 30   # power
    assert t.rate(t.game.action(move((1, 0), (0, 0)))) == 30   # own deploy
    assert r({"type": "heal", "from": [4, 4], "to": [3, 3]}) == 1000 - 500
    assert r(equip("potion", (3, 3))) == 1000 - 500 - 300
    assert r(equip("potion", (8, 2))) == 880 + 2 * 200     # KO'd: max hp + 200 per item
    assert r(equip("dragonscale", (2, 2))) == 300          # power at full hp
    assert r(equip("dragonscale", (3, 3))) == 0            # integer hp / max hp
    assert r(deploy("ninja", (0, 4))) == 200
    assert r(spell((4, 2))) == -500 + 300 + 2 * 1000       # living archer + KO'd knight
    assert r(swap("scroll")) == 0
    assert s.rate(0) == 0
    z = pos("1 knight 3,3", ap=0)
    assert z.rate(0) == 10000
    for a in s.legal_actions():
        assert s.rate(a) == oracle.rate(s.to_json(), a.to_dict()), a


def test_illegal_action_names_the_rule() -> None:
    s = pos("1 knight 3,3", hands={1: ["scroll"]})
    with pytest.raises(IllegalActionError) as e:
        s.apply(equip("scroll", (5, 3)))
    assert "item" in e.value.rule
    with pytest.raises(IllegalActionError) as e:
        s.apply(move((3, 3), (7, 3)))
    assert e.value.rule
    assert_illegal(s, 0x0F)  # an undefined action type
    assert_illegal(s, 1 << 24)
    assert_illegal(s, spell((3, 3)), match="hand")
    assert_illegal(s, move((3, 3), (12, 3)), match="off the board")


@pytest.mark.parametrize(("action", "said"), [
    ({"type": "move", "from": [0, 0]}, "missing field 'to'"),
    ({"type": "deploy", "to": [0, 0]}, "missing field 'card'"),
    ({"type": "attack", "to": [0, 0]}, "missing field 'from'"),
])
def test_an_action_missing_a_field_is_told_which(action: dict[str, object], said: str) -> None:
    from maag.engine import Game

    with pytest.raises(ValueError, match=said):
        Game("heroes", {}).action(action)
