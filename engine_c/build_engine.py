"""cffi build script for the C rules core (out-of-line API mode). It only builds.

Wired in two places that must agree: setup.py's ``cffi_modules`` names this file, and
pyproject.toml's ``[build-system] requires`` lists cffi. The games come from
games/games.def: each registered game's folder gives its C sources and its public header
mg_<name>.h. cffi's declarations are read out of the public headers by cdefs.py, so each C
declaration is written once.

Environment switches:
  MAAG_CFLAGS  extra compiler flags (the tests use it for -fsanitize=address,undefined).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
from pathlib import Path
from typing import Any

from cffi import FFI

HERE = Path(__file__).resolve().parent
GAMES_DEF = HERE / "games" / "games.def"
# -ffp-contract=off: the rules' double arithmetic must match the Java reference bit for bit.
# -fvisibility=hidden: the module exports only PyInit__core (cffi reaches the C functions from
# inside the module), so a call from one source file to another (hr_set_unit, hr_max_hp,
# mg_rng_below, ms_actions) is a direct call instead of one through the PLT, and a function
# may be inlined within its file (a default-visibility one could be interposed).
CFLAGS = ["-std=c99", "-O2", "-Wall", "-Wextra", "-ffp-contract=off", "-fvisibility=hidden"]


def _cdefs() -> Any:
    """cdefs.py beside this file, loaded by path: setup.py runs this script as a file, not as
    a module of a package."""
    spec = importlib.util.spec_from_file_location("maag_engine_cdefs", HERE / "cdefs.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def game_names(games_def: Path = GAMES_DEF) -> list[str]:
    """The registered games, in games.def order (its `MG_GAME(name)` lines)."""
    names = re.findall(r"^MG_GAME\((\w+)\)", games_def.read_text(), flags=re.M)
    if not names:
        raise RuntimeError(f"{games_def}: no MG_GAME(name) line")
    return names


def sources(root: Path = HERE) -> list[Path]:
    """Every C source of the core: the generic ones (src/), then each game's folder."""
    out = sorted((root / "src").glob("*.c"))
    for name in game_names(root / "games" / "games.def"):
        out += sorted((root / "games" / name).glob("*.c"))
    return out


def public_headers(root: Path = HERE) -> list[str]:
    """The headers whose declarations Python reaches: the core's, then each game's."""
    core = ["mg_game.h", "mg_wire.h", "mg_kernels.h", "mg_search.h", "mg_hidden.h", "mg_eval_net.h"]
    return core + [f"mg_{n}.h" for n in game_names(root / "games" / "games.def")]


def include_dirs(root: Path = HERE) -> list[Path]:
    """The generic headers, games.def's folder, and each game's folder (its public header
    mg_<name>.h and private ones)."""
    games = root / "games"
    return [root / "include", games] + [games / n for n in game_names(games / "games.def")]



VERSION_GUARD = '\nconst char *mg_build_version(void) { return "%s"; }\n'


def _version() -> str:
    for line in (HERE.parent / "pyproject.toml").read_text().splitlines():
        if line.startswith("version"):
            return line.split("=", 1)[1].strip().strip('"')
    return "0"


def make_ffi(module: str = "maag.engine._core", extra_cflags: list[str] | None = None) -> FFI:
    """Build the FFI object; `module` and `extra_cflags` let tests build variants."""
    ffi = FFI()
    headers = public_headers()
    ffi.cdef(_cdefs().generate(headers, include_dirs(), [HERE]) + "const char *mg_build_version(void);")
    flags = CFLAGS + shlex.split(os.environ.get("MAAG_CFLAGS", "")) + (extra_cflags or [])
    ffi.set_source(
        module,
        "".join(f'#include "{h}"\n' for h in headers) + VERSION_GUARD % _version(),
        # setuptools wants source paths relative to the project root (the build's cwd).
        sources=[os.path.relpath(s) for s in sources()],
        include_dirs=[str(d) for d in include_dirs()],
        extra_compile_args=flags + ["-pthread"],  # OEP islands run on threads
        extra_link_args=[f for f in flags if f.startswith("-fsanitize")] + ["-pthread"],
    )
    return ffi


ffi = make_ffi()

if __name__ == "__main__":
    ffi.compile(verbose=True)
