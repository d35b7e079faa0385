"""Conquest map files (spec/conquest.md §2.3): the text format and its JSON mirror, read into a
`Map`, with every error reported as "FILE:LINE: reason". The bundled maps live in maps/;
`load(name_or_path)` finds a bundled name or reads a file."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

MAPS = Path(__file__).resolve().parent / "maps"
DEFAULT = "twin_k4_14"
ID = re.compile(r"[A-Za-z0-9_]{1,15}$")
MAX_TERRITORIES, MAX_UNITS, MAX_TYPES, MAX_DEGREE = 32, 128, 8, 8
VICTORY = ("capital", "capital+annihilation")
UNIT_KEYS = ("attack", "defense", "move", "cost", "hp")


class MapError(ValueError):
    """A map file that cannot be played, with where and why."""


@dataclass(frozen=True)
class UnitType:
    name: str
    attack: int
    defense: int
    move: int
    cost: int
    hp: int
    support: int = 0  # supportable units this one lifts by +1 attack (artillery: 1)
    supportable: bool = False
    blitz: bool = False


@dataclass
class Map:
    name: str
    players: tuple[str, str]
    rounds: int
    victory: str
    types: list[UnitType]
    territories: list[str]  # canonical order: file order
    owner: list[int]  # 0 or 1, by territory
    capital: list[int]  # by player: a territory index
    edges: list[tuple[int, int]]
    units: list[tuple[int, int, int]] = field(default_factory=list)  # (type, owner, territory) by id
    source: str = ""

    def neighbours(self, t: int) -> list[int]:
        return sorted({b for a, b in self.edges if a == t} | {a for a, b in self.edges if b == t})

    def roster(self) -> dict[str, dict[str, list[int]]]:
        """Each player's unit ids by type (types in map order)."""
        out: dict[str, dict[str, list[int]]] = {p: {} for p in self.players}
        for uid, (k, o, _t) in enumerate(self.units):
            out[self.players[o]].setdefault(self.types[k].name, []).append(uid)
        return out


def _err(where: str, line: int, msg: str) -> MapError:
    return MapError(f"{where}:{line}: {msg}")


def _int(tok: str, where: str, line: int, what: str, lo: int, hi: int) -> int:
    if not re.fullmatch(r"-?\d+", tok) or not lo <= int(tok) <= hi:
        raise _err(where, line, f"{what} must be an integer in {lo}..{hi}, not {tok!r}")
    return int(tok)


class _Builder:
    """Collects the sections of either format and checks the whole (with the line of each
    item, so a late check can still point at the line that caused it)."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.name = ""
        self.players: list[str] = []
        self.rounds = 35
        self.victory = "capital"
        self.types: list[UnitType] = []
        self.tindex: dict[str, int] = {}
        self.tlines: list[int] = []
        self.owner: list[int] = []
        self.capital: dict[int, list[int]] = {0: [], 1: []}
        self.edges: dict[frozenset[str], int] = {}
        self.units: list[tuple[int, int, int]] = []

    def err(self, line: int, msg: str) -> MapError:
        return _err(self.where, line, msg)

    def player(self, name: str, line: int) -> int:
        if name not in self.players:
            raise self.err(line, f"unknown player {name!r} (players: {' '.join(self.players)})")
        return self.players.index(name)

    def territory(self, name: str, line: int) -> int:
        if name not in self.tindex:
            raise self.err(line, f"unknown territory {name!r}")
        return self.tindex[name]

    def add_type(self, t: UnitType, line: int) -> None:
        if not ID.match(t.name):
            raise self.err(line, f"bad unit type name {t.name!r}")
        if any(x.name == t.name for x in self.types):
            raise self.err(line, f"unit type {t.name!r} defined twice")
        if len(self.types) == MAX_TYPES:
            raise self.err(line, f"at most {MAX_TYPES} unit types")
        if t.move not in (1, 2):
            raise self.err(line, f"unit type {t.name!r}: move must be 1 or 2 (paths have 1 or 2 steps)")
        if t.hp != 1:
            raise self.err(line, f"unit type {t.name!r}: hp must be 1 (one hit kills a land unit here)")
        if t.attack == 0 and t.defense == 0:
            raise self.err(line, f"unit type {t.name!r}: a unit needs attack or defense (battles must end)")
        self.types.append(t)

    def add_territory(self, name: str, owner: str, capital: bool, line: int) -> None:
        if not ID.match(name):
            raise self.err(line, f"bad territory id {name!r} (letters, digits and _, 1 to 15)")
        if name in self.tindex:
            raise self.err(line, f"territory {name!r} defined twice")
        if len(self.tindex) == MAX_TERRITORIES:
            raise self.err(line, f"at most {MAX_TERRITORIES} territories")
        o = self.player(owner, line)
        self.tindex[name] = len(self.owner)
        self.tlines.append(line)
        self.owner.append(o)
        if capital:
            self.capital[o].append(len(self.owner) - 1)

    def add_edge(self, a: str, b: str, line: int) -> None:
        self.territory(a, line)
        self.territory(b, line)
        if a == b:
            raise self.err(line, f"edge {a} {a}: a territory cannot border itself")
        key = frozenset((a, b))
        if key in self.edges:
            first = self.edges[key]
            raise self.err(line, f"edge {a} {b} given twice (first on line {first}; edges go both ways)")
        self.edges[key] = line

    def add_units(self, t: str, owner: str, kind: str, n: int, line: int) -> None:
        ti, o = self.territory(t, line), self.player(owner, line)
        names = [x.name for x in self.types]
        if kind not in names:
            raise self.err(line, f"unknown unit type {kind!r} (types: {', '.join(names)})")
        if self.owner[ti] != o:
            holder = self.players[self.owner[ti]]
            raise self.err(line, f"{owner}'s units cannot start in {t}, which {holder} owns")
        if len(self.units) + n > MAX_UNITS:
            raise self.err(line, f"at most {MAX_UNITS} units on a map")
        self.units += [(names.index(kind), o, ti)] * n

    def build(self, last: int) -> Map:
        if not self.name:
            raise self.err(last, "no 'name' line")
        if len(self.players) != 2:
            raise self.err(last, "no 'players' line with two players")
        if not self.types:
            raise self.err(last, "no 'unit' line")
        if len(self.owner) < 2:
            raise self.err(last, "fewer than two territories")
        names = list(self.tindex)
        adj: list[set[int]] = [set() for _ in names]
        for key, line in self.edges.items():
            a, b = (self.tindex[x] for x in sorted(key))
            adj[a].add(b)
            adj[b].add(a)
            if len(adj[a]) > MAX_DEGREE or len(adj[b]) > MAX_DEGREE:
                raise self.err(line, f"a territory with more than {MAX_DEGREE} neighbours")
        for p in (0, 1):
            caps = self.capital[p]
            if len(caps) != 1:
                raise self.err(last, f"{self.players[p]} needs exactly one capital, not {len(caps)}")
        for t, name in enumerate(names):
            if not adj[t]:
                raise self.err(self.tlines[t], f"territory {name} has no edge")
        seen, todo = {self.capital[0][0]}, [self.capital[0][0]]
        while todo:
            for n in adj[todo.pop()] - seen:
                seen.add(n)
                todo.append(n)
        if self.capital[1][0] not in seen:
            cap = names[self.capital[1][0]]
            raise self.err(self.tlines[self.capital[1][0]], f"capital {cap} cannot be reached from "
                           f"{names[self.capital[0][0]]}: the map falls apart")
        lost = [names[t] for t in range(len(names)) if t not in seen]
        if lost:
            raise self.err(self.tlines[self.tindex[lost[0]]],
                           f"territory {lost[0]} is unreachable from the capitals")
        maxdeg = max(len(a) for a in adj)
        for p in (0, 1):
            bound = 1 + sum(maxdeg * maxdeg if self.types[k].move >= 2 else maxdeg
                            for k, o, _ in self.units if o == p)
            if bound > 1024:
                raise self.err(last, f"{self.players[p]} has too many units for the legal list with up to "
                               f"{maxdeg} neighbours a territory (at most 1024 moves)")
        pairs = [[self.tindex[x] for x in key] for key in self.edges]
        edges = sorted((min(p), max(p)) for p in pairs)
        return Map(self.name, (self.players[0], self.players[1]), self.rounds, self.victory, self.types,
                   names, self.owner, [self.capital[0][0], self.capital[1][0]], edges, self.units, self.where)


SECTIONS = ["conquest-map", "name", "players", "rounds", "victory", "unit", "territory", "edge", "units"]


def parse_text(text: str, where: str = "<map>") -> Map:
    """A map from the text format; MapError naming the line and the reason."""
    b = _Builder(where)
    stage, last = -1, 0
    for n, raw in enumerate(text.splitlines(), 1):
        last = n
        toks = raw.split("#", 1)[0].split()
        if not toks:
            continue
        key = toks[0]
        if key not in SECTIONS:
            raise b.err(n, f"unknown line {key!r} (expected one of: {', '.join(SECTIONS)})")
        order = SECTIONS.index(key)
        if order < stage or (order == stage and key not in ("unit", "territory", "edge", "units")):
            raise b.err(n, f"'{key}' out of place: sections come in the order {' '.join(SECTIONS)}")
        if stage < 0 and key != "conquest-map":
            raise b.err(n, "the first line must be 'conquest-map 1'")
        stage = order
        args = toks[1:]
        if key == "conquest-map":
            if args != ["1"]:
                raise b.err(n, "only format version 1 is known: 'conquest-map 1'")
        elif key == "name":
            if len(args) != 1 or not ID.match(args[0]):
                raise b.err(n, "name: one id of letters, digits and _")
            b.name = args[0]
        elif key == "players":
            if len(args) != 2 or args[0] == args[1] or not all(ID.match(a) for a in args):
                raise b.err(n, "players: two different ids, the first moves first")
            b.players = args
        elif key == "rounds":
            if len(args) != 1:
                raise b.err(n, "rounds: one number")
            b.rounds = _int(args[0], where, n, "rounds", 1, 10000)
        elif key == "victory":
            if len(args) != 1 or args[0] not in VICTORY:
                raise b.err(n, f"victory must be {' or '.join(VICTORY)}")
            b.victory = args[0]
        elif key == "unit":
            b.add_type(_unit_line(args, where, n), n)
        elif key == "territory":
            shape = len(args) >= 5 and args[1] == "owner" and args[3] == "production"
            if not shape or args[5:] not in ([], ["capital"]):
                raise b.err(n, "territory ID owner PLAYER production N [capital]")
            _int(args[4], where, n, "production", 0, 0)
            b.add_territory(args[0], args[2], args[5:] == ["capital"], n)
        elif key == "edge":
            if len(args) != 2:
                raise b.err(n, "edge A B")
            b.add_edge(args[0], args[1], n)
        else:
            if len(args) < 4 or len(args) % 2:
                raise b.err(n, "units TERRITORY PLAYER TYPE N [TYPE N ...]")
            for i in range(2, len(args), 2):
                b.add_units(args[0], args[1], args[i], _int(args[i + 1], where, n, "a unit count", 1, 128), n)
    return b.build(last)


def _unit_line(args: list[str], where: str, n: int) -> UnitType:
    if not args:
        raise _err(where, n, "unit NAME attack A defense D move M cost C hp H "
                   "[supportable] [support N] [blitz]")
    name, rest = args[0], args[1:]
    vals: dict[str, int] = {}
    flags = {"supportable": False, "blitz": False}
    support = 0
    i = 0
    while i < len(rest):
        k = rest[i]
        if k in UNIT_KEYS or k == "support":
            if i + 1 >= len(rest):
                raise _err(where, n, f"unit {name}: {k} needs a number")
            v = _int(rest[i + 1], where, n, f"unit {name} {k}", 0, 99)
            if k == "support":
                support = v
            else:
                vals[k] = v
            i += 2
        elif k in flags:
            flags[k] = True
            i += 1
        else:
            raise _err(where, n, f"unit {name}: unknown property {k!r}")
    missing = [k for k in UNIT_KEYS if k not in vals]
    if missing:
        raise _err(where, n, f"unit {name}: missing {', '.join(missing)}")
    return UnitType(name, vals["attack"], vals["defense"], vals["move"], vals["cost"], vals["hp"], support,
                    flags["supportable"], flags["blitz"])


def parse_json(text: str, where: str = "<map>") -> Map:
    """A map from the JSON mirror of §2.3; MapError with the line of a bad item when the
    JSON parser can tell it, else line 1."""
    try:
        d = json.loads(text)
    except json.JSONDecodeError as e:
        raise _err(where, e.lineno, f"not JSON: {e.msg}") from None
    b = _Builder(where)
    if not isinstance(d, dict):
        raise b.err(1, "a JSON map is an object")
    try:
        b.name = str(d["name"])
        b.players = list(d["players"])
        if len(b.players) != 2 or b.players[0] == b.players[1]:
            raise b.err(1, "players: two different ids")
        b.rounds = int(d.get("rounds", 35))
        b.victory = d.get("victory", "capital")
        if b.victory not in VICTORY:
            raise b.err(1, f"victory must be {' or '.join(VICTORY)}")
        for name, u in d["unit_types"].items():
            args = [name] + [str(x) for k in UNIT_KEYS + ("support",) if k in u for x in (k, u[k])]
            args += [f for f in ("supportable", "blitz") if u.get(f)]
            b.add_type(_unit_line(args, where, 1), 1)
        for t in d["territories"]:
            if t.get("production", 0) != 0:
                raise b.err(1, f"territory {t['id']}: production must be 0")
            b.add_territory(t["id"], t["owner"], bool(t.get("capital")), 1)
        for a, c in d["edges"]:
            b.add_edge(a, c, 1)
        for s in d["start"]:
            b.add_units(s["t"], s["owner"], s["type"], int(s["n"]), 1)
    except MapError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise b.err(1, "a JSON map needs name, players, unit_types, territories, edges and start "
                    f"({e!r})") from None
    return b.build(1)


def parse(text: str, where: str = "<map>") -> Map:
    return parse_json(text, where) if text.lstrip().startswith("{") else parse_text(text, where)


@cache
def _read(path: str, mtime: float) -> Map:
    return parse(Path(path).read_text(encoding="utf-8"), path)


def load(name: str) -> Map:
    """A bundled map by name (maps/NAME.map) or a map file by path."""
    bundled = MAPS / f"{name}.map"
    p = bundled if ID.match(name) and bundled.exists() else Path(name)
    if not p.is_file():
        known = ", ".join(sorted(x.stem for x in MAPS.glob("*.map")))
        raise MapError(f"no map {name!r}: neither a bundled map ({known}) nor a file")
    return _read(str(p), p.stat().st_mtime)
