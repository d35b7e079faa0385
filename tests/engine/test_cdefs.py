"""cffi's declarations come from the C headers (engine_c/cdefs.py), not from a mirror: the
generator keeps declarations and integer constants, and leaves out what cffi cannot take
(include guards, function-like macros, strings, floating-point constants, static inline
bodies); the compiled core declares every C type the Python side names."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from cffi import FFI
from maag.engine._lowlevel import ffi, lib

REPO = Path(__file__).resolve().parents[2]


def _module(name: str) -> object:
    spec = importlib.util.spec_from_file_location(name, REPO / "engine_c" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_generator_keeps_declarations_and_integer_constants(tmp_path: Path) -> None:
    cdefs = _module("cdefs")
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "base.h").write_text("#ifndef BASE_H\n#define BASE_H\n#include <stdint.h>\n"
                                "#define B_N 4\n#define B_FLAG (1 << 3)\n#define B_RATE 0.5\n"
                                '#define B_NAME "x"\n#define B_MAX(a, b) ((a) > (b) ? (a) : (b))\n'
                                "typedef struct b_pair { int32_t v[B_N]; } b_pair;\n"
                                "static inline int b_twice(int x) { if (x) { return 2 * x; } return 0; }\n"
                                "int b_sum(const b_pair *p);\n#endif\n")
    (inc / "top.h").write_text('#include "base.h"\n#define T_M (B_N + 1)\nint t_use(b_pair *p);\n')
    text = cdefs.generate(["top.h"], [inc], [tmp_path])  # type: ignore[attr-defined]
    assert re.findall(r"#define (\w+) \.\.\.", text) == ["B_N", "B_FLAG", "T_M"]
    assert "int32_t v[4];" in text and "b_twice" not in text and "B_RATE" not in text
    assert text.index("b_pair") < text.index("t_use")  # included headers first, once
    FFI().cdef(text)  # cffi accepts it


def test_no_game_keeps_a_mirror_of_its_header() -> None:
    assert not list((REPO / "engine_c" / "games").glob("*/cdef.h"))


def test_every_c_type_the_python_side_names_is_declared() -> None:
    named = set()
    for path in REPO.rglob("*.py"):
        if any(part in {".git", "node_modules", "build"} for part in path.parts):
            continue
        named.update(re.findall(r'ffi\.(?:cast|new|sizeof|offsetof|typeof)\("([^"]+)"', path.read_text()))
    assert len(named) > 10
    for t in sorted(named):
        ffi.typeof(t)  # raises for an undeclared type


def test_header_constants_reach_python() -> None:
    from maag.engine._lowlevel import ffi as f

    assert lib.MG_VT_VERSION == 7 and f.sizeof("mg_wire") == 3 * f.sizeof("size_t")
    assert lib.HR_NCARDS == 11
