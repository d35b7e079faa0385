"""Conquest's Python codec: options (a map, its rounds and victory rule), the readable
actions and the reading of a JSON state, which is the conformance traces' form plus what a bot
needs (the roster) and what makes it exact (territories taken this turn, the move a unit may
join). The only writer of that form is C (conquest_wire.c, decoded by `State.to_json`): it
takes its names from `wire_names`.

Territory, player and unit-type names are interned into one process-wide table of name
numbers, 1..255, so an action code means the same territory on whatever map: the C state
holds each territory's name number, and actions carry them. The default map's names come
first, in a fixed order that the C default configuration also uses."""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

from ..._lowlevel import StateError, ffi, lib
from ...registry import GameOption
from . import mapfile
from .mapfile import Map

OPTIONS = (
    GameOption("map", str, mapfile.DEFAULT,
               "a bundled map (twin_k4_14) or the path of a map file (spec/conquest.md §2.3)"),
    GameOption("rounds", int, None, "a draw after this many rounds (default: the map's `rounds`)"),
    GameOption("victory", str, None, "capital or capital+annihilation (default: the map's `victory`)",
               choices=mapfile.VICTORY),
)

DEFAULT_NAMES = [f"R{i}" for i in range(1, 8)] + [f"B{i}" for i in range(1, 8)] + [
    "Red", "Blue", "infantry", "artillery", "tank"]
_NAMES: list[str] = [""] + DEFAULT_NAMES  # name number i is _NAMES[i]; 0 is no name
_NUMBER = {n: i for i, n in enumerate(_NAMES) if n}
PHASES = ["combat", "noncombat", "over"]
BY = [None, "capital", "annihilation", "round_limit"]


def intern(name: str) -> int:
    """The name number of a territory, player or unit-type name (new names get the next)."""
    n = _NUMBER.get(name)
    if n is None:
        if len(_NAMES) > 255:
            raise ValueError("more than 255 distinct territory, player and unit-type names in one process")
        n = _NUMBER[name] = len(_NAMES)
        _NAMES.append(name)
    return n


def name_of(number: int) -> str:
    return _NAMES[number] if 0 < number < len(_NAMES) else f"?{number}"


def wire_names() -> list[str]:
    """The name table by number (index 0: no name), read by the C msgpack writer
    (conquest_wire.c): the live list, so that names interned later are seen."""
    return _NAMES


def game_map(cfg: dict[str, Any]) -> Map:
    return mapfile.load(cfg["map"])


def make_config(options: dict[str, Any]) -> dict[str, Any]:
    """Complete a conquest config: the map is read (and checked) here, and rounds and victory
    default to its own lines; ValueError naming the bad key, or the map file's line."""
    unknown = set(options) - {o.name for o in OPTIONS}
    if unknown:
        raise ValueError(f"unknown conquest option(s): {', '.join(sorted(unknown))}")
    name = options.get("map", mapfile.DEFAULT)
    if not isinstance(name, str):
        raise ValueError(f"map must be a bundled map's name or a file's path, not {name!r}")
    m = mapfile.load(name)
    rounds = options.get("rounds")
    rounds = m.rounds if rounds is None else rounds
    if isinstance(rounds, str) and rounds.isdigit():
        rounds = int(rounds)
    if isinstance(rounds, bool) or not isinstance(rounds, int) or not 1 <= rounds <= 10000:
        raise ValueError(f"rounds must be an integer in 1..10000, not {rounds!r}")
    victory = options.get("victory") or m.victory
    if victory not in mapfile.VICTORY:
        raise ValueError(f"victory must be {' or '.join(mapfile.VICTORY)}, not {victory!r}")
    for n in m.territories + list(m.players) + [t.name for t in m.types]:
        intern(n)
    return {"map": name, "rounds": rounds, "victory": victory}


def fill_config(cfg: dict[str, Any], out: Any) -> None:
    m = game_map(cfg)
    c = ffi.cast("cq_config *", out)
    c.nterr, c.nunits, c.ntypes = len(m.territories), len(m.units), len(m.types)
    c.rounds = cfg["rounds"]
    c.victory = mapfile.VICTORY.index(cfg["victory"])
    for t, name in enumerate(m.territories):
        c.tname[t] = intern(name)
        c.start_owner[t] = m.owner[t]
        c.adj[t] = sum(1 << n for n in m.neighbours(t))
    for p in (0, 1):
        c.capital[p] = m.capital[p]
        c.pname[p] = intern(m.players[p])
    for k, ut in enumerate(m.types):
        ct = c.types[k]
        ct.attack, ct.defense, ct.move, ct.cost, ct.hp = ut.attack, ut.defense, ut.move, ut.cost, ut.hp
        ct.support = ut.support
        ct.flags = (lib.CQ_SUPPORTABLE if ut.supportable else 0) | (lib.CQ_BLITZ if ut.blitz else 0)
        ct.name = intern(ut.name)
    for u, (k, o, loc) in enumerate(m.units):
        c.utype[u], c.uowner[u], c.uloc[u] = k, o, loc


# ---- actions: END_PHASE is 0; a move is bit 0 = 1, the unit in bits 1-7, the path's name
# numbers in bits 8-15 (start), 16-23 (middle, 0 for none), 24-31 (end); a join (a unit that
# follows the move just made into the empty territory it took) is the same with bit 0 = 0 ---

def action_to_dict(code: int) -> dict[str, Any]:
    if code == 0:
        return {"type": "end_phase"}
    mid = (code >> 16) & 0xFF
    path = [name_of((code >> 8) & 0xFF)] + ([name_of(mid)] if mid else []) + [name_of((code >> 24) & 0xFF)]
    out = {"type": "move", "unit": (code >> 1) & 0x7F, "path": path}
    if not code & 1:
        out["join"] = True
    return out


def action_from_dict(d: dict[str, Any]) -> int:
    """The code of a readable action; ValueError naming the bad field."""
    if not isinstance(d, dict):
        raise ValueError("an action must be a map with a 'type' field")
    t = d.get("type")
    if t == "end_phase":
        if set(d) - {"type"}:
            fields = ", ".join(sorted(set(d) - {"type"}))
            raise ValueError(f"unexpected field(s) for an end_phase action: {fields}")
        return 0
    if t != "move":
        raise ValueError(f"action type must be move or end_phase, not {t!r}")
    extra = set(d) - {"type", "unit", "path", "join"}
    if extra:
        raise ValueError(f"unexpected field(s) for a move action: {', '.join(sorted(extra))}")
    unit, path, join = d.get("unit"), d.get("path"), d.get("join", False)
    if not isinstance(join, bool):
        raise ValueError(f"action field 'join' must be true or false, not {join!r}")
    if isinstance(unit, bool) or not isinstance(unit, int) or not 0 <= unit < lib.CQ_MAX_UNITS:
        raise ValueError(f"action field 'unit' must be a unit id in 0..{lib.CQ_MAX_UNITS - 1}, not {unit!r}")
    if not isinstance(path, list) or not 2 <= len(path) <= 3 or not all(isinstance(x, str) for x in path):
        raise ValueError("action field 'path' must list 2 or 3 territories: where the unit stands, "
                         f"(a middle,) the end; not {path!r}")
    unknown = [x for x in path if x not in _NUMBER]
    if unknown:
        raise ValueError(f"action field 'path': unknown territory {unknown[0]!r}")
    nums = [_NUMBER[x] for x in path]
    mid = nums[1] if len(nums) == 3 else 0
    return (0 if join else 1) | unit << 1 | nums[0] << 8 | mid << 16 | nums[-1] << 24


# ---- the board for drawing (the web view) -------------------------------------------------

SCALE, MARGIN = 150, 56  # pixels a unit of the layout (about one border's length); room at the edges


def layout(cfg: dict[str, Any]) -> dict[str, Any]:
    """The configuration's map for drawing: the picture's size, the players (in seat order),
    the unit types, the capitals, each territory's centre in pixels and the borders. Map files
    carry no coordinates, so the places are computed from the borders (`place`), the same on
    every run; the page draws each territory as a box of about 96 x 56 around its centre."""
    m = game_map(cfg)
    pos = place(tuple(m.territories), tuple(m.edges), (m.capital[0], m.capital[1]))
    xs, ys = [p[0] for p in pos], [p[1] for p in pos]
    px = [round((x - min(xs)) * SCALE) + MARGIN for x in xs]
    py = [round((y - min(ys)) * SCALE) + MARGIN for y in ys]
    return {
        "width": max(px) + MARGIN, "height": max(py) + MARGIN,
        "players": list(m.players), "types": [t.name for t in m.types],
        "capitals": [m.territories[c] for c in m.capital],
        "territories": [{"name": t, "x": px[i], "y": py[i]} for i, t in enumerate(m.territories)],
        "edges": [[m.territories[a], m.territories[b]] for a, b in m.edges],
    }


@lru_cache(maxsize=16)
def place(names: tuple[str, ...], edges: tuple[tuple[int, int], ...],
          capitals: tuple[int, int]) -> list[tuple[float, float]]:
    """Places for a map's territories (indices of `names`), about one unit between neighbours:
    stress majorization over the number of borders between territories (each territory in
    turn moves to where its distances to all others fit best; Gansner, Koren and North 2004),
    then territories closer than 0.85 are pushed apart and those lying on a border line they
    are not an end of are pushed off it, then the picture is turned so that its long side is
    horizontal with the first player's capital on the left. Starts from columns by "how much
    nearer to one capital than to the other", so the same map always gives the same picture."""
    n = len(names)
    adj: list[list[int]] = [[] for _ in range(n)]
    for a, b in edges:
        adj[a].append(b)
        adj[b].append(a)

    def hops(src: int) -> list[int]:
        d = [n] * n
        d[src] = 0
        todo = [src]
        for t in todo:
            for u in adj[t]:
                if d[u] > d[t] + 1:
                    d[u] = d[t] + 1
                    todo.append(u)
        return d

    dist = [hops(t) for t in range(n)]
    d0, d1 = dist[capitals[0]], dist[capitals[1]]
    columns: dict[int, list[int]] = {}
    for t in range(n):
        columns.setdefault(d0[t] - d1[t], []).append(t)
    pos = [[0.0, 0.0] for _ in range(n)]
    for col, ts in columns.items():
        for k, t in enumerate(ts):  # the small offset keeps any two starting places apart
            pos[t] = [col / 2, k - (len(ts) - 1) / 2 + 0.01 * t]
    for _ in range(300):
        for i in range(n):
            sx = sy = sw = 0.0
            for j in range(n):
                if j == i:
                    continue
                w = dist[i][j] ** -2.0
                dx, dy = pos[i][0] - pos[j][0], pos[i][1] - pos[j][1]
                d = max(math.hypot(dx, dy), 1e-9)
                sx += w * (pos[j][0] + dist[i][j] * dx / d)
                sy += w * (pos[j][1] + dist[i][j] * dy / d)
                sw += w
            pos[i] = [sx / sw, sy / sw]
    _spread(pos, edges)
    cx, cy = sum(p[0] for p in pos) / n, sum(p[1] for p in pos) / n
    sxx, syy = sum((p[0] - cx) ** 2 for p in pos), sum((p[1] - cy) ** 2 for p in pos)
    sxy = sum((p[0] - cx) * (p[1] - cy) for p in pos)
    turn = -0.5 * math.atan2(2 * sxy, sxx - syy)  # onto the principal axis
    c, s = math.cos(turn), math.sin(turn)
    out = [((x - cx) * c - (y - cy) * s, (x - cx) * s + (y - cy) * c) for x, y in pos]
    if out[capitals[0]][0] > out[capitals[1]][0]:
        out = [(-x, y) for x, y in out]
    return out


def _spread(pos: list[list[float]], edges: tuple[tuple[int, int], ...], apart: float = 0.85,
            off_line: float = 0.4) -> None:
    """Push territories closer than `apart` away from each other, and a territory nearer than
    `off_line` to a border between two others off that line (else the line would seem to run
    through it), until nothing moves or 200 rounds."""
    n = len(pos)
    for _ in range(200):
        moved = False
        for i in range(n):
            for j in range(i + 1, n):
                dx, dy = pos[i][0] - pos[j][0], pos[i][1] - pos[j][1]
                d = math.hypot(dx, dy)
                if d < apart - 1e-3:
                    f = (apart - d) / 2 / max(d, 1e-9)
                    pos[i][0] += dx * f
                    pos[i][1] += dy * f
                    pos[j][0] -= dx * f
                    pos[j][1] -= dy * f
                    moved = True
        for a, b in edges:
            ex, ey = pos[b][0] - pos[a][0], pos[b][1] - pos[a][1]
            length2 = max(ex * ex + ey * ey, 1e-9)
            for t in range(n):
                if t in (a, b):
                    continue
                along = ((pos[t][0] - pos[a][0]) * ex + (pos[t][1] - pos[a][1]) * ey) / length2
                if not 0.0 < along < 1.0:
                    continue
                px, py = pos[t][0] - pos[a][0] - along * ex, pos[t][1] - pos[a][1] - along * ey
                d = math.hypot(px, py)
                if d < off_line - 1e-3:  # the territory moves half the way, the line's ends the rest
                    f = (off_line - d) / max(d, 1e-9)
                    pos[t][0] += px * f / 2
                    pos[t][1] += py * f / 2
                    for e in (a, b):
                        pos[e][0] -= px * f / 4
                        pos[e][1] -= py * f / 4
                    moved = True
        if not moved:
            return


# ---- JSON states, read (conquest_wire.c writes them) ------------------------------------------

def _names(s: Any) -> tuple[list[str], list[str]]:
    return [name_of(s.tname[t]) for t in range(s.nterr)], [name_of(s.pname[p]) for p in (0, 1)]


def _fail(msg: str) -> StateError:
    return StateError(lib.MG_ERR_STATE, msg)


def _terr(terr: list[str], v: Any, where: str) -> int:
    if not isinstance(v, str) or v not in terr:
        raise _fail(f"state field {where}: {v!r} is not a territory of this map")
    return terr.index(v)


def state_from_json(obj: dict[str, Any], cfg: dict[str, Any], out: Any) -> None:
    """Fill `out` from the JSON form on the configuration's map, checking every field;
    StateError naming the field. Units not listed under `units` are dead."""
    if not isinstance(obj, dict):
        raise _fail("a state must be a JSON object")
    c = ffi.new("cq_config *")
    fill_config(cfg, c)
    err = ffi.new("char[]", lib.MG_ERR_LEN)
    if lib.mg_conquest_vt.init(out, c, 0, err) != 0:
        raise _fail(ffi.string(err).decode())
    s = ffi.cast("cq_state *", out)
    terr, players = _names(s)
    if obj.get("player") not in players:
        raise _fail(f"state field 'player' must be {players[0]} or {players[1]}, not {obj.get('player')!r}")
    s.player = players.index(obj["player"])
    if obj.get("phase") not in PHASES:
        raise _fail(f"state field 'phase' must be one of {', '.join(PHASES)}")
    s.phase = PHASES.index(obj["phase"])
    rounds = obj.get("rounds", cfg["rounds"])
    if isinstance(rounds, bool) or not isinstance(rounds, int) or not 1 <= rounds <= 10000:
        raise _fail("state field 'rounds' must be an integer in 1..10000")
    s.rounds = rounds
    victory = obj.get("victory", cfg["victory"])
    if victory not in mapfile.VICTORY:
        raise _fail(f"state field 'victory' must be {' or '.join(mapfile.VICTORY)}")
    s.victory = mapfile.VICTORY.index(victory)
    rnd = obj.get("round")
    if isinstance(rnd, bool) or not isinstance(rnd, int) or not 1 <= rnd <= s.rounds:
        raise _fail(f"state field 'round' must be an integer in 1..{s.rounds}, not {rnd!r}")
    s.round = rnd
    owner = obj.get("owner")
    if not isinstance(owner, dict) or set(owner) != set(players):
        raise _fail(f"state field 'owner' must map {players[0]} and {players[1]} to their territories")
    listed: list[int] = []
    s.owner1 = 0
    for p, ts in owner.items():
        if not isinstance(ts, list):
            raise _fail(f"state field 'owner.{p}' must list territories")
        for t in ts:
            i = _terr(terr, t, f"owner.{p}")
            listed.append(i)
            if players.index(p):
                s.owner1 |= 1 << i
    if sorted(listed) != list(range(len(terr))):
        raise _fail("state field 'owner': every territory must be listed once")
    units = obj.get("units")
    if not isinstance(units, dict):
        raise _fail("state field 'units' must map territories to unit ids")
    for u in range(s.nunits):
        s.loc[u] = lib.CQ_NONE
    for t, ids in units.items():
        i = _terr(terr, t, "units")
        if not isinstance(ids, list):
            raise _fail(f"state field 'units.{t}' must list unit ids")
        for u in ids:
            if isinstance(u, bool) or not isinstance(u, int) or not 0 <= u < s.nunits:
                raise _fail(f"state field 'units.{t}': {u!r} is not a unit of this map")
            if s.loc[u] != lib.CQ_NONE:
                raise _fail(f"state field 'units': unit {u} is listed twice")
            s.loc[u] = i
    moved = obj.get("moved", [])
    if not isinstance(moved, list):
        raise _fail("state field 'moved' must list unit ids")
    s.moved[0] = s.moved[1] = 0
    for u in moved:
        if isinstance(u, bool) or not isinstance(u, int) or not 0 <= u < s.nunits or s.loc[u] == lib.CQ_NONE:
            raise _fail(f"state field 'moved': {u!r} is not a living unit")
        if s.ukind[u] >> 7 != s.player:
            raise _fail(f"state field 'moved': unit {u} is not the moving player's")
        s.moved[u >> 6] |= 1 << (u & 63)
    for u in range(s.nunits):
        t = s.loc[u]
        if t == lib.CQ_NONE or (s.owner1 >> t & 1) == s.ukind[u] >> 7:
            continue
        if s.phase != 0 or s.ukind[u] >> 7 != s.player or not s.moved[u >> 6] >> (u & 63) & 1:
            raise _fail(f"state field 'units': unit {u} stands in enemy territory {terr[t]} outside an "
                        "attack (only the moving player's moved units may, in the combat move)")
    conquered = obj.get("conquered", [])
    if not isinstance(conquered, list):
        raise _fail("state field 'conquered' must list territories")
    s.conquered = sum(1 << i for i in {_terr(terr, t, "conquered") for t in conquered})
    join = obj.get("join")
    s.join_src = s.join_mid = s.join_dst = lib.CQ_NONE
    s.join_blitz = 0
    if join is not None:
        path_v = join.get("path") if isinstance(join, dict) else None
        if (not isinstance(path_v, list) or not 2 <= len(path_v) <= 3
                or not isinstance(join.get("blitz", False), bool)):
            raise _fail("state field 'join' must be null or {path: 2 or 3 territories, blitz: true or false}")
        path = [_terr(terr, t, "join.path") for t in join["path"]]
        s.join_src, s.join_dst = path[0], path[-1]
        s.join_mid = path[1] if len(path) == 3 else lib.CQ_NONE
        s.join_blitz = int(join.get("blitz", False))
    result = obj.get("result")
    if (result is None) != (s.phase != 2):
        raise _fail("state fields 'phase' and 'result': a result exactly when the phase is over")
    s.winner, s.by = -1, 0
    if result is not None:
        if not isinstance(result, dict) or result.get("by") not in BY[1:] or (
                result.get("winner") is not None and result.get("winner") not in players):
            raise _fail("state field 'result' must be {winner: a player or null, by: capital, annihilation "
                        "or round_limit}")
        s.winner = -1 if result["winner"] is None else players.index(result["winner"])
        s.by = BY.index(result["by"])
    observer = obj.get("observer")
    if observer is not None and (isinstance(observer, bool) or observer not in (1, 2)):
        raise _fail("state field 'observer' must be 1 or 2 when present")
    s.observer = observer - 1 if observer else -1
