"""Results waiting for their database, on disk: what keeps a finished game's result when the
database is away and the referee has to stop (or is killed) before it comes back.

A referee that cannot store a result keeps it in memory and here, in a file of its own
(`<dir>/<server id>.jsonl`, one replay per line, fsynced), held under an exclusive `flock`
for the referee's lifetime. A starting referee adopts every spill file whose lock it can
take (its writer is gone) and writes those results as soon as the database answers;
storing a result twice stores it once (Storage.finish_game), so adopting a file whose
results were partly written already loses and doubles nothing.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from pathlib import Path
from typing import IO, Any

from maag.server.storage.base import user_path

__all__ = ["Spill", "default_spill_dir"]


def default_spill_dir() -> Path:
    """$MAAG_SPILL_DIR, else spill/ in the user's state directory ($XDG_STATE_HOME/maag)."""
    return user_path("MAAG_SPILL_DIR", "XDG_STATE_HOME", ".local/state", "spill")


class Spill:
    """The spill file of one referee: `save` rewrites it with the results still waiting."""

    def __init__(self, directory: str | os.PathLike[str], server_id: str) -> None:
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.path = self.dir / f"{server_id}.jsonl"
        self._orphans: list[tuple[Path, Path]] = []
        self._lock: IO[str] | None = open(self.dir / f"{server_id}.lock", "a+")  # noqa: SIM115
        fcntl.flock(self._lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)

    def save(self, replays: dict[int, dict[str, Any]]) -> None:
        """Replace the file with `replays` (game id -> replay); no file when there are none."""
        if not replays:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
            return
        tmp = self.path.with_suffix(".tmp")
        with open(tmp, "w") as f:
            for gid, replay in replays.items():
                f.write(json.dumps({"game_id": gid, "replay": replay}, separators=(",", ":")) + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)
        _fsync_dir(self.dir)

    def adopt(self) -> dict[int, dict[str, Any]]:
        """The results of spill files whose referee is gone (their lock is free), which are
        removed: the caller keeps them in its own file from now on (save them first)."""
        out: dict[int, dict[str, Any]] = {}
        for lock_path in sorted(self.dir.glob("*.lock")):
            if lock_path.stem == self.path.stem:
                continue
            with open(lock_path, "a+") as lock:
                try:
                    fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    continue  # a live referee's file
                data = lock_path.with_suffix(".jsonl")
                if data.exists():
                    for line in data.read_text().splitlines():
                        if line.strip():
                            rec = json.loads(line)
                            out[int(rec["game_id"])] = rec["replay"]
                self._orphans.append((lock_path, data))
        return out

    def forget_adopted(self) -> None:
        """Remove the adopted files (after their results were saved in this referee's file)."""
        for lock_path, data in self._orphans:
            with contextlib.suppress(FileNotFoundError):
                data.unlink()
            with contextlib.suppress(FileNotFoundError):
                lock_path.unlink()
        self._orphans = []

    def close(self) -> None:
        """Release the lock; the file stays if results are still waiting (another referee
        adopts it)."""
        if self._lock is not None:
            self._lock.close()
            self._lock = None
        if not self.path.exists():
            with contextlib.suppress(FileNotFoundError):
                (self.dir / f"{self.path.stem}.lock").unlink()


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
