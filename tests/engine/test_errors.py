"""Every status code of the C core becomes its own exception (engine_c/_lowlevel.py)."""

from __future__ import annotations

import pickle

import pytest
from maag.engine import (
    ConfigError,
    EngineError,
    Game,
    GameOverError,
    IllegalActionError,
    OutOfMemoryError,
    StateError,
)
from maag.engine._lowlevel import check, lib


@pytest.mark.parametrize(("code", "cls", "text"), [
    (lib.MG_ERR_CONFIG, ConfigError, "invalid configuration"),
    (lib.MG_ERR_ILLEGAL, IllegalActionError, "illegal action"),
    (lib.MG_ERR_TERMINAL, GameOverError, "the game is over"),
    (lib.MG_ERR_STATE, StateError, "inconsistent state"),
    (lib.MG_ERR_NOMEM, OutOfMemoryError, "out of memory"),
])
def test_each_status_code_raises_its_exception(code: int, cls: type[EngineError], text: str) -> None:
    vt = Game("nim", {}).vt
    with pytest.raises(cls, match=text) as info:
        check(vt, code)
    assert info.value.code == code


def test_out_of_memory_is_also_a_memory_error() -> None:
    assert issubclass(OutOfMemoryError, MemoryError) and issubclass(OutOfMemoryError, EngineError)
    check(Game("nim", {}).vt, lib.MG_OK)  # no error, no exception


def test_engine_errors_cross_process_boundaries() -> None:
    """An error raised in a worker of a process pool (maag arena --jobs, the experiments)
    reaches the parent as the same class with its code and message."""
    for cls in (EngineError, ConfigError, GameOverError, IllegalActionError):
        err = pickle.loads(pickle.dumps(cls(7, "what went wrong")))
        assert type(err) is cls and err.code == 7 and str(err) == "what went wrong"
    illegal = pickle.loads(pickle.dumps(IllegalActionError(3, "not your unit")))
    assert illegal.rule == "not your unit"
