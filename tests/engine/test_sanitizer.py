"""The rules tests once more, against the C core built with AddressSanitizer and
UndefinedBehaviorSanitizer (-fno-sanitize-recover: any UB report aborts the run).

The core is compiled from a copy of engine_c/ into a temporary directory (build_engine's
make_ffi with another module name and extra flags), then pytest runs tests/engine (minus
this file; the suite every registered game passes is there), each game's own tests
(engine_c/games/*/tests) and C_TESTS, in a subprocess with the ASan runtime preloaded and
MAAG_CORE_MODULE pointing at the sanitized module; the C playout loop runs longer there
(MAAG_FUZZ_SECONDS). The test fails if the build or the run fails, or if the run did not
load the sanitized module."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
FLAGS = ["-fsanitize=address,undefined", "-fno-sanitize-recover=undefined", "-fno-omit-frame-pointer", "-g"]
MODULE = "_maag_core_sanitized"
# Tests of C code outside the rules that run here too: the evaluation networks and the
# heroes feature vector (mg_eval_net.c, heroes_features.c), the search hook's plans, and the
# search parameters of issue 58 (forced, the MCTS-Solver, kept trees, progressive widening).
C_TESTS = ["tests/evalnet/test_eval_net.py", "tests/evalnet/test_eval_hook.py",
           "tests/search/test_search_per_simulation.py", "tests/search/test_search_reuse.py"]
# Tests of processes, not of the core's calls, left out here (the suite runs them once,
# outside): a real match through the referee (bot processes, sockets, the database) reaches
# the core only through the calls the kernel-level tests make, at many times their cost
# under ASan; the allocation check builds a C program of its own, without the sanitized
# module (ASan would only slow down its compiler).
NOT_SANITIZED = ["tests/search/test_search_reuse.py::test_best_plays_a_real_match",
                 "tests/engine/test_every_game.py::test_the_rules_of_every_game_allocate_nothing"]


def asan_runtime() -> str:
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.fail("gcc is needed to build the sanitized core")
    path = subprocess.run([gcc, "-print-file-name=libasan.so"], capture_output=True, text=True,
                          check=True).stdout.strip()
    if not os.path.isabs(path) or not os.path.exists(path):
        pytest.fail(f"gcc has no AddressSanitizer runtime (libasan.so -> {path!r}); install libasan")
    return path


# The build's C files compiled on every core at once (setuptools compiles one extension's files
# one after the other): the same commands, the same objects and module, in a fraction of the
# time. Set before cffi compiles, in the build's own process.
PARALLEL_COMPILE = """
import os
from concurrent.futures import ThreadPoolExecutor
import setuptools  # noqa: F401  (its distutils: the one cffi compiles with)
from distutils.ccompiler import CCompiler
def _compile(self, sources, output_dir=None, macros=None, include_dirs=None, debug=False,
             extra_preargs=None, extra_postargs=None, depends=None):
    macros, objects, extra_postargs, pp_opts, build = self._setup_compile(
        output_dir, macros, include_dirs, sources, depends, extra_postargs)
    cc_args = self._get_cc_args(pp_opts, debug, extra_preargs)
    todo = [(obj, *build[obj]) for obj in objects if obj in build]
    with ThreadPoolExecutor(max(1, len(os.sched_getaffinity(0)))) as pool:
        list(pool.map(lambda t: self._compile(*t, cc_args, extra_postargs, pp_opts), todo))
    return objects
CCompiler.compile = _compile
"""


def build_sanitized(tmp: Path, source_root: Path = REPO) -> Path:
    """Compile engine_c from `source_root` with the sanitizers into `tmp`; returns the module."""
    for part in ("src", "include", "games"):
        shutil.copytree(source_root / "engine_c" / part, tmp / "engine_c" / part,
                        ignore=shutil.ignore_patterns("*.py", "__pycache__", "tests"))
    for script in ("build_engine.py", "cdefs.py"):  # the build, and the declarations it reads
        shutil.copy(source_root / "engine_c" / script, tmp / "engine_c")
    shutil.copy(source_root / "pyproject.toml", tmp)  # the version compiled into the core
    script = (PARALLEL_COMPILE + "import sys; sys.path.insert(0, 'engine_c'); import build_engine as b; "
              f"ffi = b.make_ffi(module={MODULE!r}, extra_cflags={FLAGS!r}); print(ffi.compile(tmpdir='.'))")
    env = {k: v for k, v in os.environ.items() if k != "MAAG_CFLAGS"}
    r = subprocess.run([sys.executable, "-c", script], cwd=tmp, capture_output=True, text=True, env=env)
    assert r.returncode == 0, "sanitized build failed:\n" + r.stdout[-3000:] + r.stderr[-6000:]
    module = Path(r.stdout.strip().splitlines()[-1])
    assert module.is_file() and module.name.startswith(MODULE + ".")
    return module


def run_rules_tests(module: Path, tests_dir: Path = HERE, fuzz_seconds: float = 5.0,
                    timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """Run the rules tests against `module`, with pytest's output capture off (-s) so that
    a sanitizer report reaches stderr even though the process dies with it."""
    env = dict(os.environ)
    env.update({
        "LD_PRELOAD": asan_runtime(),
        "ASAN_OPTIONS": "detect_leaks=0:halt_on_error=1",
        "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1",
        "MAAG_CORE_MODULE": str(module),
        "MAAG_FUZZ_SECONDS": str(fuzz_seconds),
    })
    # tests/engine (the suite every game passes included) and each game's own tests.
    games = sorted(str(d) for d in (REPO / "engine_c" / "games").glob("*/tests"))
    cmd = [sys.executable, "-m", "pytest", str(tests_dir), *games, *[str(REPO / t) for t in C_TESTS],
           f"--ignore={tests_dir / 'test_sanitizer.py'}", *[f"--deselect={t}" for t in NOT_SANITIZED],
           "-p", "no:cacheprovider", "-x", "-s",
           "-W", "ignore::pytest.PytestDeprecationWarning"]
    return subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.mark.sanitizer
def test_rules_under_address_and_undefined_behaviour_sanitizers(tmp_path: Path) -> None:
    module = build_sanitized(tmp_path)
    r = run_rules_tests(module)
    out = r.stdout + r.stderr
    assert r.returncode == 0, "rules tests failed under the sanitizers:\n" + out[-12000:]
    assert f"maag core module: {os.path.realpath(module)}" in out, "the run did not load the sanitized core"
    assert "AddressSanitizer" not in out and "runtime error" not in out, out[-12000:]
    passed = re.search(r"(\d+) passed", out)
    assert passed and int(passed.group(1)) > 200, out[-3000:]
