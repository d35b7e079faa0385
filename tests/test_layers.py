"""The layering, enforced: dependencies between the parts of maag point one way.

    engine    (engine_c/)  imports nothing of maag
    protocol  (protocol/)  imports nothing of maag
    stats     (stats/)     imports nothing of maag
    clients   (clients/)   protocol only: a Python bot runs without the C core
    bots      (bots/)      engine, clients, protocol, stats, rl (OpenSpiel's agents use its door)
    lab       (lab/)       bots, engine, stats, rl, clients, protocol: the research bench
                           over the bundled agents; nothing imports it
    server    (server/)    protocol, engine, stats; it starts bundled bots as processes
    rl        (rl/)        engine only: the games as learning environments

Every import counts: at module level, inside functions, under TYPE_CHECKING, relative
ones (resolved), module names handed to `importlib.import_module`, `__import__` or
`find_spec` (strings, or f-strings read as far as they can be: a name this check cannot
read is a violation too), and strings written "maag.x.y:function" (the form entry points
and registries use).
A process launch (`[sys.executable, "-m", "maag.server", ...]`) is not an import, and a bot
package's program (a folder with `maag-bot.toml`, such as server/bench/packages/*) is not a
module of the part it ships with: it runs as its own process, in the sandbox. The
entry points of pyproject.toml register commands from any part (that is how `maag arena`
reaches the command line from lab/ and `maag bot run` from bots/); each must name a function that
exists. A game's own tests (engine_c/games/<name>/tests) use the engine only, not even
naming another part in a string, and no part imports a name starting with `_` (a private
module or name) of another part.

Inside server/ (issue 55), a room is a direct subfolder (net, storage, compete, fleet,
hosting, ...) or a top-level module: no import circle among server/'s modules (every import
counts, as above), no room imports a `_` name of another, no private attribute is reached
through another object (`srv._drop`), and no module is over 500 lines."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = {"engine_c": "engine", "protocol": "protocol", "stats": "stats", "clients": "clients",
           "bots": "bots", "lab": "lab", "server": "server", "rl": "rl"}
ALLOWED: dict[str, set[str]] = {
    "engine": set(),
    "protocol": set(),
    "stats": set(),
    "clients": {"protocol"},
    "bots": {"engine", "clients", "protocol", "stats", "rl"},
    "lab": {"bots", "engine", "clients", "protocol", "stats", "rl"},
    "server": {"protocol", "engine", "stats"},
    "rl": {"engine"},
}
_TARGET = re.compile(r"^maag\.(\w+)")
_REGISTRATION = re.compile(r"^(maag(?:\.\w+)+):\w+$")


@dataclass(frozen=True)
class Violation:
    path: str
    line: int
    part: str
    target: str
    how: str

    def __str__(self) -> str:
        allowed = ", ".join(sorted(ALLOWED[self.part])) or "nothing of maag"
        return (f"{self.path}:{self.line}: {self.part} imports {self.target} ({self.how}); "
                f"{self.part} may import {allowed}")


def _module_name(root: Path, folder: str, path: Path) -> str:
    rel = path.relative_to(root / folder).with_suffix("")
    parts = [p for p in rel.parts if p != "__init__"]
    return ".".join(["maag", FOLDERS[folder], *parts])


COMPUTED = "<a name this check cannot read>"


def _static_name(call: ast.Call, module: str, package: str) -> str | None:
    """The module name a call of import_module/__import__/find_spec names, as far as it can
    be read from the source: a string, or an f-string whose leading parts are strings,
    __name__ or __package__ (a relative name resolved against the package argument when
    that is __name__ or __package__). None when nothing of it can be read."""
    known = {"__name__": module, "__package__": package}

    def text(node: ast.expr) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name) and node.id in known:
            return known[node.id]
        if isinstance(node, ast.JoinedStr):
            out = ""
            for v in node.values:
                piece = text(v.value) if isinstance(v, ast.FormattedValue) else text(v)
                if piece is None:
                    break
                out += piece
            return out or None
        return None

    name = text(call.args[0])
    if name is None or (name.startswith("maag") and not _TARGET.match(name)):
        return None  # nothing, or not even which part of maag
    if name.startswith("."):
        anchor = call.args[1] if len(call.args) > 1 else next(
            (k.value for k in call.keywords if k.arg == "package"), None)
        base = text(anchor) if anchor is not None else None
        if base is None:
            return None
        name = base + name
    return name.rstrip(".")


def _imports(tree: ast.AST, module: str, is_package: bool) -> list[tuple[int, str, str]]:
    """(line, imported module, how) for every import-like thing in a module's tree."""
    out: list[tuple[int, str, str]] = []
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name, "import") for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                name = ".".join(base + ([node.module] if node.module else []))
                how = "relative import"
            else:
                name, how = node.module or "", "import"
            out.append((node.lineno, name, how))
            out += [(node.lineno, f"{name}.{a.name}", how) for a in node.names if name == "maag"]
        elif isinstance(node, ast.Call):
            fn = node.func
            called = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else ""
            if called in ("import_module", "__import__", "find_spec") and node.args:
                read = _static_name(node, module, package)
                out.append((node.lineno, read or COMPUTED, f"{called}() of a name"))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            m = _REGISTRATION.match(node.value)
            if m:
                out.append((node.lineno, m.group(1), "module:function string"))
    return out


def part_modules(root: Path, only: str | None = None) -> Iterator[tuple[str, Path, str, ast.Module]]:
    """(part, path, module name, parsed tree) of every module of every part (or of the part
    `only`) in the tree at `root`: a game's own tests and a bot package's program are no
    modules of their part."""
    for folder, part in FOLDERS.items():
        base = root / folder
        if not base.is_dir() or only not in (None, part):
            continue
        for path in sorted(base.rglob("*.py")):
            rel = path.relative_to(base)
            if "tests" in rel.parts[:-1]:
                continue  # a game's own tests (engine_c/games/<name>/tests) are tests, not engine
            folders = (base / Path(*rel.parts[:i]) for i in range(1, len(rel.parts)))
            if any((f / "maag-bot.toml").is_file() for f in folders):
                continue  # a bot package (server/bench/packages/*): a program of its own, sandboxed
            yield part, path, _module_name(root, folder, path), ast.parse(path.read_text(encoding="utf-8"),
                                                                          str(path))


def check_tree(root: Path) -> list[Violation]:
    """Every import of a part of maag that its layer does not allow, in the tree at `root`."""
    found = []
    parts_of = {v: v for v in FOLDERS.values()}
    for part, path, module, tree in part_modules(root):
        for line, name, how in _imports(tree, module, path.name == "__init__.py"):
            if name == COMPUTED:  # an import nobody can check is a violation too
                found.append(Violation(str(path.relative_to(root)), line, part, name, how))
                continue
            m = _TARGET.match(name)
            if not m or m.group(1) not in parts_of:
                continue
            target = m.group(1)
            if target != part and target not in ALLOWED[part]:
                found.append(Violation(str(path.relative_to(root)), line, part, name, how))
    return found


def test_every_import_points_the_allowed_way() -> None:
    violations = check_tree(ROOT)
    assert not violations, "imports against the layering:\n" + "\n".join(map(str, violations))


def private_imports(root: Path) -> list[str]:
    """Every import, by a module of one part, of a name starting with `_` from another part:
    a private module (`maag.engine._lowlevel`) or a private name (`from maag.bots.agents
    import _register`). A part uses another through its public face only."""
    found = []
    for part, path, module, tree in part_modules(root):
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    stem = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    source = ".".join(stem + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                names = [f"{source}.{a.name}" for a in node.names]
            else:
                continue
            for name in names:
                m = _TARGET.match(name)
                if m and m.group(1) != part and any(p.startswith("_") for p in name.split(".")[2:]):
                    found.append(f"{path.relative_to(root)}:{node.lineno}: {part} imports {name}")
    return found


def test_no_part_imports_another_parts_private_names() -> None:
    found = private_imports(ROOT)
    assert not found, "private names imported across parts:\n" + "\n".join(found)


def test_the_private_check_finds_planted_imports(tmp_path: Path) -> None:
    (tmp_path / "rl").mkdir()
    (tmp_path / "rl" / "planted.py").write_text(
        "from maag.engine._lowlevel import ffi\n"        # 1: a private module
        "from maag.engine.search import _algo\n"         # 2: a private name
        "import maag.engine._lowlevel\n"                 # 3
        "from maag.engine import Game\n"                 # 4: public
        "from .encoding import _Run\n"                   # 5: its own part's
    )
    assert private_imports(tmp_path) == [
        "rl/planted.py:1: rl imports maag.engine._lowlevel.ffi",
        "rl/planted.py:2: rl imports maag.engine.search._algo",
        "rl/planted.py:3: rl imports maag.engine._lowlevel",
    ]


def game_test_violations(root: Path) -> list[str]:
    """What a game's own tests (engine_c/games/<name>/tests) use of maag beyond the engine:
    imports of another part, and other parts named in strings (a `-m maag.server` command).
    Tests of agents, of the referee or of the replay view live with those parts."""
    found = []
    for path in sorted((root / "engine_c" / "games").glob("*/tests/*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        named = [(n.lineno, n.value) for n in ast.walk(tree)
                 if isinstance(n, ast.Constant) and isinstance(n.value, str)]
        for line, name in [(line, name) for line, name, _ in _imports(tree, "tests", False)] + named:
            m = _TARGET.match(name)
            if m and m.group(1) != "engine":
                found.append(f"{path.relative_to(root)}:{line}: {name}")
    return found


def test_a_games_own_tests_use_the_engine_only() -> None:
    found = game_test_violations(ROOT)
    assert not found, "a game's own tests use another part of maag:\n" + "\n".join(found)


def test_the_game_tests_check_finds_a_planted_use(tmp_path: Path) -> None:
    tests = tmp_path / "engine_c" / "games" / "chess" / "tests"
    tests.mkdir(parents=True)
    (tests / "test_chess.py").write_text(
        "import subprocess, sys\n"
        "from maag.engine import Game\n"                                   # 2: allowed
        "from maag.bots import make_agent\n"                               # 3
        "def f():\n"
        "    subprocess.run([sys.executable, '-m', 'maag.server', 'match'])\n"  # 5
    )
    assert game_test_violations(tmp_path) == [
        "engine_c/games/chess/tests/test_chess.py:3: maag.bots",
        "engine_c/games/chess/tests/test_chess.py:5: maag.server",
    ]


def test_entry_points_name_functions_that_exist() -> None:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    groups = data["project"]["entry-points"]
    assert {"maag.commands", "maag.bot_commands"} <= set(groups)
    folder_of = {f"maag.{v}": k for k, v in FOLDERS.items()}
    for group, eps in groups.items():
        for name, target in eps.items():
            module, _, func = target.partition(":")
            top = ".".join(module.split(".")[:2])
            path = ROOT / folder_of[top] / Path(*module.split(".")[2:])
            file = path.with_suffix(".py") if path.with_suffix(".py").is_file() else path / "__init__.py"
            assert file.is_file(), f"{group} {name}: no module {module}"
            defs = {n.name for n in ast.walk(ast.parse(file.read_text())) if isinstance(n, ast.FunctionDef)}
            assert func in defs, f"{group} {name}: {module} has no function {func}"


def test_the_check_finds_a_planted_wrong_import(tmp_path: Path) -> None:
    """Plant wrong-direction imports in a copy of a part and see each reported."""
    (tmp_path / "clients").mkdir()
    (tmp_path / "clients" / "__init__.py").write_text("")
    (tmp_path / "clients" / "planted.py").write_text(
        "import importlib\n"
        "import maag.server\n"                                   # 2: module level
        "from maag.protocol import Hello\n"                      # 3: allowed
        "def f():\n"
        "    from maag.engine import Game\n"                     # 5: lazy, in a function
        "    return importlib.import_module('maag.bots.agents')\n"  # 6: an importlib string
        "HOOK = 'maag.server.cli:main'\n"                        # 7: a registration string
        "def g(part):\n"
        "    return importlib.import_module(f'maag.{part}')\n"  # 9: not even the part can be read
        "def h(name):\n"
        "    return importlib.util.find_spec(name)\n"           # 11: nothing can be read
    )
    (tmp_path / "engine_c").mkdir()
    (tmp_path / "engine_c" / "__init__.py").write_text("from ..server import cli\n")  # relative, upwards
    found = {(v.path, v.line, v.target) for v in check_tree(tmp_path)}
    assert found == {
        ("clients/planted.py", 2, "maag.server"),
        ("clients/planted.py", 5, "maag.engine"),
        ("clients/planted.py", 6, "maag.bots.agents"),
        ("clients/planted.py", 7, "maag.server.cli"),
        ("clients/planted.py", 9, COMPUTED),
        ("clients/planted.py", 11, COMPUTED),
        ("engine_c/__init__.py", 1, "maag.server"),
    }, found


def test_the_lab_may_use_the_agents_but_no_part_uses_the_lab(tmp_path: Path) -> None:
    for folder in ("bots", "server", "lab"):
        (tmp_path / folder).mkdir()
    (tmp_path / "bots" / "planted.py").write_text("from maag.lab.arena import run_arena\n")
    (tmp_path / "server" / "planted.py").write_text("import maag.lab\n")
    (tmp_path / "lab" / "ok.py").write_text("from maag.bots import make_agent\n"
                                            "from maag.stats import wilson\n")
    found = {(v.path, v.target) for v in check_tree(tmp_path)}
    assert found == {("bots/planted.py", "maag.lab.arena"), ("server/planted.py", "maag.lab")}, found


def test_the_check_accepts_what_is_allowed(tmp_path: Path) -> None:
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "ok.py").write_text(
        "import sys\nfrom maag.engine import Game\nfrom maag.clients import Bot\nfrom . import agents\n"
        "CMD = [sys.executable, '-m', 'maag.server', 'bot', 'run']\n")
    assert check_tree(tmp_path) == []


# --- Inside server/: rooms that do not reach into each other (issue 55) -------------------
#
# A room is a direct subfolder of server/ (net, storage, compete, fleet, hosting, ...); a
# top-level module of server/ is a room of its own. Between the modules of server/: no
# import circle, no `_` name imported from another room, no private attribute reached
# through another object, and no module over MAX_LINES lines.

MAX_LINES = 500


def _private(name: str) -> bool:
    """A name starting with `_` that is not a dunder (`__init__`, `__version__`); a
    name-mangled `__x` is private."""
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _room(module: str) -> str:
    """The room of a module (or of an imported name) of maag.server: the first name after
    maag.server (its folder, or the top-level module itself); server/__init__ is "server"."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 else "server"


def server_modules(root: Path) -> dict[str, tuple[Path, ast.Module]]:
    """module name -> (path, tree) of every module of server/ in the tree at `root`."""
    return {name: (path, tree) for _part, path, name, tree in part_modules(root, "server")}


def _server_targets(tree: ast.AST, module: str, is_package: bool) -> list[tuple[int, str]]:
    """(line, dotted name) of everything a module of server/ imports: `import a.b` names a.b,
    `from a import b` names a.b (a module b, or a name b of module a: resolved later), the
    importlib strings and "module:function" strings of `_imports`."""
    out: list[tuple[int, str]] = []
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            out += [(node.lineno, f"{source}.{a.name}") for a in node.names]
    out += [(line, name) for line, name, how in _imports(tree, module, is_package)
            if how not in ("import", "relative import")]
    return out


def import_graph(root: Path) -> dict[str, dict[str, int]]:
    """module -> {module it imports -> the first line that does}, among server/'s modules.
    A dotted name resolves to the longest module it starts with (`from pkg import mod` names
    the module mod, `from pkg import Name` the package pkg); every import counts, lazy and
    TYPE_CHECKING ones too."""
    mods = server_modules(root)
    graph: dict[str, dict[str, int]] = {m: {} for m in mods}
    for module, (path, tree) in mods.items():
        for line, name in _server_targets(tree, module, path.name == "__init__.py"):
            while name and name not in mods:
                name = name.rpartition(".")[0]
            if name and name != module:
                graph[module].setdefault(name, line)
                graph[module][name] = min(graph[module][name], line)
    return graph


def strongly_connected(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, edges = work[-1]
            w = next(edges, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return sorted(found)


def import_circles(root: Path) -> list[str]:
    """Every import circle among server/'s modules: its modules, then one import line for
    each edge inside it (`path:line: a -> b`)."""
    mods = server_modules(root)
    graph = import_graph(root)
    out = []
    for comp in strongly_connected(graph):
        members = set(comp)
        edges = [f"  {mods[a][0].relative_to(root)}:{line}: {a} -> {b}"
                 for a in comp for b, line in sorted(graph[a].items()) if b in members]
        out.append(f"circle of {len(comp)}: {', '.join(comp)}\n" + "\n".join(edges))
    return out


def private_imports_across_rooms(root: Path) -> list[str]:
    """Every import, by a module of one room of server/, of a `_` name of another room: a
    private module (`from ..net import _mod`) or a private name (`from maag.server.net.games
    import _x`). Inside a room it is fine; dunder names (`__version__`) are not private."""
    found = []
    for module, (path, tree) in server_modules(root).items():
        for line, name in _server_targets(tree, module, path.name == "__init__.py"):
            if not name.startswith("maag.server.") or _room(name) == _room(module):
                continue
            if any(_private(p) for p in name.split(".")[2:]):
                found.append(f"{path.relative_to(root)}:{line}: {_room(module)} imports {name}")
    return found


# Private names of the standard library that are its public face: sys._getframe and
# os._exit are documented; a namedtuple's _replace, _asdict, _fields, _make, _field_defaults
# are its documented methods (the underscore only keeps them from clashing with fields).
PRIVATE_ATTRIBUTES_ALLOWED = {"_getframe", "_exit", "_replace", "_asdict", "_fields", "_make",
                              "_field_defaults"}


def private_attribute_reaches(root: Path) -> list[str]:
    """Every private attribute of server/ reached through another object: `x._name` (one
    leading underscore, or a mangled `__name`; not a dunder) where x is not `self`, `cls` or
    `super()`, e.g. `srv._drop`, `g._prompt_at`. Allowed:
    - a module's own private module-level names: they are read as names (`_helper()`), not
      as attributes, so this check never sees them;
    - `other._x` in a method of class C where `other` is a parameter annotated as C itself
      (`other: C`, `other: "C"`, `other: Self`): the class reading its own kind's state
      (`__eq__`, a `_replace`-style copy). Only the annotation is trusted; a parameter
      narrowed by isinstance or a local of the same class is not recognised, so it counts;
    - the standard library's documented privates in PRIVATE_ATTRIBUTES_ALLOWED.
    `getattr(x, "_name")` (and setattr, hasattr, delattr with a written name) is the same
    reach and counts too."""
    found = []

    def visit(node: ast.AST, path: Path, cls: str | None, own: set[str]) -> None:
        if isinstance(node, ast.ClassDef):
            cls, own = node.name, set()
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            params = args.posonlyargs + args.args + args.kwonlyargs
            own = {a.arg for a in params if cls is not None and _annotated_as(a.annotation, cls)}
        elif isinstance(node, ast.Attribute) and _private(node.attr) \
                and node.attr not in PRIVATE_ATTRIBUTES_ALLOWED:
            v = node.value
            through_self = (isinstance(v, ast.Name) and v.id in ({"self", "cls"} | own)) or (
                isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "super")
            if not through_self:
                found.append(f"{path.relative_to(root)}:{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in ("getattr", "setattr", "hasattr", "delattr") and len(node.args) > 1:
            v, name = node.args[0], node.args[1]
            if isinstance(name, ast.Constant) and isinstance(name.value, str) and _private(name.value) \
                    and not (isinstance(v, ast.Name) and v.id in ({"self", "cls"} | own)):
                found.append(f"{path.relative_to(root)}:{node.lineno}: {ast.unparse(node)}")
        for child in ast.iter_child_nodes(node):
            visit(child, path, cls, own)

    for _module, (path, tree) in server_modules(root).items():
        visit(tree, path, None, set())
    return found


def _annotated_as(annotation: ast.expr | None, cls: str) -> bool:
    if isinstance(annotation, ast.Name):
        return annotation.id in (cls, "Self")
    if isinstance(annotation, ast.Constant):
        return annotation.value in (cls, "Self")
    return False


def long_modules(root: Path) -> list[str]:
    """Every module of server/ over MAX_LINES lines."""
    found = []
    for _module, (path, _tree) in server_modules(root).items():
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > MAX_LINES:
            found.append(f"{path.relative_to(root)}: {n} lines")
    return found


def test_no_import_circle_among_servers_modules() -> None:
    found = import_circles(ROOT)
    assert not found, "import circles in server/:\n" + "\n".join(found)


def test_no_room_imports_another_rooms_private_names() -> None:
    found = private_imports_across_rooms(ROOT)
    assert not found, "private names imported across server/'s rooms:\n" + "\n".join(found)


def test_no_private_attribute_reached_through_another_object() -> None:
    found = private_attribute_reaches(ROOT)
    assert not found, "private attributes reached through another object in server/:\n" + "\n".join(found)


def test_no_module_of_server_is_over_500_lines() -> None:
    found = long_modules(ROOT)
    assert not found, f"modules of server/ over {MAX_LINES} lines:\n" + "\n".join(found)


def _plant(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / "server" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_circle_check_finds_planted_circles(tmp_path: Path) -> None:
    _plant(tmp_path, {
        "__init__.py": "",
        "net/__init__.py": "",
        "net/a.py": "from typing import TYPE_CHECKING\n"
                    "if TYPE_CHECKING:\n"
                    "    from .b import B\n",                               # 3: TYPE_CHECKING
        "net/b.py": "def f():\n"
                    "    from maag.server.net import c\n",                  # 2: lazy, names module c
        "net/c.py": "import importlib\n"
                    "M = importlib.import_module('maag.server.net.a')\n",   # 2: an importlib string
        "net/d.py": "from . import a\n",                                    # into the circle, not in it
        "store/__init__.py": "",
        "store/x.py": "from ..top import T\n",                              # 1: relative, upwards
        "top.py": "import maag.server.store.x\n",                           # 1
    })
    assert import_circles(tmp_path) == [
        "circle of 3: maag.server.net.a, maag.server.net.b, maag.server.net.c\n"
        "  server/net/a.py:3: maag.server.net.a -> maag.server.net.b\n"
        "  server/net/b.py:2: maag.server.net.b -> maag.server.net.c\n"
        "  server/net/c.py:2: maag.server.net.c -> maag.server.net.a",
        "circle of 2: maag.server.store.x, maag.server.top\n"
        "  server/store/x.py:1: maag.server.store.x -> maag.server.top\n"
        "  server/top.py:1: maag.server.top -> maag.server.store.x",
    ]


def test_the_circle_check_accepts_a_one_way_graph(tmp_path: Path) -> None:
    """A chain and a diamond are no circle; `from pkg import mod` is an edge to mod only, so a
    package whose __init__ re-exports from its modules is no circle with them either."""
    _plant(tmp_path, {
        "__init__.py": "",
        "net/__init__.py": "from .a import A\n",
        "net/a.py": "from . import b, c\nA = 1\n",
        "net/b.py": "from maag.server.net import d\n",
        "net/c.py": "from .d import D\nfrom maag.server.net import d\n",
        "net/d.py": "import maag.server.net.e\nD = 1\n",
        "net/e.py": "from maag.engine import Game\n",
    })
    assert import_circles(tmp_path) == []
    assert import_graph(tmp_path)["maag.server.net.b"] == {"maag.server.net.d": 1}


def test_the_room_check_finds_planted_private_imports(tmp_path: Path) -> None:
    _plant(tmp_path, {
        "compete/ladder.py": "from maag.server.net.games import _x\n"       # 1: a private name
                             "from ..net import _mod\n"                      # 2: a private module
                             "import maag.server.net._wire\n"                # 3
                             "from maag.server.net.games import Games\n"     # 4: public
                             "from .pairing import _pair\n"                  # 5: its own room
                             "from maag.server import __version__\n"         # 6: a dunder
                             "from maag.server.net import _Secret__key\n",   # 7: mangled is private
        "cli.py": "from .net.games import _x\n"                              # 1: a top-level module
                  "from .cli import _y\n",                                   # 2: its own room
        "net/games.py": "from ..cli import _z\n",                            # 1
    })
    assert sorted(private_imports_across_rooms(tmp_path)) == [
        "server/cli.py:1: cli imports maag.server.net.games._x",
        "server/compete/ladder.py:1: compete imports maag.server.net.games._x",
        "server/compete/ladder.py:2: compete imports maag.server.net._mod",
        "server/compete/ladder.py:3: compete imports maag.server.net._wire",
        "server/compete/ladder.py:7: compete imports maag.server.net._Secret__key",
        "server/net/games.py:1: net imports maag.server.cli._z",
    ]


def test_the_private_attribute_check_finds_planted_reaches(tmp_path: Path) -> None:
    _plant(tmp_path, {"net/links.py": (
        "import os, sys\n"
        "class Links:\n"
        "    def __init__(self, srv, other: 'Links', g: Games):\n"
        "        srv._drop(1)\n"                                     # 4: through another object
        "        self.x = g._prompt_at\n"                            # 5
        "        self._own = other._own\n"                           # 6: allowed, same class
        "        self.__n = self.srv.__hidden\n"                     # 7: mangled, through self.srv
        "        super()._setup()\n"                                 # allowed
        "        os._exit(sys._getframe().f_lineno)\n"               # allowed, the stdlib's
        "        self.t = self.t._replace(a=1)\n"                    # allowed, a namedtuple's
        "        self.d = self.__dict__\n"                           # a dunder: public
        "    @classmethod\n"
        "    def make(cls, o: object):\n"
        "        return cls._new(o._x)\n"                            # 14: o is not annotated Links
        "def outside(other: 'Links'):\n"
        "    return other._own\n"                                    # 16: not in a method of Links
        "_helper = 1\n"
        "print(_helper)\n"                                          # a module's own name: allowed
        "def late(site, self):\n"
        "    return getattr(site, '_server', getattr(self, '_s'))\n")})  # 20: getattr on site
    assert private_attribute_reaches(tmp_path) == [
        "server/net/links.py:4: srv._drop",
        "server/net/links.py:5: g._prompt_at",
        "server/net/links.py:7: self.srv.__hidden",
        "server/net/links.py:14: o._x",
        "server/net/links.py:16: other._own",
        "server/net/links.py:20: getattr(site, '_server', getattr(self, '_s'))",
    ]


def test_the_length_check_finds_a_long_module(tmp_path: Path) -> None:
    _plant(tmp_path, {"net/long.py": "x = 1\n" * (MAX_LINES + 1), "net/ok.py": "x = 1\n" * MAX_LINES})
    assert long_modules(tmp_path) == [f"server/net/long.py: {MAX_LINES + 1} lines"]


# -- the transport keeps bytes and limits, the lobby's seating who is seated where (issue 55) --

SEATING = frozenset({"games", "links", "reserved", "begun", "free_since", "free_slots", "max_games",
                     "concurrency"})
"""What a connection's seats and slots were called when the transport kept them: they are
server/net/seating.py's now, keyed by connection."""


def seating_on_the_transport(root: Path) -> list[str]:
    """Every name of SEATING given to a class of server/net/transport.py: assigned through
    `self` (`self.games = {}`), or defined in its body (a property, a method, a class
    attribute)."""
    path = root / "server" / "net" / "transport.py"
    found = []
    for cls in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(cls, ast.ClassDef):
            continue
        for node in ast.walk(cls):
            name = None
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) \
                    and isinstance(node.value, ast.Name) and node.value.id == "self":
                name = node.attr
            elif node in cls.body and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = node.name
            elif node in cls.body and isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                name = node.target.id
            elif node in cls.body and isinstance(node, ast.Assign):
                names = [t.id for t in node.targets if isinstance(t, ast.Name) and t.id in SEATING]
                name = names[0] if names else None
            if name in SEATING:
                found.append(f"{path.relative_to(root)}:{node.lineno}: {cls.name}.{name}")
    return found


def test_the_transport_keeps_no_seating() -> None:
    found = seating_on_the_transport(ROOT)
    assert not found, "the seating is the lobby's (server/net/seating.py), not the transport's:\n" \
        + "\n".join(found)


def test_the_seating_check_finds_it_planted(tmp_path: Path) -> None:
    _plant(tmp_path, {"net/transport.py": (
        "class Client:\n"
        "    concurrency: int = 0\n"                         # 2
        "    def __init__(self):\n"
        "        self.bot = None\n"                          # identity: allowed
        "        self.games = {}\n"                          # 5
        "    @property\n"
        "    def free_slots(self):\n"                        # 7
        "        return len(self.games)\n"                   # a read: the assignment is counted
        "    def queue(self, m):\n"
        "        self.out.append(m)\n")})                    # the output: allowed
    assert seating_on_the_transport(tmp_path) == [
        "server/net/transport.py:2: Client.concurrency",
        "server/net/transport.py:7: Client.free_slots",
        "server/net/transport.py:5: Client.games",
    ]
