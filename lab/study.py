"""Studies (`maag experiment NAME`): an experiment declared in a small TOML file under version
control (studies/NAME.toml beside this module, or any file), played in-process, stored game by
game in a JSON-lines data file (datafile.py: an interrupted run goes on where it stopped, and
no game is played twice), and reported as markdown tables with 95% intervals and matplotlib
plots.

A study names its agents with their settings, the game and its options, the setting
("research": agents search the full state, heroes' seeded draws, arena.play_game; "real":
agents plan from their seat's observation, random draws, hidden.play_game, where cheat: and
peek: twins may play), the budget of a turn (ms or iterations, per agent if need be), the
games per pairing, the seed of the deals and the sweep: a game option (heroes' `ap`), or the
budget itself ("ms" or "iterations"), with its points. The format says who plays whom:
"round-robin" (every pair of agents), "gauntlet" (every agent against `opponent`) or "pairs"
(the listed pairs of agent labels). Every pairing at every point plays the same deals, each
from both seats.

The file's keys (see studies/*.toml for examples):

    title, about          what the study is, for the report (about: a paragraph, optional)
    game, options         the registered game and its options (`maag games`)
    setting               "research" or "real"
    format                "round-robin", "gauntlet" or "pairs"
    games, seed           games per pairing and point (rounded up to even), seed of the deals
    budget                {ms = N} or {iterations = N}: every agent's turn (kernel units)
    sweep                 {over = "ap" | "ms" | "iterations" | any game option, points = [...]}
    plot_x                "sweep" (default) or "iterations": the plots' x axis, the measured
                          mean iterations per turn of each curve's agent
    [[agents]]            label, spec ("NAME" or "NAME:key=value,..."), and optionally its own
                          budget (ms or iterations), scale (multiplies an iteration budget of
                          the study's or of the sweep: OEP's generations are dearer than MCTS
                          iterations) and fixed = true (the sweep of a budget leaves it alone)
    [opponent]            the gauntlet's opponent, keys as an agent's
    pairs                 [["label A", "label B"], ...] for the "pairs" format

A bad file is refused with its line and the reason (StudyError), before any game."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
import statistics
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from maag.stats import wilson

from . import datafile

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["STUDIES", "StudyError", "Entrant", "Sweep", "Study", "Pairing", "Task", "shipped", "title_of",
           "load", "parse", "scaled", "pairings", "tasks", "play", "run", "records", "Cell", "cells",
           "markdown", "overall", "plot", "report"]

STUDIES = Path(__file__).with_name("studies")
SETTINGS = ("research", "real")
FORMATS = ("round-robin", "gauntlet", "pairs")
BUDGETS = ("ms", "iterations")
KEYS = {"title", "about", "game", "options", "setting", "format", "games", "seed", "budget", "sweep",
        "plot_x", "agents", "opponent", "pairs"}
AGENT_KEYS = {"label", "spec", "ms", "iterations", "scale", "fixed"}


class StudyError(ValueError):
    """A study file that cannot be run: where (file and line, when known) and why."""

    def __init__(self, source: str, line: int | None, reason: str) -> None:
        self.source, self.line, self.reason = source, line, reason
        super().__init__(f"{source}:{line}: {reason}" if line else f"{source}: {reason}")


@dataclass(frozen=True)
class Entrant:
    label: str
    spec: str
    ms: float | None = None
    iterations: int | None = None
    scale: float = 1.0
    fixed: bool = False


@dataclass(frozen=True)
class Sweep:
    over: str                 # "ms", "iterations" or a game option
    points: tuple[Any, ...]


@dataclass(frozen=True)
class Study:
    name: str
    source: str
    title: str
    about: str
    game: str
    options: dict[str, Any]
    setting: str
    format: str
    games: int
    seed: int
    ms: float | None
    iterations: int | None
    sweep: Sweep | None
    plot_x: str
    agents: tuple[Entrant, ...]
    opponent: Entrant | None
    pairs: tuple[tuple[str, str], ...]

    @property
    def point_values(self) -> list[Any]:
        """The sweep's points (one point, None, without a sweep)."""
        return list(self.sweep.points) if self.sweep else [None]

    def options_at(self, value: Any) -> dict[str, Any]:
        """The game's options at a point of the sweep, with the setting's draws."""
        opts = dict(self.options)
        if self.sweep and self.sweep.over not in BUDGETS:
            opts[self.sweep.over] = value
        from maag.engine import registry

        if any(o.name == "draws" for o in registry.get(self.game).options):
            opts["draws"] = "seeded" if self.setting == "research" else "random"
        return opts

    def budget(self, e: Entrant, value: Any) -> tuple[float | None, int | None]:
        """An entrant's (ms, iterations) per turn at a point of the sweep."""
        ms, its = self.ms, self.iterations
        if self.sweep and self.sweep.over in BUDGETS and not e.fixed:
            ms, its = (float(value), None) if self.sweep.over == "ms" else (None, int(value))
        elif e.ms is not None or e.iterations is not None:
            return e.ms, e.iterations
        if its is not None:
            its = max(1, round(its * e.scale))
        return ms, its


@dataclass(frozen=True)
class Pairing:
    """Agent `a` (the one reported) against `b` at one point of the sweep."""

    point: Any
    a: Entrant
    b: Entrant
    a_budget: tuple[float | None, int | None]
    b_budget: tuple[float | None, int | None]
    options: dict[str, Any]
    key: str                  # what a recorded game must share with this pairing to count in it


@dataclass(frozen=True)
class Task:
    pairing: Pairing
    index: int
    a_seat: int
    seed: int
    game: str
    setting: str


# ---- reading a study file -------------------------------------------------------------------

def shipped() -> list[str]:
    """The names of the studies shipped with maag (studies/*.toml)."""
    return sorted(p.stem for p in STUDIES.glob("*.toml"))


def title_of(name: str) -> str:
    """A shipped study's title, read without checking the file (for the command's help)."""
    try:
        title = tomllib.loads((STUDIES / f"{name}.toml").read_text()).get("title")
    except (OSError, tomllib.TOMLDecodeError):
        title = None
    return title if isinstance(title, str) else "(a bad study file)"


def load(name: str) -> Study:
    """A shipped study by name, or a study file by path; StudyError for a bad one."""
    path = Path(name)
    if not (path.suffix == ".toml" and path.exists()):
        path = STUDIES / f"{name}.toml"
        if not path.exists():
            raise StudyError(name, None,
                             f"no such study; shipped: {', '.join(shipped())} (or give a .toml file)")
    return parse(path.read_text(), path.stem, str(path))


def _line_of(text: str, path: Sequence[str | int]) -> int | None:
    """The line of `text` that defines `path` (("agents", 2, "spec"), ("sweep", "points")), or
    of its deepest enclosing key that can be found; None when nothing of it is in the file."""
    table: tuple[str | int, ...] = ()
    counts: dict[str, int] = {}
    best: tuple[int, int] | None = None  # (depth, line)
    in_string = False
    want = tuple(path)
    here: tuple[str | int, ...]
    for no, raw in enumerate(text.splitlines(), 1):
        quotes = raw.count('"""') + raw.count("'''")
        if in_string:
            in_string = quotes % 2 == 0
            continue
        if quotes % 2 == 1:
            in_string = True
        s = raw.split("#", 1)[0].strip() if '"' not in raw.split("#", 1)[0] else raw.strip()
        m = re.match(r"^\[\[\s*([\w.\-]+)\s*\]\]", s)
        if m:
            counts[m.group(1)] = counts.get(m.group(1), -1) + 1
            table = here = (m.group(1), counts[m.group(1)])
        else:
            m = re.match(r"^\[\s*([\w.\-]+)\s*\]", s)
            if m:
                table = here = tuple(m.group(1).split("."))
            else:
                m = re.match(r'^"?([\w\-]+)"?\s*=', s)
                if not m:
                    continue
                here = (*table, m.group(1))
        if want[:len(here)] == here and (best is None or len(here) > best[0]):
            best = (len(here), no)
    return best[1] if best else None


class _Reader:
    """A study file's table, read key by key: each value checked for its type, and every
    problem a StudyError naming the line it is on."""

    def __init__(self, text: str, source: str) -> None:
        self.text, self.source = text, source
        try:
            self.d: dict[str, Any] = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            m = re.search(r"at line (\d+)", str(e))
            raise StudyError(source, int(m.group(1)) if m else None, f"not valid TOML: {e}") from None

    def fail(self, path: Sequence[str | int], reason: str) -> StudyError:
        return StudyError(self.source, _line_of(self.text, path), reason)

    def get(self, key: str, kind: type | tuple[type, ...], default: Any = ...,
            path: Sequence[str | int] = ()) -> Any:
        """The value at `path` (default: the top-level `key`) of type `kind`; `default` when
        it is missing, or a StudyError when there is no default."""
        where = tuple(path) or (key,)
        box: dict[str, Any] = self.d
        for step in where[:-1]:
            box = box[step]  # type: ignore[index]
        if key not in box:
            if default is ...:
                raise self.fail(where[:-1] or where, f"{'.'.join(map(str, where))} is missing")
            return default
        value = box[key]
        if isinstance(value, bool) and kind is not bool or not isinstance(value, kind):
            names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
            raise self.fail(where, f"{key} must be a {names}, not {value!r}")
        return value


def parse(text: str, name: str, source: str = "<study>") -> Study:
    """A study from the text of its file; StudyError naming the line and the reason."""
    r = _Reader(text, source)
    for key in r.d:
        if key not in KEYS:
            raise r.fail((key,), f"unknown key {key!r}; known: {', '.join(sorted(KEYS))}")
    title, about, game = r.get("title", str), r.get("about", str, ""), _game(r)
    options = _options(r, game)
    setting, fmt, games, seed, plot_x = _setting(r)
    ms, iterations = _budget(r)
    sweep = _sweep(r, game, options)
    if ms is None and iterations is None and not (sweep and sweep.over in BUDGETS):
        raise r.fail(("budget",),
                     "give a budget ({ms = N} or {iterations = N}) or sweep over ms or iterations")
    agents, opponent = _entrants(r, fmt, setting)
    pairs = _pairs(r, fmt, [a.label for a in agents] + ([opponent.label] if opponent else []))
    if fmt == "round-robin" and len(agents) < 2:
        raise r.fail(("agents",), "a round robin needs at least two agents")
    if not agents:
        raise r.fail(("agents",), "name at least one agent")
    study = Study(name, source, title, about, game, options, setting, fmt, games, seed, ms, iterations, sweep,
                  plot_x, agents, opponent, pairs)
    _check_playable(r, study)
    return study


def _game(r: _Reader) -> str:
    from maag.engine import registry

    game: str = r.get("game", str)
    if game not in registry.names():
        raise r.fail(("game",), f"unknown game {game!r}; known: {', '.join(registry.names())}")
    return game


def _known_options(game: str) -> set[str]:
    from maag.engine import registry

    return {o.name for o in registry.get(game).options}


def _options(r: _Reader, game: str) -> dict[str, Any]:
    options = dict(r.get("options", dict, {}))
    known = _known_options(game)
    for k in options:
        if k not in known:
            raise r.fail(("options", k),
                         f"{game} has no option {k!r}; its options: {', '.join(sorted(known))}")
        if k == "draws":
            raise r.fail(("options", k), "draws follow from the setting (research: seeded, real: random)")
    return options


def _setting(r: _Reader) -> tuple[str, str, int, int, str]:
    """setting, format, games, seed and plot_x."""
    setting = r.get("setting", str)
    if setting not in SETTINGS:
        raise r.fail(("setting",), f"setting must be one of {', '.join(SETTINGS)}, not {setting!r}")
    fmt = r.get("format", str)
    if fmt not in FORMATS:
        raise r.fail(("format",), f"format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    games = r.get("games", int)
    if games < 1:
        raise r.fail(("games",), "games must be at least 1")
    seed = r.get("seed", int, 1)
    plot_x = r.get("plot_x", str, "sweep")
    if plot_x not in ("sweep", "iterations"):
        raise r.fail(("plot_x",), f"plot_x must be sweep or iterations, not {plot_x!r}")
    return setting, fmt, games, seed, plot_x


def _budget(r: _Reader) -> tuple[float | None, int | None]:
    """The study's budget per turn, (ms, iterations), one of them or neither."""
    if "budget" not in r.d:
        return None, None
    budget = r.get("budget", dict)
    for k in budget:
        if k not in BUDGETS:
            raise r.fail(("budget", k), f"a budget is ms or iterations, not {k!r}")
    if len(budget) != 1:
        raise r.fail(("budget",), "give the budget as ms or as iterations, one of them")
    if "ms" in budget:
        ms = float(r.get("ms", (int, float), path=("budget", "ms")))
        if ms <= 0:
            raise r.fail(("budget", "ms"), "ms must be above 0")
        return ms, None
    iterations: int = r.get("iterations", int, path=("budget", "iterations"))
    if iterations < 1:
        raise r.fail(("budget", "iterations"), "iterations must be at least 1")
    return None, iterations


def _sweep(r: _Reader, game: str, options: dict[str, Any]) -> Sweep | None:
    if "sweep" not in r.d:
        return None
    sw = r.get("sweep", dict)
    for k in sw:
        if k not in ("over", "points"):
            raise r.fail(("sweep", k), f"a sweep has over and points, not {k!r}")
    over = r.get("over", str, path=("sweep", "over"))
    pts = r.get("points", list, path=("sweep", "points"))
    if not pts:
        raise r.fail(("sweep", "points"), "a sweep needs at least one point")
    if len(set(map(repr, pts))) != len(pts):
        raise r.fail(("sweep", "points"), "the sweep's points repeat")
    known = _known_options(game)
    if over in BUDGETS:
        for v in pts:
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0 or (
                    over == "iterations" and not isinstance(v, int)):
                kind = "integer" if over == "iterations" else "number"
                raise r.fail(("sweep", "points"), f"a point of {over} must be a positive {kind}, not {v!r}")
    elif over not in known:
        raise r.fail(("sweep", "over"), f"a sweep is over ms, iterations or an option of {game} "
                                        f"({', '.join(sorted(known))}), not {over!r}")
    elif over == "draws" or over in options:
        raise r.fail(("sweep", "over"), f"{over} cannot be swept here")
    return Sweep(over, tuple(pts))


def _check_spec(spec: str, setting: str) -> None:
    """ValueError when `spec` names no agent that can play in `setting`."""
    if setting == "real":
        from maag.lab.hidden import make_entrant

        make_entrant(spec)
        return
    if spec.startswith(("cheat:", "peek:")):
        raise ValueError("cheat: and peek: twins play in the real setting only (the research "
                         "setting shows every agent the whole state)")
    from maag.bots import parse_agent

    parse_agent(spec)


def _entrant(r: _Reader, raw: Any, path: tuple[str | int, ...], setting: str) -> Entrant:
    if not isinstance(raw, dict):
        raise r.fail(path, f"{path[0]} must be a table with label and spec")
    for k in raw:
        if k not in AGENT_KEYS:
            raise r.fail((*path, k), f"unknown key {k!r} of an agent; known: {', '.join(sorted(AGENT_KEYS))}")
    label = r.get("label", str, path=(*path, "label"))
    spec = r.get("spec", str, path=(*path, "spec"))
    try:
        _check_spec(spec, setting)
    except ValueError as e:  # AgentError is a ValueError
        raise r.fail((*path, "spec"), f"agent {spec!r}: {e}") from None
    e_ms = r.get("ms", (int, float), None, path=(*path, "ms"))
    e_its = r.get("iterations", int, None, path=(*path, "iterations"))
    if e_ms is not None and e_its is not None:
        raise r.fail((*path, "ms"), "give an agent's budget as ms or as iterations, one of them")
    if e_ms is not None and e_ms <= 0 or e_its is not None and e_its < 1:
        raise r.fail((*path, "ms" if e_ms is not None else "iterations"), "an agent's budget must be above 0")
    scale = float(r.get("scale", (int, float), 1.0, path=(*path, "scale")))
    if scale <= 0:
        raise r.fail((*path, "scale"), "scale must be above 0")
    fixed = r.get("fixed", bool, False, path=(*path, "fixed"))
    if fixed and e_ms is None and e_its is None:
        raise r.fail((*path, "fixed"), "a fixed agent needs its own budget (ms or iterations)")
    return Entrant(label, spec, None if e_ms is None else float(e_ms), e_its, scale, fixed)


def _entrants(r: _Reader, fmt: str, setting: str) -> tuple[tuple[Entrant, ...], Entrant | None]:
    """The agents and, in a gauntlet, the opponent; their labels all different."""
    agents = tuple(_entrant(r, a, ("agents", i), setting) for i, a in enumerate(r.get("agents", list)))
    labels = [a.label for a in agents]
    opponent = None
    if fmt == "gauntlet":
        opponent = _entrant(r, r.get("opponent", dict), ("opponent",), setting)
        labels.append(opponent.label)
    elif "opponent" in r.d:
        raise r.fail(("opponent",), "only a gauntlet has an opponent")
    for i, lab in enumerate(labels):
        if lab in labels[:i]:
            raise r.fail(("agents", i, "label") if i < len(agents) else ("opponent", "label"),
                         f"two agents are labelled {lab!r}")
    return agents, opponent


def _pairs(r: _Reader, fmt: str, labels: list[str]) -> tuple[tuple[str, str], ...]:
    """The pairs of the pairs format (none in the others)."""
    if fmt != "pairs":
        if "pairs" in r.d:
            raise r.fail(("pairs",), "only the pairs format lists pairs")
        return ()
    pairs: list[tuple[str, str]] = []
    for p in r.get("pairs", list):
        if not (isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p)):
            raise r.fail(("pairs",), f"a pair is two agent labels, [\"A\", \"B\"], not {p!r}")
        for x in p:
            if x not in labels:
                raise r.fail(("pairs",), f"no agent is labelled {x!r}")
        if p[0] == p[1]:
            raise r.fail(("pairs",), f"an agent cannot play itself ({p[0]!r})")
        pairs.append((p[0], p[1]))
    if not pairs:
        raise r.fail(("pairs",), "name at least one pair")
    return tuple(pairs)


def _check_playable(r: _Reader, study: Study) -> None:
    """The game starts with the options and at every point of the sweep (the C rules check
    ranges when a game starts), and every pairing sets two different specs against each other."""
    from maag.engine import Game

    game, options = study.game, study.options
    try:
        Game(game, dict(options)).new_state(1)
    except (ValueError, TypeError) as e:
        raise r.fail(("options",), f"{game} refuses the options {options}: {e}") from None
    for value in study.point_values:
        try:
            Game(game, study.options_at(value)).new_state(1)
        except (ValueError, TypeError) as e:
            raise r.fail(("sweep", "points") if study.sweep else ("options",),
                         f"{game} refuses {study.options_at(value)}: {e}") from None
    for p in pairings(study):
        if p.a.spec == p.b.spec:
            raise r.fail(("agents",), f"{p.a.label} and {p.b.label} have the same spec; a pairing needs "
                                      "two different specs (add a setting to one)")


def scaled(study: Study, factor: float) -> Study:
    """The study with every budget multiplied by `factor` (iterations at least 1, ms at least
    1): a quick look at a study, whose games the data file keeps apart from the real ones."""
    if not factor > 0:
        raise StudyError(study.source, None, f"the budget factor must be above 0, not {factor:g}")

    def its(n: int | None) -> int | None:
        return None if n is None else max(1, round(n * factor))

    def ms(x: float | None) -> float | None:
        return None if x is None else max(1.0, x * factor)

    def ent(e: Entrant) -> Entrant:
        return dataclasses.replace(e, ms=ms(e.ms), iterations=its(e.iterations))

    sweep = study.sweep
    if sweep and sweep.over in BUDGETS:
        f = its if sweep.over == "iterations" else ms
        sweep = Sweep(sweep.over, tuple(dict.fromkeys(f(v) for v in sweep.points)))
    return dataclasses.replace(study, ms=ms(study.ms), iterations=its(study.iterations), sweep=sweep,
                               agents=tuple(ent(a) for a in study.agents),
                               opponent=ent(study.opponent) if study.opponent else None)


# ---- what is played ------------------------------------------------------------------------

def pairings(study: Study) -> list[Pairing]:
    """Every pairing at every point, point by point."""
    by_label = {a.label: a for a in study.agents}
    if study.opponent:
        by_label[study.opponent.label] = study.opponent
    if study.format == "round-robin":
        duels = [(a, b) for i, a in enumerate(study.agents) for b in study.agents[i + 1:]]
    elif study.format == "gauntlet":
        assert study.opponent is not None
        duels = [(a, study.opponent) for a in study.agents]
    else:
        duels = [(by_label[a], by_label[b]) for a, b in study.pairs]
    out = []
    for value in study.point_values:
        opts = study.options_at(value)
        for a, b in duels:
            ab, bb = study.budget(a, value), study.budget(b, value)
            ident = {"point": value, "game": study.game, "options": opts, "setting": study.setting,
                     "a": a.spec, "b": b.spec, "a_budget": list(ab), "b_budget": list(bb)}
            key = hashlib.sha1(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:16]
            out.append(Pairing(value, a, b, ab, bb, opts, key))
    return out


def deal_seeds(seed: int, deals: int) -> list[int]:
    from .hidden import deal_seeds as seeds

    return seeds(seed, deals)


def tasks(study: Study, games: int | None = None) -> list[Task]:
    """Every game of the study, deal by deal (a partial run covers every pairing): each deal
    from both seats, the same deals at every point and for every pairing."""
    per_pair = (games or study.games) + (games or study.games) % 2
    ps = pairings(study)
    out = []
    for k, s in enumerate(deal_seeds(study.seed, per_pair // 2)):
        for p in ps:
            for seat in (0, 1):
                out.append(Task(p, 2 * k + seat, seat, s, study.game, study.setting))
    return out


def play(t: Task) -> dict[str, Any]:
    """Play one game of the study; its record for the data file."""
    p = t.pairing
    specs = [p.a.spec, p.b.spec]
    budgets = {p.a.spec: p.a_budget, p.b.spec: p.b_budget}
    if t.setting == "research":
        from .arena import ArenaConfig, GameTask, play_game

        cfg = ArenaConfig(turn_ms=None, iterations=None, game=t.game, game_config=dict(p.options),
                          view="full",
                          agent_iterations={s: b[1] for s, b in budgets.items() if b[1] is not None},
                          agent_turn_ms={s: b[0] for s, b in budgets.items()})
        r = play_game(GameTask(t.index, 0, 1, t.a_seat, t.seed), specs, cfg)
        winner, turns, seconds, forfeit = r.winner, r.turns, r.seconds, r.forfeit
        its = [r.iterations.get(0, 0.0), r.iterations.get(1, 0.0)]
    else:
        from .hidden import HiddenConfig
        from .hidden import play_game as play_hidden

        hcfg = HiddenConfig(turn_ms=None, iterations=None, game=t.game, game_config=dict(p.options),
                            agent_turn_ms={s: b[0] for s, b in budgets.items()},
                            agent_iterations={s: b[1] for s, b in budgets.items()})
        g = play_hidden(0, t.index, (p.a.spec, p.b.spec), t.a_seat, t.seed, hcfg)
        winner, turns, seconds, forfeit = g.winner, g.turns, g.seconds, g.forfeit
        its = list(g.iterations)
    return {"key": p.key, "point": p.point, "a": p.a.label, "b": p.b.label, "a_spec": p.a.spec,
            "b_spec": p.b.spec, "a_budget": list(p.a_budget), "b_budget": list(p.b_budget), "index": t.index,
            "seed": t.seed, "a_seat": t.a_seat, "winner": None if winner is None else "ab"[winner],
            "turns": turns, "seconds": round(seconds, 3), "forfeit": forfeit,
            "iterations": [round(x, 1) for x in its]}


def records(data: str | Path) -> dict[str, dict[tuple[int, int], dict[str, Any]]]:
    """The data file's games by pairing key, then by (index, seed); a game recorded twice
    counts once (the first record)."""
    out: dict[str, dict[tuple[int, int], dict[str, Any]]] = {}
    for d in datafile.read(data):
        try:
            out.setdefault(d["key"], {}).setdefault((d["index"], d["seed"]), d)
        except (KeyError, TypeError):
            continue
    return out


def run(study: Study, data: str | Path, *, games: int | None = None, jobs: int = 1, dask: str | None = None,
        on_start: Callable[[int, int], None] | None = None,
        on_game: Callable[[dict[str, Any]], None] | None = None) -> int:
    """Play the games of `study` that `data` does not hold yet, appending each to `data` as
    it ends; `on_start(to_play, held)` first, `on_game(record)` after each game. Games run
    `jobs` at a time, one process each, or on the Dask scheduler at `dask`. Returns the
    number of games played."""
    from maag.engine.machine import machine

    have = records(data)
    todo = [t for t in tasks(study, games) if (t.index, t.seed) not in have.get(t.pairing.key, {})]
    if on_start:
        on_start(len(todo), sum(len(v) for k, v in have.items() if k in {p.key for p in pairings(study)}))
    if not todo:
        return 0
    cpu = machine()["cpu"]
    with datafile.append(data) as sink:
        def collect(it: Iterable[dict[str, Any]]) -> None:
            for rec in it:
                rec = {**rec, "study": study.name, "cpu": cpu}
                datafile.write(sink, rec)
                if on_game:
                    on_game(rec)

        if dask:
            from distributed import Client
            from distributed import as_completed as dask_completed

            with Client(dask) as client:
                futures = client.map(play, todo, pure=False)
                collect(f.result() for f in dask_completed(futures))
        else:
            from .arena import in_processes

            collect(in_processes(play, todo, jobs))
    return len(todo)


# ---- results -------------------------------------------------------------------------------

@dataclass
class Cell:
    """A pairing's results: A's wins, draws and losses, its score with a 95% Wilson interval
    (draws count half), and both agents' mean iterations per turn."""

    pairing: Pairing
    wins: int = 0
    draws: int = 0
    losses: int = 0
    forfeits: int = 0
    turns: list[int] = field(default_factory=list)
    iterations: tuple[float, float] = (math.nan, math.nan)

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        return (self.wins + self.draws / 2) / self.games if self.games else math.nan

    @property
    def ci(self) -> tuple[float, float]:
        return wilson(self.wins + self.draws / 2, self.games)

    def cell(self) -> str:
        if not self.games:
            return "—"
        lo, hi = self.ci
        return f"{100 * self.score:.0f}% [{100 * lo:.0f}–{100 * hi:.0f}]"


def cells(study: Study, data: str | Path, games: int | None = None) -> list[Cell]:
    """Every pairing's results from `data`: the games of the study's schedule (up to `games`
    per pairing, by default the study's) that the file holds."""
    per_pair = (games or study.games) + (games or study.games) % 2
    seeds = set(deal_seeds(study.seed, per_pair // 2))
    have = records(data)
    out = []
    for p in pairings(study):
        c = Cell(p)
        its_a, its_b = [], []
        for (index, seed), d in sorted(have.get(p.key, {}).items()):
            if index >= per_pair or seed not in seeds:
                continue
            c.wins += d["winner"] == "a"
            c.losses += d["winner"] == "b"
            c.draws += d["winner"] is None
            c.forfeits += bool(d.get("forfeit"))
            c.turns.append(d["turns"])
            if d["iterations"][0] > 0:
                its_a.append(d["iterations"][0])
            if d["iterations"][1] > 0:
                its_b.append(d["iterations"][1])
        c.iterations = (statistics.fmean(its_a) if its_a else math.nan,
                        statistics.fmean(its_b) if its_b else math.nan)
        out.append(c)
    return out


def _needs_budget(spec: str) -> bool:
    from maag.bots import parse_agent

    for prefix in ("cheat:", "peek:"):
        spec = spec.removeprefix(prefix)
    return parse_agent(spec).spec.needs_budget


def _budget_text(b: tuple[float | None, int | None]) -> str:
    ms, its = b
    if its is not None:
        return f"{its:,} iterations"
    return f"{ms:g} ms" if ms is not None else "none"


def _point_text(study: Study, value: Any) -> str:
    if study.sweep is None:
        return ""
    return {"ms": f"{value:g} ms", "iterations": f"{value:,} iterations"}.get(study.sweep.over,
                                                                             f"{study.sweep.over} = {value}")


SETTING_TEXT = {
    "research": "the research setting: in-process games, agents search the whole state (open hands), "
                "seeded draws (arena.play_game, as `maag arena --view full`)",
    "real": "the real game's information: in-process games, agents plan from their seat's observation "
            "(hidden hands), random draws (hidden.play_game, as `maag experiment hidden`; not through the "
            "referee)",
}


def markdown(study: Study, cs: Sequence[Cell], figures: Sequence[str] = (), command: str = "",
             machines: Sequence[str] = ()) -> str:
    """The study's report: setup, the tables with 95% intervals, the figures."""
    played = [c for c in cs if c.games]
    n_games = sum(c.games for c in cs)
    out = [f"# {study.title}", "",
           f"<!-- Generated by `maag experiment report {study.name}` from its data file; edit "
           f"lab/studies/{study.name}.toml, not this file. -->", ""]
    if study.about:
        out += [study.about.strip(), ""]
    opts = ", ".join(f"{k} {v}" for k, v in study.options_at(study.point_values[0]).items()
                     if not (study.sweep and k == study.sweep.over))
    out += ["## Setup", "",
            f"- Game: {study.game} ({opts}); {SETTING_TEXT[study.setting]}.",
            f"- Format: {study.format}; {study.games + study.games % 2} games per pairing and point "
            f"(each deal from both seats, the same deals everywhere), seed {study.seed}.",
            ]
    if study.sweep:
        out.append(f"- Sweep over {study.sweep.over}: {', '.join(map(str, study.sweep.points))}.")
    budgets = []
    for e in [*study.agents, *([study.opponent] if study.opponent else [])]:
        if not _needs_budget(e.spec):
            budgets.append(f"{e.label} `{e.spec}`: none needed")
            continue
        b = "swept" if (study.sweep and study.sweep.over in BUDGETS and not e.fixed) else _budget_text(
            study.budget(e, study.point_values[0]))
        if study.sweep and study.sweep.over == "iterations" and not e.fixed and e.scale != 1:
            b += f" (× {e.scale:g})"
        budgets.append(f"{e.label} `{e.spec}`: {b}")
    out.append("- Agents and their budgets per turn (iterations in each kernel's own unit: MCTS iterations, "
               "OEP generations, greedy turn outcomes): " + "; ".join(budgets) + ".")
    if command:
        out.append(f"- Command: `{command}` (`--jobs N` plays N games at once; with a budget in ms no more "
                   "than the machine's cores).")
    if machines:
        out.append(f"- Machine (`lscpu` model, as recorded with each game): {'; '.join(machines)}.")
    out.append(f"- Games in the data file for this declaration: {n_games} of "
               f"{len(cs) * (study.games + study.games % 2)}; forfeits {sum(c.forfeits for c in played)}, "
               f"draws {sum(c.draws for c in played)}, mean turns "
               f"{statistics.fmean(t for c in played for t in c.turns) if played else 0:.1f}.")
    out.append("")
    if not n_games:
        out += ["**Not run yet**: the data file holds no game of this declaration. The command above "
                "plays it (on a quiet machine for a budget in ms), then `maag experiment report "
                f"{study.name}` writes this page again.", ""]
    out += ["## Results", "", "Scores are (wins + draws/2) / games of the row agent, in percent, with the "
            "95% Wilson interval; n is the games played.", ""]
    if study.format == "round-robin":
        for value in study.point_values:
            at = [c for c in cs if c.pairing.point == value]
            if study.sweep:
                out += [f"### {_point_text(study, value)}", ""]
            out += _matrix(study, at)
    else:
        rows = list(dict.fromkeys((c.pairing.a.label, c.pairing.b.label) for c in cs))
        vals = study.point_values
        head = [_point_text(study, v) or "score" for v in vals]
        out += ["| agent | opponent | " + " | ".join(head) + " |", "|---|---|" + "---|" * len(vals)]
        for a, b in rows:
            line = []
            for v in vals:
                c = _at(cs, v, a, b)
                line.append(f"{c.cell()} (n={c.games})" if c.games else "—")
            out.append(f"| {a} | {b} | " + " | ".join(line) + " |")
        out += ["", "Mean iterations per turn of the agent (its kernel's unit):", "",
                "| agent | " + " | ".join(_point_text(study, v) or "per turn" for v in vals) + " |",
                "|---|" + "---|" * len(vals)]
        for a, b in rows:
            line = []
            for v in vals:
                c = _at(cs, v, a, b)
                line.append("—" if math.isnan(c.iterations[0]) else f"{c.iterations[0]:,.0f}")
            out.append(f"| {a} | " + " | ".join(line) + " |")
        out.append("")
    for f in figures:
        out += [f"![{study.title}]({f})", ""]
    return "\n".join(out)


def _matrix(study: Study, at: Sequence[Cell]) -> list[str]:
    labels = [a.label for a in study.agents]
    out = ["| row vs column | " + " | ".join(labels) + " | overall |", "|---|" + "---|" * (len(labels) + 1)]
    for i, row in enumerate(labels):
        line = []
        w = d = n = 0
        for j, col in enumerate(labels):
            if i == j:
                line.append("—")
                continue
            c = next((c for c in at if (c.pairing.a.label, c.pairing.b.label) in ((row, col), (col, row))),
                     None)
            if c is None or not c.games:
                line.append("—")
                continue
            mine = c if c.pairing.a.label == row else _flip(c)
            w, d, n = w + mine.wins, d + mine.draws, n + mine.games
            line.append(mine.cell())
        if n:
            lo, hi = wilson(w + d / 2, n)
            line.append(f"**{100 * (w + d / 2) / n:.0f}%** [{100 * lo:.0f}–{100 * hi:.0f}]")
        else:
            line.append("—")
        out.append(f"| {row} | " + " | ".join(line) + " |")
    out.append("")
    its = []
    for a in study.agents:
        vals = [c.iterations[0] if c.pairing.a.label == a.label else c.iterations[1] for c in at
                if a.label in (c.pairing.a.label, c.pairing.b.label)]
        vals = [v for v in vals if not math.isnan(v)]
        if vals:
            its.append(f"{a.label} {statistics.fmean(vals):,.0f}")
    if its:
        out += ["Mean iterations per turn (each kernel's unit): " + ", ".join(its) + ".", ""]
    return out


def _flip(c: Cell) -> Cell:
    p = c.pairing
    return Cell(Pairing(p.point, p.b, p.a, p.b_budget, p.a_budget, p.options, p.key), c.losses, c.draws,
                c.wins, c.forfeits, c.turns, (c.iterations[1], c.iterations[0]))


def _at(cs: Sequence[Cell], value: Any, a: str, b: str) -> Cell:
    return next(c for c in cs
                if c.pairing.point == value and c.pairing.a.label == a and c.pairing.b.label == b)


def overall(study: Study, cs: Sequence[Cell], value: Any) -> dict[str, tuple[float, float, float, int]]:
    """A round robin's overall score of every agent at a point: (score, lo, hi, games)."""
    out = {}
    for a in study.agents:
        w = d = n = 0
        for c in cs:
            if c.pairing.point != value or not c.games:
                continue
            if c.pairing.a.label == a.label:
                w, d, n = w + c.wins, d + c.draws, n + c.games
            elif c.pairing.b.label == a.label:
                w, d, n = w + c.losses, d + c.draws, n + c.games
        lo, hi = wilson(w + d / 2, n)
        out[a.label] = ((w + d / 2) / n if n else math.nan, lo, hi, n)
    return out


def _step(study: Study) -> float:
    """The smallest gap between the sweep's points (1 without a numeric sweep)."""
    pts = sorted(v for v in study.point_values if isinstance(v, (int, float)))
    gaps = [b - a for a, b in zip(pts, pts[1:], strict=False) if b > a]
    return float(min(gaps)) if gaps else 1.0


def plot(study: Study, cs: Sequence[Cell], path: str | Path) -> Path:
    """The study's figure as a PNG: each agent's score against the sweep (or, with plot_x =
    iterations, against its measured iterations per turn), with 95% intervals; a round robin
    without a sweep as a bar per agent (overall score)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(8, 4.6))
    if study.format == "round-robin":
        vals = study.point_values
        width = 0.8 / len(vals)
        for k, v in enumerate(vals):
            ov = overall(study, cs, v)
            names = list(ov)
            xs = [i + (k - (len(vals) - 1) / 2) * width for i in range(len(names))]
            ys = [ov[n][0] for n in names]
            err = [[max(0.0, ov[n][0] - ov[n][1]) if ov[n][3] else 0.0 for n in names],
                   [max(0.0, ov[n][2] - ov[n][0]) if ov[n][3] else 0.0 for n in names]]
            ax.bar(xs, ys, width, yerr=err, capsize=3, label=_point_text(study, v) or None)
            ax.set_xticks(range(len(names)), names, rotation=20)
        ax.set_ylabel("overall score (95% interval)")
        if study.sweep:
            ax.legend()
    else:
        series = list(dict.fromkeys((c.pairing.a.label, c.pairing.b.label) for c in cs))
        logx = study.plot_x == "iterations" or bool(study.sweep and study.sweep.over in BUDGETS)
        for k, (a, b) in enumerate(series):
            pts = [c for c in cs if (c.pairing.a.label, c.pairing.b.label) == (a, b) and c.games]
            if study.plot_x == "iterations":
                pts = [c for c in pts if not math.isnan(c.iterations[0])]
                xs = [c.iterations[0] for c in pts]
            else:
                xs = [c.pairing.point if study.sweep else 0 for c in pts]
                # the curves side by side, a little apart, so that their intervals can be told apart
                shift = (k - (len(series) - 1) / 2) * 0.012
                xs = [x * 10 ** shift if logx else x + shift * 10 * _step(study) for x in xs]
            if not pts:
                continue
            ys = [c.score for c in pts]
            err = [[c.score - c.ci[0] for c in pts], [c.ci[1] - c.score for c in pts]]
            name = a if study.format == "gauntlet" else f"{a} vs {b}"
            ax.errorbar(xs, ys, yerr=err, fmt="o-", capsize=3, label=name)
        ax.axhline(0.5, color="grey", lw=0.8)
        if logx:
            ax.set_xscale("log")
        if study.plot_x == "iterations":
            ax.set_xlabel("mean iterations per turn (each kernel's unit)")
        elif study.sweep:
            ax.set_xlabel({"ms": "ms per turn", "iterations": "iterations per turn"}.get(
                study.sweep.over, study.sweep.over))
        opp = f" against {study.opponent.label}" if study.opponent else ""
        ax.set_ylabel(f"score{opp} (95% interval)")
        ax.legend(fontsize=8)
    ax.set_ylim(0, 1)
    ax.set_title(study.title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def report(study: Study, data: str | Path, docs: str | Path, games: int | None = None,
           command: str = "") -> list[Path]:
    """Write docs/studies/NAME.md and its PNG (when it has games) from the data file; returns
    the paths written."""
    folder = Path(docs) / "studies"
    folder.mkdir(parents=True, exist_ok=True)
    cs = cells(study, data, games)
    pngs = [plot(study, cs, folder / f"{study.name}.png")] if any(c.games for c in cs) else []
    keys = {c.pairing.key for c in cs}
    cpus = sorted({str(d.get("cpu", "?")) for k, v in records(data).items() if k in keys for d in v.values()})
    text = markdown(study, cs, [p.name for p in pngs], command or f"maag experiment {study.name}",
                    cpus)
    md = folder / f"{study.name}.md"
    md.write_text(text.rstrip("\n") + "\n")
    return [md, *pngs]
