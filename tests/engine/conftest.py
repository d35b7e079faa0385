"""tests/engine: report which compiled core the run uses (the sanitizer run checks this line),
and refuse to run if MAAG_CORE_MODULE was given but another core got loaded."""

from __future__ import annotations

import os

import pytest
from maag.engine._lowlevel import CORE_FILE


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "sanitizer: reruns the rules tests on an ASan/UBSan build")
    wanted = os.environ.get("MAAG_CORE_MODULE")
    if wanted and os.path.realpath(wanted) != os.path.realpath(CORE_FILE):
        raise pytest.UsageError(f"MAAG_CORE_MODULE={wanted} but the core was loaded from {CORE_FILE}")


def pytest_report_header(config: pytest.Config) -> str:
    return f"maag core module: {os.path.realpath(CORE_FILE)}"
