"""What a hosted bot may use, with the defaults a host gets without a flag (in the range the
competition hosts use: Botzone, Halite, Kaggle). Sizes are parsed from text like "1GiB",
"100MB", "512k"."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, replace
from typing import Any

__all__ = ["Limits", "parse_size", "DEFAULT_LIMITS"]

_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "kib": 1024, "m": 1000**2, "mb": 1000**2, "mib": 1024**2,
          "g": 1000**3, "gb": 1000**3, "gib": 1024**3}


def parse_size(text: str | int) -> int:
    """Bytes in `text` ("1GiB", "100MB", "4096"); ValueError if it is not a size."""
    if isinstance(text, int):
        return text
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", text)
    if m is None or m.group(2).lower() not in _UNITS:
        raise ValueError(f"{text!r} is not a size (e.g. 1GiB, 100MB, 65536)")
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])


@dataclass(frozen=True, slots=True)
class Limits:
    """Per bot process (one game), all its processes together."""

    memory: int = 1024**3
    """Bytes of memory (RAM; swap is not allowed), scratch space in memory included."""
    pids: int = 64
    """Processes and threads at once."""
    scratch: int = 100 * 1000**2
    """Bytes of the private writable space (/scratch, also /tmp and $HOME)."""
    log: int = 1000**2
    """Bytes of the bot's output kept per game; the rest is dropped with a note."""
    hello_s: float = 10.0
    """Seconds from the start of the process to its `hello` (never charged to the game clock)."""
    threads: int | None = None
    """Cores the bot may use at once; None: what its package declares (1 for a command line)."""
    build_s: float = 600.0
    """Seconds a package's build command may run."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def with_overrides(self, **kw: Any) -> Limits:
        return replace(self, **{k: v for k, v in kw.items() if v is not None})


DEFAULT_LIMITS = Limits()
