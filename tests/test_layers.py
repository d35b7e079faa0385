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
module or name) of another part."""

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
                name = _static_name(node, module, package)
                out.append((node.lineno, name or COMPUTED, f"{called}() of a name"))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            m = _REGISTRATION.match(node.value)
            if m:
                out.append((node.lineno, m.group(1), "module:function string"))
    return out


def part_modules(root: Path) -> Iterator[tuple[str, Path, str, ast.Module]]:
    """(part, path, module name, parsed tree) of every module of every part in the tree at
    `root`: a game's own tests and a bot package's program are no modules of their part."""
    for folder, part in FOLDERS.items():
        base = root / folder
        if not base.is_dir():
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
