"""What a bot author writes against: the abstract `Bot`, and the values it is given
(`GameInfo`, `Observation`, `Limit`) and returns (`TurnResult`). Plain data from the wire:
the SDK needs only maag.protocol, not the C core (a bot that wants the engine's view of an
observation builds it itself, as maag.bots.runner does)."""

from __future__ import annotations

import abc
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Protocol, TypedDict, runtime_checkable

from ._options import Option, parse_settings


@runtime_checkable
class ActionLike(Protocol):
    """Anything with a readable dict form, e.g. a `maag.engine.Action`."""

    def to_dict(self) -> dict[str, Any]: ...


@dataclass(frozen=True, slots=True)
class GameInfo:
    """One game, from its `game_start`."""

    game_id: str
    game: str
    """The game's name, e.g. "heroes"."""
    seat: int
    """This bot's seat: 1 or 2 (seat 1 moves first)."""
    config: Mapping[str, Any]
    time_control: Mapping[str, int | None]
    """Milliseconds: turn_ms, increment_ms, bank_ms, lag_ms (None: unlimited)."""
    opponent: str


@dataclass(frozen=True, slots=True)
class Observation:
    """What the seat sees when it is to act (docs/protocol.md, section 6); `obs["ap"]` reads
    the observation map."""

    game: GameInfo
    data: Mapping[str, Any]
    """The observation map as sent by the server."""
    legal: tuple[dict[str, Any], ...] | None = None
    """The legal actions, if the bot asked for them (`Bot.want_legal`)."""
    groups: tuple[dict[str, Any], ...] | None = None
    """The game's grouped legal actions, if the bot asked for them (`Bot.want_groups`) and the
    game has them: each group a map with `options`, each option a map with `actions` to send
    in that order (conquest: docs/protocol.md section 6)."""

    def __getitem__(self, key: str) -> Any:
        return self.data[key]


@dataclass(frozen=True, slots=True)
class Limit:
    """How much time the bot has for this turn, from `your_turn` and the time control;
    all in milliseconds, None when unknown or unlimited."""

    time_left_ms: int | None = None
    """What is left of this turn's budget."""
    bank_ms: int | None = None
    """The overage bank, usable after time_left_ms."""
    turn_ms: int | None = None
    """The whole budget of a turn."""
    increment_ms: int | None = None
    lag_ms: int | None = None
    """The transport allowance the server grants."""
    received_at: float | None = None
    """`time.monotonic()` when the client read the `your_turn` (its decoding and the bot's
    own work since then count against `time_left_ms`)."""

    def __repr__(self) -> str:
        parts = [f"{f.name}={getattr(self, f.name)!r}" for f in fields(self)
                 if getattr(self, f.name) is not None]
        return f"Limit({', '.join(parts)})"

    def think_ms(self, margin_ms: int = 50, use_bank: bool = False) -> int | None:
        """A safe thinking time from now: what is left (plus the bank if `use_bank`), less
        the time since the `your_turn` was read, less `margin_ms` for transport; None if
        unlimited."""
        if self.time_left_ms is None:
            return None
        total = self.time_left_ms + ((self.bank_ms or 0) if use_bank else 0) - self.elapsed_ms()
        return max(0, int(total - margin_ms))

    def elapsed_ms(self) -> float:
        """Milliseconds since the `your_turn` was read (0 if unknown)."""
        if self.received_at is None:
            return 0.0
        return max(0.0, (time.monotonic() - self.received_at) * 1000.0)


class Info(TypedDict, total=False):
    """Optional statistics of a search. The numbers and texts among them go to the server
    with the turn (`turn.info`: the referee records `iterations` and `time_ms` per turn in
    the game's replay and in `maag match --json`); `pv` only to the bot's log."""

    time_ms: float
    nodes: int
    iterations: int
    depth: int
    score: float
    pv: list[dict[str, Any]]
    string: str


@dataclass(slots=True)
class TurnResult:
    """What `choose_turn` returns: the actions to play now, in order (a whole turn ending
    with the game's end-of-turn action, or its first part: the bot is asked again for the
    rest), or `resigned=True` to give the game up."""

    actions: Sequence[dict[str, Any] | ActionLike] = ()
    info: Info = field(default_factory=lambda: Info())
    resigned: bool = False

    def action_dicts(self) -> list[dict[str, Any]]:
        return [a if isinstance(a, dict) else a.to_dict() for a in self.actions]


@dataclass(frozen=True, slots=True)
class GameRecord:
    """How one game went, from this bot's side."""

    game: GameInfo
    winner: int | None
    """1 or 2; None for a draw or an aborted game (see `aborted`)."""
    reason: str
    replay_id: str | None = None

    @property
    def aborted(self) -> bool:
        """The referee stopped the game (e.g. it shut down): nobody won, nor was it drawn."""
        return self.reason == "aborted"

    @property
    def score(self) -> float | None:
        """1 for a win, 0.5 for a draw, 0 for a loss; None for an aborted game."""
        if self.aborted:
            return None
        return 0.5 if self.winner is None else float(self.winner == self.game.seat)


class Bot(abc.ABC):
    """Subclass this to write a bot: one instance plays one game.

    Class attributes: `name` (shown to opponents unless the client overrides it), `games`
    (the games it can play), `want_legal` (get legal actions in every observation),
    `want_groups` (get the game's grouped legal actions, where it has them),
    `live_events` (hear each of the opponent's actions as it is applied; by default they
    come once its turn ends, in one message, and `on_event` is called for each then, in
    order: a bot thinking only on its own turn is woken once per opponent's turn),
    `options` (its settings, each an `Option`). `self.settings` holds their values.

    `choose_turn` may be `async def` or a plain `def`: a plain one runs in a worker thread,
    so a long search does not stall the connection (pings, other games).
    """

    name: ClassVar[str] = "bot"
    # The SDK runs without the engine (MAAG_SDK_ONLY=1 installs maag.protocol and
    # maag.clients alone, and clients may import protocol only), so it cannot ask the game
    # registry for its default(): the first game of games.def is written here once, and
    # tests/clients/test_sdk_only.py checks that it is still the registry's default.
    games: ClassVar[tuple[str, ...]] = ("heroes",)
    want_legal: ClassVar[bool] = False
    want_groups: ClassVar[bool] = False
    live_events: ClassVar[bool] = False
    options: ClassVar[Sequence[Option]] = ()

    def __init__(self, settings: Mapping[str, Any] | None = None) -> None:
        self.settings: dict[str, Any] = parse_settings(self.options, settings)
        self.game: GameInfo | None = None

    async def on_game_start(self, game: GameInfo) -> None:
        """Called once when the game starts, before any `choose_turn`. Keep it short."""
        self.game = game

    @abc.abstractmethod
    def choose_turn(self, observation: Observation, limit: Limit) -> Any:
        """Return (or, if async, resolve to) a `TurnResult` for the observed position.
        Called at the start of each of the bot's turns and again whenever the turn goes on
        (the previous answer was partial or had an illegal action)."""

    async def on_event(self, kind: str, seat: int, action: dict[str, Any] | None) -> None:
        """Something the opponent did that this seat may see (kind "action", "timeout", ...):
        its actions as they are applied if the bot's `live_events`, else once its turn ends
        (before the bot's next `choose_turn` or the game's end), one call per action."""
        return None

    async def on_result(self, accepted: int, error: str | None, message: str | None) -> None:
        """The server's answer to the last actions sent: how many were applied, and why the
        rest were not (an error code such as "illegal_action")."""
        return None

    async def on_game_over(self, record: GameRecord) -> None:
        """Called once when the game ends."""
        return None
