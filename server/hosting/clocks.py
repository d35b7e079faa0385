"""Fair clocks: each hosted seat's CPU time per turn and off turn (Clock), and whether the
machine was overloaded while a game ran (Monitor: the CPU's stall time and the referee's
event-loop lag), kept in the game's replay (`host`)."""

from __future__ import annotations

import asyncio
import os
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from maag.server.sandbox.jail import Jail

__all__ = ["Monitor", "Clock", "cpu_stall_s", "OVERLOAD_PRESSURE", "OVERLOAD_LAG_MS"]

OVERLOAD_PRESSURE = 25.0
"""CPU pressure (% of the game's wall time with a task waiting for a CPU, from PSI's "some"
total) above which a game is marked as played on an overloaded machine."""
OVERLOAD_LAG_MS = 50.0
"""Event-loop lag of the referee (ms) above which a game is marked the same way."""


class Monitor:
    """Samples the machine's CPU stall time and the event loop's lag, for `overload`: a game's
    CPU pressure is the share of its wall time in which some runnable task waited for a CPU
    (PSI's cumulative "some" total, differenced over the game), so a short burst before or
    after it does not count, as a ten-second average would."""

    def __init__(self) -> None:
        self.samples: deque[tuple[float, float | None, float]] = deque(maxlen=20_000)  # (t, stall s, lag ms)
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self.samples.append((time.monotonic(), cpu_stall_s(), 0.0))
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        period = 0.25
        while True:
            t0 = time.monotonic()
            await asyncio.sleep(period)
            lag = max(0.0, (time.monotonic() - t0 - period) * 1000)
            self.samples.append((time.monotonic(), cpu_stall_s(), lag))

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None

    def mark(self) -> tuple[float, float | None]:
        """(now, the stall total now): a game's start."""
        return time.monotonic(), cpu_stall_s()

    def between(self, start: tuple[float, float | None]) -> dict[str, Any]:
        t0, stall0 = start
        t1, stall1 = self.mark()
        if stall0 is not None and stall1 is not None and t1 > t0:
            pressure = 100.0 * (stall1 - stall0) / (t1 - t0)
        else:  # without PSI: the load above the machine's cores, as a percentage
            pressure = max(0.0, (os.getloadavg()[0] / (os.cpu_count() or 1) - 1.0) * 100)
        lag = max((s[2] for s in self.samples if t0 <= s[0] <= t1 + 0.3), default=0.0)
        return {"cpu_pressure": round(pressure, 2), "referee_lag_ms_max": round(lag, 1),
                "overloaded": pressure > OVERLOAD_PRESSURE or lag > OVERLOAD_LAG_MS}


def cpu_stall_s() -> float | None:
    """Seconds in which some runnable task waited for a CPU, since boot (PSI), or None."""
    try:
        with open("/proc/pressure/cpu") as f:
            first = f.readline().split()
        return float(first[4].split("=")[1]) / 1e6
    except (OSError, IndexError, ValueError):
        return None


@dataclass
class Clock:
    """Each hosted seat's CPU time per turn, measured at every prompt."""

    jails: list[Jail | None]
    mover: int | None = None
    marks: list[int] = field(default_factory=lambda: [0, 0])
    turn_ns: list[int] = field(default_factory=lambda: [0, 0])
    turns: list[list[float]] = field(default_factory=lambda: [[], []])
    off_turn_ns: list[int] = field(default_factory=lambda: [0, 0])

    def start(self) -> None:
        self.marks = [j.cpu_ns() if j else 0 for j in self.jails]

    def advance(self, seat: int | None) -> None:
        if seat is not None and seat == self.mover:
            return  # the same turn goes on: nothing to read (the referee's cost per action stays)
        for i, j in enumerate(self.jails):
            if j is None:
                continue
            now = j.cpu_ns()
            delta, self.marks[i] = now - self.marks[i], now
            if i == self.mover:
                self.turn_ns[i] += delta
            else:
                self.off_turn_ns[i] += delta
        if seat != self.mover and self.mover is not None:
            self.turns[self.mover].append(round(self.turn_ns[self.mover] / 1e6, 2))
            self.turn_ns[self.mover] = 0
        self.mover = seat

    def report(self) -> dict[str, Any]:
        self.advance(None)
        return {"cpu_ms_per_turn": [t if j else None for t, j in zip(self.turns, self.jails, strict=True)],
                "cpu_ms_off_turn": [round(n / 1e6, 2) if j else None
                                    for n, j in zip(self.off_turn_ns, self.jails, strict=True)]}
