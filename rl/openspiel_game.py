"""Every registered game as an OpenSpiel game (the `rl` extra: open-spiel). Importing this
module registers each game of maag's registry that has an action table (its folder's
spaces.py) with `pyspiel.register_game` as `maag_<name>`:

    >>> import pyspiel
    >>> import maag.rl.openspiel_game  # registers maag_heroes, maag_nim, maag_cards, ...
    >>> game = pyspiel.load_game("maag_heroes", {"map": "a-tiny", "rng_seed": 7})
    >>> state = game.new_initial_state()
    >>> state.apply_action(state.legal_actions()[0])

* Type: sequential, two players, zero-sum, imperfect information, terminal rewards; chance
  is sampled inside the game (SAMPLED_STOCHASTIC: draws and random targets come from the RNG
  each state carries, as in maag's engine), so no state is a chance node.
* Parameters: the game's options (`maag games`) with their defaults; an option whose
  default follows from the others (heroes' `turn_limit`, cards' `hero1`, ...) has the
  default -1 (a number) or "" (a text), meaning "derived". `rng_seed` (default -1: from the
  OS) seeds the generator that deals each new game.
* Actions: the PettingZoo door's action table (`maag.rl.encoding.ActionTable`): action i is
  the game's action code `table.code(i)`; legal actions are listed in ascending order.
* Observations: `observation_string(seat)` is the seat's observation (`State.observation`,
  maag's wire JSON, keys sorted) and `observation_tensor(seat)` its float vector
  (`ObservationEncoder`); both are read from that observation alone, never from the hidden
  state. maag's observations are the whole of what a seat knows (its determinization
  conditions on nothing else), so the information state is the observation:
  `information_state_string` and `information_state_tensor` are the same.
* `resample_from_infostate(seat, sampler)`: a full state drawn by maag's determinization of
  the seat's observation (uniform over the hidden cards), its RNG fresh; what OpenSpiel's
  ISMCTS calls once per simulation.
* Returns: +1 to the winner and -1 to the loser at the end, 0 each for a draw (a game cut by
  its turn, ply or round limit is a draw).
* `clone()` copies the state and its RNG; serialization is not supported (OpenSpiel's own
  serialization cannot carry a Python game's sampled chance)."""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np
import pyspiel
from maag.engine import Game, State, registry

from .encoding import ActionTable, NoActionTable, ObservationEncoder, game_spaces

__all__ = ["MaagGame", "MaagState", "register", "short_name", "GAMES", "to_seed"]

PREFIX = "maag_"
DERIVED_INT = -1
DERIVED_STR = ""


def short_name(game: str) -> str:
    """OpenSpiel's name of a maag game: maag_<name>."""
    return PREFIX + game


def to_seed(u: float, salt: int = 0) -> int:
    """A 64-bit seed from a uniform draw in [0, 1) (OpenSpiel's samplers give floats)."""
    return (int(u * 2**53) * 0x9E3779B97F4A7C15 + salt) & (2**64 - 1)


def _parameters(name: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for o in registry.get(name).options:
        if o.default is not None:
            out[o.name] = o.default
        else:
            out[o.name] = DERIVED_INT if o.type is int else DERIVED_STR
    out["rng_seed"] = -1
    return out


def _config(name: str, params: dict[str, Any]) -> dict[str, Any]:
    """The maag configuration of OpenSpiel parameters (derived ones left out)."""
    out: dict[str, Any] = {}
    for o in registry.get(name).options:
        if o.name not in params:
            continue
        v = params[o.name]
        if o.default is None and (v == DERIVED_INT if o.type is int else v == DERIVED_STR):
            continue
        out[o.name] = v
    return out


def _game_type(name: str) -> pyspiel.GameType:
    return pyspiel.GameType(
        short_name=short_name(name),
        long_name=f"maag {name}: {registry.get(name).summary}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=2,
        min_num_players=2,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=_parameters(name),
    )


class MaagGame(pyspiel.Game):  # type: ignore[misc]
    """A registered maag game with its options, as an OpenSpiel game (module docstring)."""

    def __init__(self, name: str, params: dict[str, Any] | None = None, game: Game | None = None) -> None:
        """maag game `name` with OpenSpiel `params`, or an already configured maag `game`
        (its options then stand as the parameters where OpenSpiel can hold them)."""
        full = {**_parameters(name), **(params or {})}
        if game is not None:
            if game.name != name:
                raise ValueError(f"game {game.name!r} is not {name!r}")
            full.update((k, v) for k, v in game.config.items()
                        if k in full and isinstance(v, (bool, int, float, str)))
        self.maag = game if game is not None else Game(name, _config(name, full))
        self.table = ActionTable(self.maag)
        self.encoder = ObservationEncoder(self.maag)
        spaces = game_spaces(name)
        self._limit = getattr(spaces, "max_game_length", None)
        length = int(self._limit(self.maag)) if self._limit is not None else 1_000_000
        info = pyspiel.GameInfo(num_distinct_actions=len(self.table), max_chance_outcomes=0, num_players=2,
                                min_utility=-1.0, max_utility=1.0, utility_sum=0.0, max_game_length=length)
        super().__init__(_game_type(name), info, full)
        seed = int(full["rng_seed"])
        self.rng = np.random.default_rng(None if seed < 0 else seed)

    def new_initial_state(self, state: State | None = None) -> MaagState:
        """A new game dealt from the game's generator, or the OpenSpiel state of a full
        maag `state` of this game (a copy; its RNG included)."""
        if state is None:
            state = self.maag.new_state(int(self.rng.integers(0, 2**63)))
        elif state.observer is not None:
            raise ValueError("an OpenSpiel state is a full state: determinize an observation first")
        else:
            state = state.clone()
        return MaagState(self, state)

    def make_py_observer(self, iig_obs_type: Any = None,
                         params: dict[str, Any] | None = None) -> MaagObserver:
        if params:
            raise ValueError(f"maag's observers take no parameters, not {params}")
        return MaagObserver(self)


class _Held:
    """The maag state inside an OpenSpiel state: OpenSpiel clones a Python state by deep
    copying its attributes, and this copies the C state and its RNG."""

    __slots__ = ("state", "cache")

    def __init__(self, state: State) -> None:
        self.state = state
        self.cache: dict[Any, Any] = {}  # what is read from the state until it changes

    def __deepcopy__(self, memo: dict[int, Any]) -> _Held:
        return _Held(self.state.clone())


class MaagState(pyspiel.State):  # type: ignore[misc]
    """One position of a maag game as an OpenSpiel state (module docstring)."""

    def __init__(self, game: MaagGame, state: State | None = None) -> None:
        super().__init__(game)
        if state is None:
            state = game.maag.new_state(int(game.rng.integers(0, 2**63)))
        self._held = _Held(state)

    @property
    def maag_state(self) -> State:
        """The full maag state (it holds hidden parts: the referee's view, not an agent's)."""
        return self._held.state

    def _game(self) -> MaagGame:
        game: MaagGame = self.get_game()
        return game

    # -- OpenSpiel's interface -----------------------------------------------------------------
    def current_player(self) -> int:
        st = self._held.state
        return int(pyspiel.PlayerId.TERMINAL) if st.is_terminal else st.current_player

    def _legal_actions(self, player: int) -> list[int]:
        cached = self._held.cache.get("legal")
        if cached is None:
            table = self._game().table
            codes = self._held.state.legal_codes()
            cached = self._held.cache["legal"] = sorted(table.index(c) for c in codes)
        return list(cached)

    def _apply_action(self, action: int) -> None:
        self._held.state.apply(self._game().table.code(int(action)))
        self._held.cache = {}

    def _action_to_string(self, player: int, action: int) -> str:
        game = self._game()
        return json.dumps(game.maag.action(game.table.code(int(action))).to_dict(), separators=(",", ":"))

    def is_terminal(self) -> bool:
        return self._held.state.is_terminal

    def returns(self) -> list[float]:
        winner = self._held.state.winner
        if winner == 0:
            return [1.0, -1.0]
        if winner == 1:
            return [-1.0, 1.0]
        return [0.0, 0.0]

    def __str__(self) -> str:
        return json.dumps(self._held.state.to_json(), sort_keys=True, separators=(",", ":"))

    def resample_from_infostate(self, player_id: int, probability_sampler: Any = None) -> MaagState:
        """A state drawn from what `player_id` sees here: maag's uniform determinization of
        its observation, seeded by one draw of `probability_sampler` (a callable giving a
        float in [0, 1); None: the OS)."""
        u = float(probability_sampler()) if probability_sampler is not None else \
            int.from_bytes(os.urandom(7), "little") / 2**56
        return self.resample(int(player_id), to_seed(u))

    def resample(self, player: int, seed: int) -> MaagState:
        """The determinization of `player`'s observation with this seed (the same seed, the
        same state). Its OpenSpiel history() starts empty: the position is maag's state."""
        return MaagState(self._game(), self._observation(player).determinize(seed))

    # -- observations ----------------------------------------------------------------------------
    def _observation(self, player: int) -> State:
        key = ("obs", player)
        obs = self._held.cache.get(key)
        if obs is None:
            obs = self._held.cache[key] = self._held.state.observation(player)
        return obs

    def observation_json(self, player: int) -> dict[str, Any]:
        """What `player` sees, in maag's wire JSON."""
        return self._observation(player).to_json()

    def observation_text(self, player: int) -> str:
        key = ("text", player)
        text = self._held.cache.get(key)
        if text is None:
            text = self._held.cache[key] = json.dumps(self.observation_json(player), sort_keys=True,
                                                 separators=(",", ":"))
        return text

    def observation_vector(self, player: int) -> np.ndarray:
        key = ("vector", player)
        vec = self._held.cache.get(key)
        if vec is None:
            vec = self._held.cache[key] = self._game().encoder.encode(self._observation(player))
        return vec


class MaagObserver:
    """OpenSpiel's observer of a maag game: the seat's observation as a vector and as text,
    for the observation and the information state alike (module docstring)."""

    def __init__(self, game: MaagGame) -> None:
        self.tensor = np.zeros(game.encoder.size, np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: MaagState, player: int) -> None:
        self.tensor[:] = state.observation_vector(player)

    def string_from(self, state: MaagState, player: int) -> str:
        return state.observation_text(player)


def _game_class(name: str) -> type[MaagGame]:
    """The class OpenSpiel makes maag_<name> with (called with the parameters alone)."""

    def init(self: MaagGame, params: dict[str, Any] | None = None) -> None:
        MaagGame.__init__(self, name, params)

    return type(f"MaagGame_{name}", (MaagGame,), {"__init__": init, "__module__": __name__})


def register(name: str) -> str | None:
    """Register maag game `name` as maag_<name> (idempotent); its OpenSpiel name, or None
    for a game without an action table."""
    try:
        game_spaces(name)
    except NoActionTable:
        return None
    sn = short_name(name)
    if sn not in {g.short_name for g in pyspiel.registered_games()}:
        pyspiel.register_game(_game_type(name), _game_class(name))
    return sn


GAMES: tuple[str, ...] = tuple(sn for n in registry.names() if (sn := register(n)) is not None)
"""The OpenSpiel names of maag's games, registered on import."""
