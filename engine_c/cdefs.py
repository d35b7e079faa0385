"""The cffi declarations of the C core, generated from its headers at build time.

Each C declaration is written once, in its header (include/mg_*.h, each game's
mg_<name>.h); build_engine.py hands cffi what this module reads out of them, so a field added
to a header cannot be forgotten in a mirror (there is none). How:

- the C preprocessor (`cc -E -dD`) reads one file that includes every public header, with
  empty stand-ins for the C library's headers (cffi knows `uint32_t`, `size_t` and friends
  itself), and marks which header every line comes from;
- the declarations of maag's own headers are kept, macros expanded (an array sized by a
  macro gets its number);
- each integer constant (`#define NAME value`, no arguments) becomes `#define NAME ...`,
  whose value cffi takes from the compiler; guards, function-like macros, strings and
  floating-point constants are left out;
- `static inline` function bodies (mg_wire.h, mg_rng.h) are left out: they are for C callers.

tests/engine/test_cdefs.py checks that the generated text declares what the Python side
uses and that cffi accepts it.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

# The C library headers maag's public headers include; each is replaced by an empty file.
SYSTEM_HEADERS = ("stddef.h", "stdint.h", "string.h", "stdbool.h", "math.h", "stdlib.h", "stdio.h")

_LINEMARKER = re.compile(r'^# (\d+) "(.*)"')
_DEFINE = re.compile(r"^#define (\w+)(\(.*?\))?(?:[ \t]+(.*))?$")
_FLOAT = re.compile(r"\d\.\d|\d[eE][-+]?\d|\d\.(?!\d)|\.\d")


def _integer_constant(value: str | None) -> bool:
    """Whether a macro's replacement is (plausibly) an integer constant expression."""
    if not value or not value.strip():
        return False
    v = value.strip()
    return '"' not in v and "'" not in v and not _FLOAT.search(v) and "{" not in v


def _strip_static_inline(text: str) -> str:
    """`text` without its `static inline` function definitions (declaration to closing brace)."""
    out = []
    i = 0
    for m in re.finditer(r"\bstatic\s+inline\b", text):
        if m.start() < i:
            continue
        out.append(text[i:m.start()])
        brace = text.find("{", m.end())
        semi = text.find(";", m.end())
        if brace < 0 or (0 <= semi < brace):  # a declaration without a body: drop it too
            i = semi + 1
            continue
        depth = 0
        j = brace
        while j < len(text):
            if text[j] == "{":
                depth += 1
            elif text[j] == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        i = j + 1
    out.append(text[i:])
    return "".join(out)


def generate(headers: list[str], include_dirs: list[Path], own: list[Path]) -> str:
    """The cffi declarations of `headers` (file names found on `include_dirs`): every
    declaration and integer constant of a header under one of the `own` folders."""
    cc = shlex.split(os.environ.get("CC") or shutil.which("cc") or "gcc")
    owned = [str(p.resolve()) for p in own]
    with tempfile.TemporaryDirectory(prefix="maag-cdefs-") as tmp:
        system = Path(tmp) / "system"
        system.mkdir()
        for name in SYSTEM_HEADERS:
            (system / name).write_text("")
        umbrella = Path(tmp) / "all.h"
        umbrella.write_text("".join(f'#include "{h}"\n' for h in headers))
        args = [*cc, "-E", "-dD", "-nostdinc", "-I", str(system)]
        for d in include_dirs:
            args += ["-I", str(d)]
        done = subprocess.run([*args, str(umbrella)], capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"the C preprocessor failed on the headers:\n{done.stderr}")
    keep = False
    decls: list[str] = []
    defines: list[str] = []
    for line in done.stdout.splitlines():
        mark = _LINEMARKER.match(line)
        if mark:
            path = mark.group(2)
            real = str(Path(path).resolve())
            keep = path.startswith("/") and any(real.startswith(o + os.sep) for o in owned)
            continue
        if not keep:
            continue
        if line.startswith("#"):
            m = _DEFINE.match(line)
            if m and m.group(2) is None and _integer_constant(m.group(3)):
                defines.append(f"#define {m.group(1)} ...")
            continue
        decls.append(line)
    body = _strip_static_inline("\n".join(decls))
    body = re.sub(r"\n\s*\n+", "\n", body).strip()
    return "\n".join(defines) + "\n" + body + "\n"
