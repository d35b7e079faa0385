"""The generic Python face of the C core: `Game` (a configured game), `State` (one position,
with the RNG beside it) and `Action` (an integer code with a readable dict form).
Every game plugs in through its C interface record (`mg_game_vt`) and its registry entry
(`maag.engine.registry`: configuration, action dicts, reading JSON); nothing here names a game.

A state has one serializer: the game's C `write_msgpack`. Its bytes are what the referee
sends, and `State.to_json` is those bytes decoded, so no second writer of a state's keys
exists to drift from it (tests/engine/test_one_serializer.py)."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgpack

from . import registry
from ._lowlevel import ConfigError, check, errstr, ffi, lib


@dataclass(frozen=True, slots=True)
class Action:
    """One action: `code` is the compact integer form; `to_dict()` the readable one."""

    code: int
    game: str

    def to_dict(self) -> dict[str, Any]:
        return registry.get(self.game).action_to_dict(self.code)

    def __str__(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"))


# Per game (by name: an action's map depends on its code alone), each action's map in
# msgpack, made once per process, and the reverse (see `Game.action_msgpack`).
_ACTION_MSGPACK: dict[str, dict[int, bytes]] = {}
_ACTION_CODES: dict[str, dict[bytes, int]] = {}
# Per game, the mg_codebytes every thread's table is copied from (under the lock: Games
# live in several threads), so that a game's first legal lists find their codes.
_CODEBYTES: dict[str, Any] = {}
_CODEBYTES_LOCK = threading.Lock()


class _Kit:
    """What the C writers of msgpack use, one per thread (a table or a buffer is one
    thread's at a time), shared by every Game of the thread: a referee's games all live in
    its event loop's thread, and a copy per Game (a heroes table grows to hundreds of KB,
    read at random by every legal list) made each message touch memory no cache held.
    (A plain object reached once per call through `_kit()`: each attribute read of a
    threading.local looks the thread up again.)"""

    __slots__ = ("tables", "missing", "n_missing", "wire", "wire_buf", "cap", "chars", "plan", "outs")

    def __init__(self) -> None:
        self.tables: dict[str, Any] = {}  # game name -> its mg_codebytes (legal lists)
        self.missing = ffi.new("uint32_t[]", lib.MG_MAX_ACTIONS)  # the codes a table lacked
        self.n_missing = ffi.new("int *")
        # `State.step_plan`'s: a plan's codes (a longer plan gets an array of its own) and the
        # flags and status it returns.
        self.plan = ffi.new("mg_action[]", _PLAN_CODES)
        self.outs = ffi.new("int[]", 2)
        self.wire = ffi.new("mg_wire *")  # what the writers write into, grown as needed
        self.grow(4096)

    def table(self, name: str) -> Any:
        """This thread's table of game `name`, first copied from the game's shared one."""
        t = self.tables.get(name)
        if t is None:
            with _CODEBYTES_LOCK:
                master = _CODEBYTES.get(name)
                if master is None:
                    master = _CODEBYTES[name] = _owned(lib.mg_codebytes_new())
                t = self.tables[name] = _owned(lib.mg_codebytes_clone(master))
        return t

    def grow(self, n: int) -> None:
        """A buffer of at least `n` bytes for the writers."""
        self.wire_buf = ffi.new("uint8_t[]", n)
        self.wire.buf, self.wire.cap = self.wire_buf, n
        self.cap = n
        self.chars = ffi.cast("char *", self.wire_buf)  # (ffi.unpack of it: bytes, in one copy)


_PLAN_CODES = 1024
_LOCAL = threading.local()


def _kit() -> _Kit:
    """This thread's `_Kit`, made on its first use."""
    k: _Kit | None = getattr(_LOCAL, "kit", None)
    if k is None:
        k = _LOCAL.kit = _Kit()
    return k


def _owned(t: Any) -> Any:
    """An mg_codebytes freed with its Python object (MemoryError if there is none)."""
    if t == ffi.NULL:
        raise MemoryError("mg_codebytes")
    return ffi.gc(t, lib.mg_codebytes_free)


class Game:
    """A registered game with its configuration, e.g. ``Game("heroes", {"map": "a-small"})``
    (ValueError for an unknown game or option)."""

    def __init__(self, name: str, config: dict[str, Any] | None = None) -> None:
        self.name = name
        self.spec = registry.get(name)
        self.vt = lib.mg_game_find(name.encode())
        if self.vt == ffi.NULL:
            raise RuntimeError(f"game {name!r} is in games.def but not in the compiled core: reinstall maag")
        if self.vt.version < 7 or self.vt.write_msgpack == ffi.NULL:
            # (the C writer is a state's only serializer: without it there is no JSON form)
            raise RuntimeError(f"game {name!r} has no C state writer (mg_game_vt.write_msgpack, version 7)")
        self.config: dict[str, Any] = self.spec.make_config(dict(config or {}))
        self._cfg = ffi.new("char[]", self.vt.config_size)
        self.spec.fill_config(self.config, self._cfg)
        self._names_table: tuple[int, list[Any], Any] | None = None
        self._packed = _ACTION_MSGPACK.setdefault(name, {})
        self._codes = _ACTION_CODES.setdefault(name, {})
        self.code_of_msgpack: Callable[[bytes], int | None] = self._codes.get
        """The code whose map packs to `data` (`action_msgpack`), if it has been packed in this
        process; None otherwise (parse the map with `action`). (The dict's own `get`: the
        referee looks up every action a seat sends, and a method was a Python frame each.)"""
        self._scratch: Any = None  # an observation's buffer (State.observation_msgpack)

    def __repr__(self) -> str:
        return f"Game({self.name!r}, {self.config!r})"

    def _write(self, buf: Any) -> Any:
        """The game's C writer's msgpack of the state (or observation) in `buf`, in this
        thread's buffer: a view valid until the thread's next write."""
        vt = self.vt
        local = _kit()
        w = local.wire
        names = self._names()
        w.len = 0
        vt.write_msgpack(buf, names, w)
        if w.len > w.cap:  # too small: grow to what it needs and write again
            local.grow(w.len)
            w.len = 0
            vt.write_msgpack(buf, names, w)
        return ffi.buffer(w.buf, w.len)

    def msgpack_of(self, buf: Any) -> bytes:
        """The msgpack form of the state (or observation) in `buf`: see `State.to_msgpack`
        (written into this thread's buffer, then copied out)."""
        return self._write(buf)[:]

    def json_of(self, buf: Any) -> dict[str, Any]:
        """The JSON form of the state (or observation) in `buf`: `msgpack_of`'s bytes decoded,
        straight from this thread's buffer (see `State.to_json`)."""
        out: dict[str, Any] = msgpack.unpackb(self._write(buf), raw=False, strict_map_key=True, use_list=True)
        return out

    def action_msgpack(self, code: int) -> bytes:
        """The msgpack form (packb with use_bin_type) of the action's map (`Action.to_dict`),
        made once per process."""
        b = self._packed.get(code)
        if b is None:
            b = self._packed[code] = msgpack.packb(self.spec.action_to_dict(code), use_bin_type=True)
            self._codes.setdefault(b, code)
        return b

    def legal_msgpack(self, buf: Any) -> bytes:
        """The legal actions of the state in `buf` as msgpack: packb([a.to_dict() for a in
        legal]), written in one C call from each code's `action_msgpack` (mg_wire.h)."""
        return self._wire_call(lib.mg_legal_msgpack, self.vt, buf, _kit().table(self.name))

    def prompt_msgpack(self, buf: Any, seat: int, head: bytes, mid: bytes, tail: bytes, legal: bool) -> bytes:
        """See `State.prompt_msgpack`. (The referee's every act: one C call written out, the
        frame copied out once; `_wire_call` when the table lacked a code or the buffer was
        too small.)"""
        vt = self.vt
        scratch = self._scratch
        if scratch is None:
            scratch = self._scratch = ffi.new("char[]", vt.state_size)
        local = _kit()
        table = (local.tables.get(self.name) or local.table(self.name)) if legal else ffi.NULL
        names = ffi.NULL if self.spec.wire_names is None else self._names()
        n = lib.mg_prompt_msgpack(vt, buf, seat, scratch, names, head, len(head), mid, len(mid), tail,
                                  len(tail), table, local.wire, local.missing, local.n_missing)
        if n >= 0:  # (whole: every code's map known, the buffer large enough)
            out: bytes = ffi.unpack(local.chars, n)
            return out
        return self._wire_call(lib.mg_prompt_msgpack, vt, buf, seat, scratch, names, head, len(head),
                               mid, len(mid), tail, len(tail), table, called=True)

    def _wire_call(self, fn: Any, *args: Any, called: bool = False) -> bytes:
        """The bytes `fn(*args, wire, missing, n_missing)` writes (mg_legal_msgpack and
        mg_prompt_msgpack) in this thread's buffer: called again once the codes its table
        lacked are added (to this thread's table and the game's shared one), or with a
        larger buffer, until whole. `called`: the caller made the first call."""
        local = _kit()
        w = local.wire
        while True:
            if not called:
                w.len = 0
                fn(*args, w, local.missing, local.n_missing)
            called = False
            k = local.n_missing[0]
            if k:
                codes = ffi.unpack(local.missing, k)
                with _CODEBYTES_LOCK:
                    master = _CODEBYTES[self.name]
                    for code in codes:
                        b = self.action_msgpack(code)
                        for table in (local.tables[self.name], master):
                            if lib.mg_codebytes_put(table, code, b, len(b)) != 0:
                                raise MemoryError("mg_codebytes_put")
                continue
            if w.len > w.cap:
                local.grow(w.len)
                continue
            return ffi.buffer(w.buf, w.len)[:]

    def _names(self) -> Any:
        """The C name table of a game whose names live in its codec (`GameSpec.wire_names`)."""
        source = self.spec.wire_names
        if source is None:
            return ffi.NULL
        names = source()
        if self._names_table is None or self._names_table[0] != len(names):
            keep = [ffi.new("char[]", n.encode()) for n in names]
            self._names_table = (len(names), keep, ffi.new("const char *[]", keep))
        return self._names_table[2]

    def new_state(self, seed: int | None = None) -> State:
        """A new game. `seed` fixes the deal and any random draws; None takes one from the OS."""
        if seed is None:
            seed = int.from_bytes(os.urandom(8), "little")
        st = State(self)
        err = ffi.new("char[]", lib.MG_ERR_LEN)
        rc = self.vt.init(st._buf, self._cfg, seed & (2**64 - 1), err)
        check(self.vt, rc, ffi.string(err).decode() or None)
        lib.mg_rng_seed(st._rng, (seed * 0x9E3779B97F4A7C15 + 1) & (2**64 - 1))
        return st

    def state_from_json(self, obj: dict[str, Any] | str, rng_seed: int | None = None) -> State:
        """A full state from its JSON form (dict or text); StateError if it is inconsistent."""
        data = json.loads(obj) if isinstance(obj, str) else obj
        st = State(self)
        self.spec.state_from_json(data, self.config, st._buf)
        if rng_seed is None:
            rng_seed = int.from_bytes(os.urandom(8), "little")
        lib.mg_rng_seed(st._rng, rng_seed & (2**64 - 1))
        return st

    def action(self, d: dict[str, Any] | str | int) -> Action:
        """An Action from its dict form, JSON text or integer code; ValueError if it is none
        of these (a code outside 0..2**32-1, a value that is not an object)."""
        if isinstance(d, int) and not isinstance(d, bool):
            if not 0 <= d < 2**32:
                raise ValueError(f"an action code is an integer in 0..2**32-1, not {d}")
            return Action(d, self.name)
        obj = json.loads(d) if isinstance(d, str) else d
        if not isinstance(obj, dict):
            raise ValueError(f"an action is a JSON object with a 'type', not {obj!r}"[:200])
        return Action(self.spec.action_from_dict(obj), self.name)


class State:
    """One position of a game, with the RNG that supplies its chance events beside it."""

    __slots__ = ("game", "_buf", "_rng")

    def __init__(self, game: Game) -> None:
        self.game = game
        self._buf = ffi.new("char[]", game.vt.state_size)
        self._rng = ffi.new("mg_rng *")

    # -- queries -------------------------------------------------------------------------
    @property
    def current_player(self) -> int:
        """The player to act, 0 or 1."""
        return int(self.game.vt.current(self._buf))

    @property
    def is_terminal(self) -> bool:
        return bool(self.game.vt.terminal(self._buf, ffi.NULL))

    @property
    def winner(self) -> int | None:
        """0 or 1 once the game is won, -1 for a draw, None while it goes on."""
        w = ffi.new("int *")
        if not self.game.vt.terminal(self._buf, w):
            return None
        return int(w[0])

    def legal_codes(self) -> list[int]:
        buf = ffi.new("mg_action[]", lib.MG_MAX_ACTIONS)
        n = self.game.vt.legal(self._buf, buf)
        return list(ffi.unpack(buf, n))

    def legal_actions(self) -> list[Action]:
        """Legal actions in the game's documented order."""
        return [Action(c, self.game.name) for c in self.legal_codes()]

    def is_legal(self, action: Action | int) -> bool:
        return bool(self.game.vt.check(self._buf, _code(action)) == lib.MG_OK)

    def evaluate(self, player: int) -> float:
        return float(self.game.vt.evaluate(self._buf, player))

    def features(self, player: int) -> list[float]:
        """The game's feature vector of this state from `player`'s view (mg_game_vt.features:
        what that player may see, for learned evaluations; heroes documents its entries in
        mg_heroes.h). ConfigError for a game without one."""
        vt = self.game.vt
        if vt.version < 6 or vt.n_features <= 0 or vt.features == ffi.NULL:
            raise ConfigError(lib.MG_ERR_CONFIG, f"the game {self.game.name!r} has no feature vector")
        if player not in (0, 1):
            raise ConfigError(lib.MG_ERR_CONFIG, f"player must be 0 or 1, not {player!r}")
        out = ffi.new("double[]", vt.n_features)
        vt.features(self._buf, player, out)
        return list(ffi.unpack(out, vt.n_features))

    def rate(self, action: Action | int) -> int:
        """The game's rating of an action (higher first); 0 for a game that rates none."""
        if self.game.vt.rate == ffi.NULL:
            return 0
        return int(self.game.vt.rate(self._buf, _code(action)))

    def prune(self, actions: list[Action]) -> list[Action]:
        """`actions` without the dominated ones, in order (a game without a pruner keeps all)."""
        if self.game.vt.prune == ffi.NULL:
            return list(actions)
        buf = ffi.new("mg_action[]", [a.code for a in actions] or [0])
        n = self.game.vt.prune(self._buf, buf, len(actions))
        return [Action(c, self.game.name) for c in ffi.unpack(buf, n)]

    def hash(self) -> int:
        return int(self.game.vt.hash(self._buf))

    # -- changes -------------------------------------------------------------------------
    def apply(self, action: Action | int | dict[str, Any]) -> None:
        """Apply one action. An illegal one raises IllegalActionError (naming the rule it
        breaks) or GameOverError, and leaves the state unchanged."""
        if isinstance(action, dict):
            action = self.game.action(action)
        check(self.game.vt, self.game.vt.apply(self._buf, _code(action), self._rng))

    def apply_code(self, code: int) -> None:
        """`apply` of an action code, without `apply`'s conversions (the referee's hot path)."""
        rc = self.game.vt.apply(self._buf, code, self._rng)
        if rc != _OK:
            check(self.game.vt, rc)

    # `step`'s flags: mg_game.h's MG_STEP_*, read from the core (not a second copy of them)
    STEP_END_TURN: int = lib.MG_STEP_END_TURN
    STEP_TERMINAL: int = lib.MG_STEP_TERMINAL
    STEP_CURRENT_1: int = lib.MG_STEP_CURRENT_1
    STEP_NOT_TO_MOVE: int = lib.MG_STEP_NOT_TO_MOVE

    def step(self, seat: int, code: int) -> int:
        """`apply_code` of `code` by `seat`, and what followed, in one C call (mg_step: the
        referee's act, one crossing instead of four): STEP_NOT_TO_MOVE if `seat` is not the
        player to act (nothing applied); else the flags STEP_END_TURN (`code` ended the
        turn), STEP_TERMINAL (the game is over) and STEP_CURRENT_1 (player 1 acts next,
        else player 0). An illegal action raises as `apply` does, the state unchanged."""
        r: int = lib.mg_step(self.game.vt, self._buf, seat, code, self._rng)
        if r < 0:
            check(self.game.vt, -r)
        return r

    def step_plan(self, seat: int, codes: list[int]) -> tuple[int, int, int]:
        """`step` of each of `codes` (the actions of one message by `seat`) in order, in one
        C call (mg_step_plan): it stops after the first that ends the turn or the game, or
        before the first that is not the seat's to play or cannot be applied. (applied, flags,
        status): how many were applied, the flags `step` gave the last of them (0 if none;
        STEP_NOT_TO_MOVE if the first was not the seat's), and 0 or the status code of the
        action at index `applied` that could not be (`check` raises its error), the state as
        it was before that action."""
        k = _kit()
        n = len(codes)
        plan = k.plan if n <= _PLAN_CODES else ffi.new("mg_action[]", n)
        plan[0:n] = codes
        outs = k.outs
        applied: int = lib.mg_step_plan(self.game.vt, self._buf, seat, plan, n, self._rng, outs, outs + 1)
        return applied, outs[0], outs[1]

    def check(self, status: int) -> None:
        """Raise the error of a status code `step_plan` returned, as `apply` raises it (none for 0)."""
        if status:
            check(self.game.vt, status)

    def clone(self) -> State:
        other = State(self.game)
        ffi.memmove(other._buf, self._buf, self.game.vt.state_size)
        ffi.memmove(other._rng, self._rng, ffi.sizeof("mg_rng"))
        return other

    @property
    def observer(self) -> int | None:
        """The seat whose observation this is, or None for a full state."""
        o = int(self.game.vt.observer(self._buf))
        return None if o < 0 else o

    def observation(self, seat: int) -> State:
        """What `seat` may see: the state with its hidden parts removed (an observation state)."""
        if seat not in (0, 1):
            raise ValueError("seat must be 0 or 1")
        obs = State(self.game)
        self.game.vt.observe(self._buf, seat, obs._buf)
        return obs

    def determinize(self, seed: int) -> State:
        """A full state sampled from this observation (a full state is returned as a copy)."""
        out = State(self.game)
        rng = ffi.new("mg_rng *")
        lib.mg_rng_seed(rng, seed & (2**64 - 1))
        self.game.vt.determinize(self._buf, rng, out._buf)
        lib.mg_rng_seed(out._rng, (seed ^ 0x5DEECE66D) & (2**64 - 1))
        return out

    def random_playout(self, max_actions: int = 1_000_000) -> int:
        """Play uniformly random actions to the end (END_TURN only when nothing else is
        legal); returns the number of actions applied."""
        return int(lib.mg_random_playout(self.game.vt, self._buf, self._rng, max_actions))

    def seed_rng(self, seed: int) -> None:
        lib.mg_rng_seed(self._rng, seed & (2**64 - 1))

    # -- forms ---------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """The JSON form (the conformance format, plus each game's own keys; an observation's
        has its observer's view): `to_msgpack()` decoded, so the form a watcher, a replay or a
        tool reads is the very one the referee sends a bot, written by one serializer."""
        return self.game.json_of(self._buf)

    def to_msgpack(self) -> bytes:
        """The state as msgpack, the form the referee sends: written by the game's C
        `write_msgpack` (its only serializer) with no Python object in between, each value in
        its smallest form (the bytes msgpack-python's packb makes of `to_json()`)."""
        return self.game.msgpack_of(self._buf)

    def legal_msgpack(self) -> bytes:
        """The legal actions' maps as one msgpack list (`Game.legal_msgpack`), what the
        referee sends in `your_turn.legal`."""
        return self.game.legal_msgpack(self._buf)

    def prompt_msgpack(self, seat: int, head: bytes, mid: bytes, tail: bytes, legal: bool) -> bytes:
        """A length-prefixed frame around `seat`'s observation, in one C call (the referee's
        `your_turn`): the 4-byte big-endian length of the rest, then `head`,
        `observation_msgpack(seat)`, `mid`, `legal_msgpack()` if `legal`, `tail`."""
        if seat not in (0, 1):
            raise ValueError("seat must be 0 or 1")
        return self.game.prompt_msgpack(self._buf, seat, head, mid, tail, legal)

    def observation_msgpack(self, seat: int) -> bytes:
        """`observation(seat).to_msgpack()`, through one scratch observation per Game (what the
        referee sends in `your_turn.observation`; no State is made)."""
        if seat not in (0, 1):
            raise ValueError("seat must be 0 or 1")
        game = self.game
        scratch = game._scratch
        if scratch is None:
            scratch = game._scratch = ffi.new("char[]", game.vt.state_size)
        game.vt.observe(self._buf, seat, scratch)
        return game.msgpack_of(scratch)

    def to_bytes(self) -> bytes:
        return bytes(ffi.buffer(self._buf, self.game.vt.state_size))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, State) and other.game.name == self.game.name and \
            self.to_bytes() == other.to_bytes()

    def __hash__(self) -> int:
        return self.hash()

    def __repr__(self) -> str:
        return f"<State {self.game.name} {json.dumps(self.to_json(), separators=(',', ':'))[:120]}...>"

    def error_text(self, code: int) -> str:
        return errstr(self.game.vt, code)

    @property
    def cdata(self) -> Any:
        """The raw C state (for the game's own struct type)."""
        return ffi.cast(self.game.spec.state_ctype + " *", self._buf)


_OK = lib.MG_OK


def _code(action: Action | int) -> int:
    return action if isinstance(action, int) else action.code
