"""A game's actions as the referee handles them: the code of each action a seat sends (its
map packed in C and looked up, the game's parser for the rest), the readable and public
forms of a code (made once per game and code, shared by every session of the game), and the
action log with each entry's JSON written once (`log_json`)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import msgpack
from maag.engine import Action, Game
from maag.protocol import is_action

__all__ = ["ActionLog", "action_dicts", "public_msgpacks", "action_jsons", "now_ms", "us_of", "ms_text"]

_ACTION_DICTS: dict[str, dict[int, dict[str, Any]]] = {}
_MAX_ACTION_CODES = 1 << 16  # action maps a bot sent in other forms, remembered per game


def action_dicts(game: str) -> dict[int, dict[str, Any]]:
    """Per game: each action code's readable map (`ActionLog._dict`)."""
    return _ACTION_DICTS.setdefault(game, {})


_PUBLIC_MSGPACK: dict[str, dict[int, bytes]] = {}  # per game and code: ActionLog.public_msgpack


def public_msgpacks(game: str) -> dict[int, bytes]:
    """Per game: what the opponent sees of each action code, packed (`public_msgpack`)."""
    return _PUBLIC_MSGPACK.setdefault(game, {})


_ACTION_JSON: dict[str, dict[int, str]] = {}  # per game and code: the action map's JSON (the log's)


def action_jsons(game: str) -> dict[int, str]:
    """Per game: each action code's map as the log's JSON writes it."""
    return _ACTION_JSON.setdefault(game, {})


def _entry_json(entry: dict[str, Any]) -> str:
    """A log entry as `log_json` writes it (and json.dumps of the log would)."""
    return json.dumps(entry, separators=(",", ":"))


def now_ms(t: float) -> float:
    return t * 1000.0


def us_of(ms: float) -> int:
    """`ms` milliseconds (finite, at least 0) to the nearest microsecond, as the log keeps
    its clock stamps (`ActionLog._log_entry`)."""
    return int(ms * 1000.0 + 0.5)


_MS_TEXT_MAX = 10**15  # (below it, `us / 1000` has at most 15 digits: its repr is these digits)


_FRACTIONS = tuple("." + (f"{r:03d}".rstrip("0") or "0") for r in range(1000))
"""The text after the point of `n + r / 1000` for each r, as `repr` writes it."""


def ms_text(us: int) -> str:
    """`repr(us / 1000)` (the JSON json.dumps writes of the log's milliseconds), from the
    integer's digits: the shortest repr of a float that is a decimal of at most 15
    significant digits is that decimal (tests/server/test_log_json.py checks it), and finding
    it from the float is a dtoa's work, the costliest step of a log entry otherwise."""
    if not 0 <= us < _MS_TEXT_MAX:
        return repr(us / 1000.0)
    q, r = divmod(us, 1000)
    return f"{q}{_FRACTIONS[r]}"


class ActionLog:
    """The action-code half of a `GameSession` (its base class: the session sets these
    attributes up in its constructor)."""

    game: Game
    _public: Callable[[dict[str, Any]], dict[str, Any]]   # what the opponent sees of an action
    _dicts: dict[int, dict[str, Any]]
    _other_forms: dict[bytes, int]  # an action map's bytes -> code, when not the game's
    _pack_key: Callable[[Any], bytes]
    _public_packed: dict[int, bytes]
    _action_text: dict[int, str]
    log: list[dict[str, Any]]
    _log_text: list[str]

    def codes_of(self, keys: Sequence[bytes]) -> list[int] | None:
        """The codes of actions given by their maps' msgpack bytes (`Connection.plain`'s), what
        `_code` finds for the maps a message with these bytes holds; None if one of them is
        no map a message may hold in its smallest form, or no action of this game (`submit`
        then reads the message, and says what is wrong)."""
        code_of = self.game.code_of_msgpack
        out = []
        for k in keys:
            c = code_of(k)
            if c is None:
                c = self._other_forms.get(k)
            if c is None:
                c = self._new_code(k)
                if c is None:
                    return None
            out.append(c)
        return out

    def _new_code(self, key: bytes) -> int | None:
        """`codes_of` for a map the game has not packed yet (bots that send whole turns ask
        for no legal list, which would have packed theirs): parsed as `_code` parses it."""
        try:
            raw = msgpack.unpackb(key, raw=False, strict_map_key=True, use_list=True)
            if not is_action(raw) or self._pack_key(raw) != key:
                return None
            return self._code(raw)
        except Exception:  # (not an action: the general path says why)
            return None

    def _code(self, raw: dict[str, Any] | Action) -> int:
        """The code of an action of a message (ValueError if it is none)."""
        if isinstance(raw, Action):
            return raw.code
        if not isinstance(raw, dict):
            raise ValueError("an action must be a map with a 'type' field")
        # Bots send back the maps of the legal list as they got them: packing one (in C) and
        # looking its bytes up replaces the game's parser (in Python) for almost every action.
        try:
            key = self._pack_key(raw)
        except (TypeError, ValueError, OverflowError):  # (not JSON data: the parser says why)
            return self.game.action(raw).code
        code = self.game.code_of_msgpack(key)
        if code is None:
            code = self._other_forms.get(key)
            if code is None:
                code = self.game.action(raw).code
                # Its packed map is known from now on (its code's first packing), and the
                # form the bot used too if it is another (the parser is a function of the map).
                if self.game.action_msgpack(code) != key and len(self._other_forms) < _MAX_ACTION_CODES:
                    self._other_forms[key] = code
        return code

    def _dict(self, code: int) -> dict[str, Any]:
        """The readable form of an action code (cached per game: the same objects are
        shared by messages and the log, and never modified)."""
        d = self._dicts.get(code)
        if d is None:
            d = self._dicts[code] = self.game.action(code).to_dict()
        return d

    def public_map(self, code: int) -> dict[str, Any]:
        """What the other seat sees of action `code` (its `event`'s action)."""
        return self._public(self._dict(code))

    def public_msgpack(self, code: int) -> bytes:
        """The msgpack bytes of what the other seat sees of action `code` (its `event`'s
        action; made once per game and code)."""
        b = self._public_packed.get(code)
        if b is None:
            b = self._public_packed[code] = self._pack_key(self._public(self._dict(code)))
        return b

    def _log_entry(self, seat: int, code: int, t_us: int, think_us: int | None,
                   info: dict[str, Any] | None, h: int | None) -> None:
        """Log action `code` of `seat` at `t_us` microseconds since the start, with the seat's
        thinking time (`think_us`, microseconds) for the first action of a message, its `info`
        if any and the state's hash after an end_turn. The entry holds milliseconds to the
        microsecond (`us_ms`); its JSON (`log_json`) is written out here: without json.dumps's
        walk, the action's map encoded once per game and code, the figures as json writes
        them but from the integers (`ms_text`: a float's shortest repr is this run's costliest
        step otherwise)."""
        d = self._dicts.get(code) or self._dict(code)
        entry: dict[str, Any]
        t_ms = t_us / 1000.0
        if think_us is not None:  # (the first action of a message: most entries, one map made at once)
            entry = {"seat": seat, "action": d, "t_ms": t_ms, "think_ms": think_us / 1000.0}
        else:
            entry = {"seat": seat, "action": d, "t_ms": t_ms}
        if info:
            entry["info"] = info
        if h is not None:
            entry["hash"] = h
        log, text = self.log, self._log_text
        log.append(entry)
        if len(text) != len(log) - 1:
            return  # (encoded later by `log_json`)
        a = self._action_text.get(code)
        if a is None:
            a = self._action_text[code] = json.dumps(d, separators=(",", ":"))
        if think_us is not None:
            out = f'{{"seat":{seat},"action":{a},"t_ms":{ms_text(t_us)},"think_ms":{ms_text(think_us)}'
        else:
            out = f'{{"seat":{seat},"action":{a},"t_ms":{ms_text(t_us)}'
        if info:
            out += ',"info":' + json.dumps(info, separators=(",", ":"))
        text.append(out + (f',"hash":{h}}}' if h is not None else "}"))

    def _log_plan(self, seat: int, codes: Sequence[int], t_us: int, think_us: int,
                  info: dict[str, Any] | None, h: int | None) -> None:
        """`_log_entry` of each of `codes`, the actions of one message of `seat` at `t_us`: the
        first with the seat's thinking time and `info`, the last with the state's hash `h` (if
        not None: the plan ended the turn). The same entries and JSON, the parts every entry of
        a plan shares written once (a `turn` logs five actions or so)."""
        n = len(codes)
        self._log_entry(seat, codes[0], t_us, think_us, info, h if n == 1 else None)
        if n == 1:
            return
        log, text = self.log, self._log_text
        keep = len(text) == len(log)  # (else encoded later by `log_json`)
        t_ms = t_us / 1000.0
        head, after = f'{{"seat":{seat},"action":', f',"t_ms":{ms_text(t_us)}}}'
        dicts, jsons = self._dicts, self._action_text
        for code in codes[1:n - 1] if n > 2 else ():
            d = dicts.get(code) or self._dict(code)
            log.append({"seat": seat, "action": d, "t_ms": t_ms})
            if keep:
                a = jsons.get(code)
                if a is None:
                    a = jsons[code] = json.dumps(d, separators=(",", ":"))
                text.append(head + a + after)
        self._log_entry(seat, codes[n - 1], t_us, None, None, h)

    def log_json(self, start: int = 0) -> str:
        """The log's entries from `start` on as a JSON array, as
        `json.dumps(self.log[start:], separators=(",", ":"))` writes it; each entry is encoded
        once, whichever of the action log and the stored replay asks first."""
        log, text = self.log, self._log_text
        if len(text) < len(log):
            text.extend(_entry_json(e) for e in log[len(text):])
        return "[" + ",".join(text[start:len(log)]) + "]"
