"""OEP's islands, MCTS's trees and greedy reply's answers run on threads: the C core with
tests/search/c/search_threads.c as its driver, built once with ThreadSanitizer and once with
AddressSanitizer and UndefinedBehaviorSanitizer. Any report fails the test (a data race, a use after free,
undefined behaviour), as does a failed search or a seeded iteration-budget search that does
not repeat its plan."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.cbuild import build_program

REPO = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).resolve().parent / "c" / "search_threads.c"
# The core's sources and include folders, as the build script lists them (every game).
_spec = importlib.util.spec_from_file_location("build_engine", REPO / "engine_c" / "build_engine.py")
assert _spec is not None and _spec.loader is not None
build_engine = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build_engine)

SANITIZERS = {
    "thread": ["-fsanitize=thread"],
    "address,undefined": ["-fsanitize=address,undefined", "-fno-sanitize-recover=undefined"],
}


@pytest.mark.parametrize("sanitizer", list(SANITIZERS))
def test_threaded_searches_under_sanitizer(sanitizer: str, tmp_path: Path) -> None:
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.fail("gcc is needed to build the sanitized core")
    exe = tmp_path / "search_threads"
    includes = [f"-I{d}" for d in build_engine.include_dirs()]
    flags = ["-std=c99", "-O1", "-g", "-fno-omit-frame-pointer", "-Wall", "-Wextra", "-Werror",
             "-ffp-contract=off", "-pthread", *SANITIZERS[sanitizer], *includes]
    build_program(gcc, flags, [*build_engine.sources(), DRIVER], exe, link=["-lm"])  # (one file per core)
    env = dict(os.environ, TSAN_OPTIONS="halt_on_error=1:exitcode=66",
               ASAN_OPTIONS="abort_on_error=0:exitcode=66:detect_leaks=1")
    r = subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=600)
    report = r.stdout + r.stderr
    assert r.returncode == 0 and "Sanitizer" not in report, report[-6000:]
    assert report.count(": ok") == 18, report
