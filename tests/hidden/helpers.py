"""Positions for the hidden-information tests: real games with random draws, and twins of a
state that differ only in what the player to act cannot see."""

from __future__ import annotations

import random
from typing import Any

from maag.engine import Game, State
from maag.engine.games.heroes.codec import CARDS

GAME = Game("heroes", {"map": "a", "draws": "random"})


def midgame(seed: int, actions: int = 60, game: Game = GAME) -> State:
    """A real game (random draws) after about `actions` random actions, not over."""
    for k in range(50):
        st = game.new_state(seed=seed * 1000 + k)
        rng = random.Random(seed * 7 + k)
        for _ in range(actions):
            legal = st.legal_codes()
            if st.is_terminal or not legal:
                break
            non_end = [c for c in legal if c != 0]
            st.apply(rng.choice(non_end) if non_end and rng.random() < 0.85 else 0)
        if not st.is_terminal:
            return st
    raise AssertionError("no unfinished game")


def hidden_twin(state: State) -> State:
    """A full state equal to `state` except for the hidden part of the player to act's
    opponent: one card of its hand is exchanged with a different card of its deck (the
    deck seeds differ too). ValueError if no such exchange exists."""
    obj: dict[str, Any] = state.to_json()
    opp = str(2 - state.current_player)
    hand: list[str] = obj["hands"][opp]
    deck: dict[str, int] = obj["decks"][opp]
    for card in sorted(set(hand)):
        for other, n in sorted(deck.items()):
            if n > 0 and other != card:
                hand.remove(card)
                hand.append(other)
                deck[other] -= 1
                deck[card] = deck.get(card, 0) + 1
                obj["hands"][opp] = sorted(hand)
                obj["decks"][opp] = {c: k for c, k in deck.items() if k}
                seeds = obj["deck_seed"]
                obj["deck_seed"] = {"1": 1 + seeds["1"] % 999, "2": 1 + seeds["2"] % 999}
                return state.game.state_from_json(obj, rng_seed=99)
    raise ValueError("the opponent's hand and deck hold only one kind of card")


def opponent_hand(full: State, seat: int) -> tuple[int, ...]:
    """Card counts of the hand of `seat`'s opponent in a full state, by card index."""
    c = full.cdata
    return tuple(int(c.hand[1 - seat][i]) for i in range(len(CARDS)))


def opponent_deck(full: State, seat: int) -> tuple[int, ...]:
    c = full.cdata
    return tuple(int(c.deck[1 - seat][i]) for i in range(len(CARDS)))


def custom_observation_state(unseen: dict[str, int], hand_size: int) -> State:
    """A position (player 1 to move) whose opponent has `hand_size` cards in hand out of the
    `unseen` multiset (the rest in its deck), as a full state."""
    hand: list[str] = []
    rest = dict(unseen)
    for card in CARDS:
        while len(hand) < hand_size and rest.get(card, 0) > 0:
            hand.append(card)
            rest[card] -= 1
    obj = {
        "turn": 9, "current": 1, "ap": 5, "terminal": False, "winner": 0,
        "board": [
            {"x": 2, "y": 1, "kind": "crystal", "owner": 1, "hp": 4500, "items": []},
            {"x": 1, "y": 3, "kind": "crystal", "owner": 1, "hp": 4500, "items": []},
            {"x": 6, "y": 1, "kind": "crystal", "owner": 2, "hp": 4500, "items": []},
            {"x": 7, "y": 3, "kind": "crystal", "owner": 2, "hp": 4500, "items": []},
            {"x": 3, "y": 2, "kind": "knight", "owner": 1, "hp": 1000, "items": []},
            {"x": 5, "y": 2, "kind": "wizard", "owner": 2, "hp": 800, "items": []},
        ],
        "hands": {"1": ["archer", "cleric", "potion"], "2": sorted(hand)},
        "decks": {"1": {"knight": 1}, "2": {c: n for c, n in rest.items() if n}},
        "deck_seed": {"1": 5, "2": 6}, "map": "a", "draws": "random",
    }
    return GAME.state_from_json(obj, rng_seed=1)
