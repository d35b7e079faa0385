"""C programs the tests build from the core's sources (a sanitizer driver, the allocation
check): each file compiled on its own, on every core at once, then linked. One gcc command
given every file compiles them one after the other, and that build was most of those tests'
time; separate compilation is what gcc does inside that one command anyway (no file sees
another), so the objects and the program are the same."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path


def build_program(gcc: str, flags: Sequence[str], sources: Sequence[Path], exe: Path,
                  link: Sequence[str] = ()) -> None:
    """Compile `sources` with `flags` (include folders too) and link them with `flags` and
    `link` (libraries, linker options) into `exe`; fails the test with gcc's errors."""
    objects = [exe.parent / f"{exe.name}.{i}.{src.stem}.o" for i, src in enumerate(sources)]

    def compile_one(src: Path, obj: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([gcc, *flags, "-c", str(src), "-o", str(obj)], capture_output=True, text=True)

    with ThreadPoolExecutor(max(1, len(os.sched_getaffinity(0)))) as pool:
        builds = list(pool.map(compile_one, sources, objects))
    for src, build in zip(sources, builds, strict=True):
        assert build.returncode == 0, f"{src}:\n{build.stderr[-4000:]}"
    r = subprocess.run([gcc, *flags, *map(str, objects), *link, "-o", str(exe)], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr[-4000:]
