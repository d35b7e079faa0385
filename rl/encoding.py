"""Fixed-size numeric forms of a game, for learning code: the action table (every action code
a configured game can offer, numbered 0..n-1, and masks over it) and the observation vector
(one seat's observation as a fixed-length array of numbers). Both are game-neutral.

The action table comes from the game's folder: `maag.engine.games.<name>.spaces` defines
`action_codes(game) -> list[int]`, every code a game with that configuration can ever
offer, in a fixed order (a superset of every legal list), and `limit_reached(state_json)`,
whether a finished game was cut by the game's turn, ply or round limit. A game without
that module has no fixed action space (`NoActionTable`).

The observation vector is read from the engine's observation state (the state a seat may
see, `State.observation(seat)`: hidden parts removed by the game's C `observe`), which is a
fixed-size, pointer-free C struct whose layout cffi knows. Every scalar of that struct, in
declaration order (nested structs and arrays flattened, row-major), becomes numbers:

* an unsigned integer of 32 or 64 bits (in these structs, a bit set: squares, territories,
  units) becomes its bits, least significant first, each 0 or 1;
* any other integer or float becomes its value;
* padding bytes between fields are skipped, and so are the fields the game's spaces.py
  names in `NOT_FEATURES` (dotted paths without indices, e.g. "zob" or "types.name"): a
  hash, or numbers that mean nothing outside one process.

The bounds of each number are those of its C type, so the vector has the same length for
every state of a game (whatever the configuration) and is a function of the observation
alone: two states one seat cannot tell apart give that seat the same vector. Values are not
scaled; `ObservationEncoder.names` says which field each position comes from."""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np
from maag.engine import Game, State, registry
from maag.engine.kernels import sizeof, state_type

__all__ = ["ActionTable", "NoActionTable", "ObservationEncoder", "game_spaces"]


class NoActionTable(NotImplementedError):
    """The game's folder has no `spaces.py` with `action_codes` (no fixed action space)."""


def game_spaces(name: str) -> ModuleType:
    """The game's `spaces` module (engine_c/games/<name>/spaces.py); ValueError for an
    unknown game, NoActionTable for a game without one."""
    registry.get(name)
    try:
        module = importlib.import_module(f"maag.engine.games.{name}.spaces")
    except ModuleNotFoundError as e:
        if e.name != f"maag.engine.games.{name}.spaces":
            raise
        raise NoActionTable(f"game {name!r} has no fixed action table: its folder needs a spaces.py "
                            "with action_codes(game) and limit_reached(state_json)") from None
    if not callable(getattr(module, "action_codes", None)):
        raise NoActionTable(f"maag.engine.games.{name}.spaces defines no action_codes(game)")
    return module


class ActionTable:
    """Every action code of a configured game, numbered: index i is `codes[i]`."""

    def __init__(self, game: Game) -> None:
        self.game = game
        codes = [int(c) for c in game_spaces(game.name).action_codes(game)]
        self.codes = np.asarray(codes, dtype=np.uint32)
        self._index = {c: i for i, c in enumerate(codes)}
        if len(self._index) != len(codes):
            raise RuntimeError(f"{game.name}: spaces.action_codes lists a code twice")

    def __len__(self) -> int:
        return len(self.codes)

    def code(self, index: int) -> int:
        """The action code at `index` (IndexError outside 0..n-1)."""
        if not 0 <= index < len(self.codes):
            raise IndexError(f"action index {index} is outside 0..{len(self.codes) - 1}")
        return int(self.codes[index])

    def index(self, code: int) -> int:
        """The index of an action code; KeyError for a code the table lacks."""
        try:
            return self._index[code]
        except KeyError:
            raise KeyError(f"{self.game.name}: action code {code} ({self.game.action(code)}) is not in the "
                           "game's action table (spaces.action_codes must list every code)") from None

    def mask(self, legal: Iterable[int]) -> np.ndarray:
        """1 at the index of each code in `legal`, 0 elsewhere (int8)."""
        out = np.zeros(len(self.codes), dtype=np.int8)
        idx = [self.index(c) for c in legal]
        if idx:
            out[idx] = 1
        return out


@dataclass(frozen=True)
class _Run:
    """`count` consecutive scalars of one C type at `offset` of the struct."""

    offset: int
    dtype: np.dtype[Any]
    count: int
    bits: bool
    name: str


def _scalar_dtype(t: Any) -> np.dtype[Any]:
    """The numpy dtype of a cffi primitive or enum type."""
    size = sizeof(t)
    if t.kind == "enum":
        return np.dtype(f"=i{size}")
    name = t.cname
    if name in ("float", "double", "long double"):
        return np.dtype(f"=f{size}")
    unsigned = name.startswith(("u", "unsigned")) or name in ("_Bool", "char", "size_t")
    return np.dtype(f"={'u' if unsigned else 'i'}{size}")


def _layout(t: Any, offset: int, name: str, out: list[_Run], skip: frozenset[str] = frozenset()) -> None:
    if t.kind == "struct":
        for field, f in t.fields:
            path = f"{name}.{field}" if name else field
            if re.sub(r"\[\d+\]", "", path) in skip:
                continue
            if f.bitsize not in (-1, None) and f.bitsize >= 0:
                raise TypeError(f"{path}: bit fields are not supported")
            _layout(f.type, offset + f.offset, path, out, skip)
    elif t.kind == "array":
        item, n = t.item, t.length
        if item.kind in ("primitive", "enum"):
            dt = _scalar_dtype(item)
            out.append(_Run(offset, dt, n, dt.kind == "u" and dt.itemsize >= 4, name))
        else:
            step = sizeof(item)
            for i in range(n):
                _layout(item, offset + i * step, f"{name}[{i}]", out, skip)
    elif t.kind in ("primitive", "enum"):
        dt = _scalar_dtype(t)
        out.append(_Run(offset, dt, 1, dt.kind == "u" and dt.itemsize >= 4, name))
    else:
        raise TypeError(f"{name}: a {t.kind} field has no numeric form")


@dataclass(frozen=True)
class _Gather:
    """Every scalar of one C type: the bytes of each (rows of `byte_index`) and where its
    numbers go in the vector (one position each, or one per bit)."""

    dtype: np.dtype[Any]
    bits: bool
    byte_index: np.ndarray
    positions: np.ndarray


def _gathers(runs: list[_Run]) -> list[_Gather]:
    found: dict[tuple[str, bool], tuple[list[int], list[int]]] = {}
    at = 0
    for r in runs:
        size = r.dtype.itemsize
        offsets, positions = found.setdefault((r.dtype.str, r.bits), ([], []))
        offsets += [r.offset + i * size for i in range(r.count)]
        width = r.count * size * 8 if r.bits else r.count
        positions += range(at, at + width)
        at += width
    out = []
    for (dt, bits), (offsets, positions) in found.items():
        dtype = np.dtype(dt)
        index = np.asarray(offsets, dtype=np.intp)[:, None] + np.arange(dtype.itemsize, dtype=np.intp)
        out.append(_Gather(dtype, bits, index, np.asarray(positions, dtype=np.intp)))
    return out


class ObservationEncoder:
    """One seat's observation of a game as a fixed-length float32 vector (module docstring)."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.ctype = state_type(game)
        self.skipped = frozenset(getattr(game_spaces(game.name), "NOT_FEATURES", ()))
        every: list[_Run] = []
        _layout(self.ctype, 0, "", every)
        fields = {re.sub(r"\[\d+\]", "", r.name) for r in every}
        unknown = [f for f in self.skipped if not any(n == f or n.startswith(f + ".") for n in fields)]
        if unknown:
            raise RuntimeError(f"{game.name}: NOT_FEATURES names no field of {game.spec.state_ctype}: "
                               f"{', '.join(sorted(unknown))}")
        runs: list[_Run] = []
        _layout(self.ctype, 0, "", runs, self.skipped)
        self.runs = runs  # the scalars read, in vector order
        low: list[np.ndarray] = []
        high: list[np.ndarray] = []
        names: list[str] = []
        for r in runs:
            width = r.count * r.dtype.itemsize * 8 if r.bits else r.count
            if r.bits:
                lo, hi = 0.0, 1.0
                names += [f"{r.name}[{i // (r.dtype.itemsize * 8)}].bit{i % (r.dtype.itemsize * 8)}"
                          if r.count > 1 else f"{r.name}.bit{i}" for i in range(width)]
            else:
                info = np.finfo(r.dtype) if r.dtype.kind == "f" else np.iinfo(r.dtype)
                lo, hi = float(info.min), float(info.max)
                names += [f"{r.name}[{i}]" if r.count > 1 else r.name for i in range(width)]
            low.append(np.full(width, lo, dtype=np.float32))
            high.append(np.full(width, hi, dtype=np.float32))
        self.low = np.concatenate(low)
        self.high = np.concatenate(high)
        self.names: list[str] = names
        self.size = len(self.low)
        self._gathers = _gathers(runs)

    def encode_bytes(self, raw: bytes) -> np.ndarray:
        """The vector of one observation state's bytes (`State.to_bytes()`)."""
        if len(raw) != self.game.vt.state_size:
            raise ValueError(f"{self.game.name}: a state has {self.game.vt.state_size} bytes, not {len(raw)}")
        data = np.frombuffer(raw, dtype=np.uint8)
        out = np.empty(self.size, dtype=np.float32)
        for g in self._gathers:  # one gather per C type: a few numpy calls, not one per field
            values = data[g.byte_index].view(g.dtype).reshape(-1)
            if g.bits:
                out[g.positions] = np.unpackbits(values.astype(g.dtype.newbyteorder("<")).view(np.uint8),
                                                 bitorder="little")
            else:
                out[g.positions] = values
        return out

    def encode(self, observation: State) -> np.ndarray:
        """The vector of an observation state (`State.observation(seat)`); ValueError for a
        full state, which would show hidden parts."""
        if observation.observer is None:
            raise ValueError("encode an observation (State.observation(seat)), not a full state")
        return self.encode_bytes(observation.to_bytes())
