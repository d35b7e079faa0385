"""`Observation`: what one seat may see, as a type distinct from a full `State`.

An observation holds the engine's observation state (the game's `observe`: heroes merges
the opponent's hand into its deck, so the opponent's deck lists every card the seat has not
seen, and zeroes both deck seeds) and offers no way to reach hidden parts: it answers
questions about the visible position and samples full states consistent with it
(`determinize`).

    >>> from maag.engine import Game, Observation
    >>> st = Game("heroes").new_state(seed=1)
    >>> obs = Observation.of(st)                 # the player to act's view
    >>> full = obs.determinize(7)                 # one consistent full state
    >>> probable = obs.determinize(7, "most-probable")

Every agent of maag.bots takes an Observation; the bot processes and the referee's wire
only ever carry one (the wire form is `to_json()`, read back with `from_json`)."""

from __future__ import annotations

import json
from typing import Any

from ._lowlevel import check, ffi, lib
from .game import Action, Game, State

__all__ = ["Observation", "STRATEGIES", "observer_of"]

# Determinization strategies (mg_game.h MG_DET_*), by name.
STRATEGIES: dict[str, int] = {
    "uniform": lib.MG_DET_UNIFORM,
    "most-probable": lib.MG_DET_MOST_PROBABLE,
    "all-unseen": lib.MG_DET_ALL_UNSEEN,
}


def observer_of(state: State) -> int | None:
    """The seat whose observation `state` is, or None for a full state (the game's C
    interface says)."""
    return state.observer


def strategy_code(strategy: str) -> int:
    """MG_DET_* for a strategy name; ValueError listing the names otherwise."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown determinization strategy {strategy!r}; known: {', '.join(STRATEGIES)}")
    return STRATEGIES[strategy]


class Observation:
    """What `seat` may see of a position. Immutable; build one with `Observation.of(state)`
    or `Observation.from_json(game, obj)`."""

    __slots__ = ("_st", "_seat")

    _st: State
    _seat: int

    def __init__(self) -> None:
        raise TypeError("build an Observation with Observation.of(state, seat) or "
                        "Observation.from_json(game, obj)")

    @classmethod
    def _wrap(cls, st: State, seat: int) -> Observation:
        obj = object.__new__(cls)
        object.__setattr__(obj, "_st", st)
        object.__setattr__(obj, "_seat", seat)
        return obj

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("an Observation is immutable")

    @classmethod
    def of(cls, state: State, seat: int | None = None) -> Observation:
        """The view of `seat` (default: the player to act) of a full state; from an
        observation state, a copy of it (ValueError if it belongs to another seat)."""
        owner = observer_of(state)
        if owner is not None:
            if seat is not None and seat != owner:
                raise ValueError(f"this is seat {owner}'s observation, not seat {seat}'s")
            return cls._wrap(state.clone(), owner)
        if seat is None:
            seat = state.current_player
        return cls._wrap(state.observation(seat), seat)

    @classmethod
    def from_json(cls, game: Game, obj: dict[str, Any] | str) -> Observation:
        """An observation from its JSON form (the wire's `your_turn.observation`). A JSON
        full state (no `observer` field) is refused with ValueError; StateError if it is
        inconsistent."""
        if isinstance(obj, str):
            obj = json.loads(obj)
        if not isinstance(obj, dict) or obj.get("observer") not in (1, 2):
            raise ValueError("not an observation: the object has no 'observer' field (1 or 2)")
        st = game.state_from_json(obj, rng_seed=0)
        return cls._wrap(st, observer_of(st))  # type: ignore[arg-type]

    # -- the visible position --------------------------------------------------------------
    @property
    def game(self) -> Game:
        return self._st.game

    @property
    def seat(self) -> int:
        """The observing seat, 0 or 1."""
        return self._seat

    @property
    def current_player(self) -> int:
        return self._st.current_player

    @property
    def is_terminal(self) -> bool:
        return self._st.is_terminal

    @property
    def winner(self) -> int | None:
        return self._st.winner

    def legal_codes(self) -> list[int]:
        """Legal action codes of the player to act (exact when that is the observer: its
        actions depend only on what it sees)."""
        return self._st.legal_codes()

    def legal_actions(self) -> list[Action]:
        return self._st.legal_actions()

    def is_legal(self, action: Action | int) -> bool:
        return self._st.is_legal(action)

    def evaluate(self, player: int) -> float:
        """The game's heuristic of the visible position (heroes counts a player's cards as
        hand + deck, so there this equals the value of every determinization)."""
        return self._st.evaluate(player)

    def hash(self) -> int:
        return self._st.hash()

    def to_json(self) -> dict[str, Any]:
        """The wire form: the full-state JSON with `observer`, `hand_sizes` and
        `deck_sizes`, an empty opponent hand and no deck seeds."""
        return self._st.to_json()

    def to_bytes(self) -> bytes:
        return self._st.to_bytes()

    def unseen(self) -> dict[str, int]:
        """What the seat has not seen, by name (heroes: the opponent's hand and deck together,
        by card); empty for a game without hidden information."""
        fn = self.game.spec.unseen
        return fn(self.to_json()) if fn is not None else {}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Observation) and other._seat == self._seat and \
            other.game.name == self.game.name and other.to_bytes() == self.to_bytes()

    def __hash__(self) -> int:
        return self.hash()

    def __repr__(self) -> str:
        text = json.dumps(self.to_json(), separators=(",", ":"))
        return f"<Observation seat {self._seat + 1} {text[:100]}...>"

    # -- sampling --------------------------------------------------------------------------
    def determinize(self, seed: int, strategy: str = "uniform") -> State:
        """A full state consistent with this observation (its RNG seeded from `seed`).

        strategy: "uniform" (the opponent's hand drawn uniformly without replacement from
        the unseen cards, fresh deck seeds), "most-probable" (the hand with the highest
        multivariate hypergeometric probability, ties to lower card indices; the same hand
        for every seed) or "all-unseen" (the opponent holds every unseen card, its deck is
        empty: the hand limit is lifted, so this is not a reachable game state)."""
        code = strategy_code(strategy)
        out = State(self.game)
        rng = ffi.new("mg_rng *")
        lib.mg_rng_seed(rng, seed & (2**64 - 1))
        vt = self.game.vt
        check(vt, lib.mg_determinize(vt, self._st._buf, code, rng, out._buf))
        lib.mg_rng_seed(out._rng, (seed ^ 0x5DEECE66D) & (2**64 - 1))
        return out

    def as_state(self) -> State:
        """The observation state itself: a State holding only what the seat may see (the
        hidden parts blanked), the root the C search kernels determinize from
        (maag.engine.hidden, the bundled agents)."""
        return self._st
