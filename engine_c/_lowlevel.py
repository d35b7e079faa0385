"""The only module that touches the compiled core: loads it, checks its version, and turns
status codes into exceptions."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from maag.engine._core import ffi, lib  # type: ignore[import-not-found]

__all__ = ["ffi", "lib", "EngineError", "IllegalActionError", "GameOverError", "ConfigError",
           "StateError", "check", "errstr"]


class EngineError(Exception):
    """An error reported by the C rules core; `code` is the status code."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


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


_BY_PRIMARY: dict[int, type[EngineError]] = {
    lib.MG_ERR_CONFIG: ConfigError,
    lib.MG_ERR_ILLEGAL: IllegalActionError,
    lib.MG_ERR_TERMINAL: GameOverError,
    lib.MG_ERR_DECODE: IllegalActionError,
    lib.MG_ERR_STATE: StateError,
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
