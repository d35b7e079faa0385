"""The only module that touches the compiled core: loads it, checks its version, and turns
status codes into exceptions.

Environment switch:
  MAAG_CORE_MODULE=/path/to/module.so  load the core from that file instead of the installed
      ``maag.engine._core`` (the tests use it to run the rules under a build made with
      ``-fsanitize=address,undefined``, see tests/engine/test_sanitizer.py). The module
      name is the file name up to its first dot, and must be the name the file was built
      with (``make_ffi(module=...)`` in build_engine.py). ``CORE_FILE`` is the loaded path.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from importlib.metadata import PackageNotFoundError, version
from types import ModuleType
from typing import Any


def _load_core() -> ModuleType:
    path = os.environ.get("MAAG_CORE_MODULE")
    if not path:
        return importlib.import_module("maag.engine._core")
    name = os.path.basename(path).split(".", 1)[0]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"MAAG_CORE_MODULE={path!r} is not a loadable extension module")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_core = _load_core()
ffi: Any = _core.ffi
lib: Any = _core.lib
CORE_FILE: str = str(_core.__file__)

__all__ = ["ffi", "lib", "CORE_FILE", "EngineError", "IllegalActionError", "GameOverError", "ConfigError",
           "StateError", "OutOfMemoryError", "check", "errstr"]


class EngineError(Exception):
    """An error reported by the C rules core; `code` is the status code."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code

    def __reduce__(self) -> tuple[type[EngineError], tuple[int, str]]:
        # rebuilt from (code, message), so an error raised in a worker process (maag arena
        # and the experiments' process pools) reaches the parent as itself
        return type(self), (self.code, str(self))


class IllegalActionError(EngineError, ValueError):
    """The action is not legal in this state. The state is unchanged; `rule` names the rule."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(code, message)
        self.rule = message


class GameOverError(EngineError):
    """The game is over: no action is accepted."""


class ConfigError(EngineError, ValueError):
    """A configuration value is unknown or out of range."""


class StateError(EngineError, ValueError):
    """An imported state is inconsistent."""


class OutOfMemoryError(EngineError, MemoryError):
    """A search could not allocate its arena (its tree or tables); nothing was changed."""


_BY_PRIMARY: dict[int, type[EngineError]] = {
    lib.MG_ERR_CONFIG: ConfigError,
    lib.MG_ERR_ILLEGAL: IllegalActionError,
    lib.MG_ERR_TERMINAL: GameOverError,
    lib.MG_ERR_DECODE: IllegalActionError,
    lib.MG_ERR_STATE: StateError,
    lib.MG_ERR_NOMEM: OutOfMemoryError,
}


def errstr(vt: object, code: int) -> str:
    """Text for a status code, using the game's detail texts when it has them."""
    fn = vt.errstr  # type: ignore[attr-defined]
    raw = fn(code) if fn != ffi.NULL else lib.mg_errstr(code)
    return str(ffi.string(raw).decode())


def check(vt: object, code: int, detail: str | None = None) -> None:
    """Raise the exception for a non-OK status code."""
    if code == lib.MG_OK:
        return
    cls = _BY_PRIMARY.get(code & 0xFF, EngineError)
    raise cls(code, detail or errstr(vt, code))


def _check_build() -> None:
    built = ffi.string(lib.mg_build_version()).decode()
    try:
        installed = version("maag")
    except PackageNotFoundError:  # running from a source tree without metadata
        return
    if built != installed:
        raise ImportError(
            f"maag's compiled core is version {built} but the package is {installed}: reinstall "
            "with `pip install .` to rebuild it"
        )


_check_build()
