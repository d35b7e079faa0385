"""The experiments' data files: one JSON object per line, one line per finished game, so a
run killed at any moment loses at most the game it was writing and the same command goes on
where it stopped (`maag experiment cards`, `maag experiment hidden --data`)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

__all__ = ["append", "read", "write"]


def read(path: str | Path) -> Iterator[dict[str, Any]]:
    """The file's records in order (a missing file: none). A torn line (the run was killed
    while writing it) is skipped."""
    if not os.path.exists(path):
        return
    with open(path) as f:
        for line in f:
            try:
                d = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(d, dict):
                yield d


def append(path: str | Path) -> IO[str]:
    """The file opened for appending records (its folder made if missing). A torn last line
    is closed first, so the next record starts on a line of its own."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as raw:
        if raw.tell() > 0:
            raw.seek(-1, os.SEEK_END)
            if raw.read(1) != b"\n":
                raw.write(b"\n")
    return open(path, "a")


def write(f: IO[str], record: dict[str, Any]) -> None:
    """One record, flushed at once: it survives a crash of this process."""
    f.write(json.dumps(record) + "\n")
    f.flush()
