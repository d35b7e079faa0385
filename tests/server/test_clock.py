"""TimeControl syntax and SeatClock accounting."""

from __future__ import annotations

import math

import pytest
from maag.server.referee.clock import SeatClock, TimeControl, parse_duration_ms


@pytest.mark.parametrize("text, ms", [("500ms", 500), ("1s", 1000), ("1.5", 1500), ("2m", 120_000),
                                      (".25s", 250)])
def test_durations(text: str, ms: float) -> None:
    assert parse_duration_ms(text) == ms


@pytest.mark.parametrize("text, expect", [
    ("1s", TimeControl(turn_ms=1000)),
    ("250ms", TimeControl(turn_ms=250)),
    ("500ms+100", TimeControl(turn_ms=500, increment_ms=100)),
    ("1s+0.2", TimeControl(turn_ms=1000, increment_ms=200)),
    ("40/60+1", TimeControl(turn_ms=0, bank_ms=60_000, turns=40, increment_ms=1000)),
    ("1s,bank=5s,lag=20ms", TimeControl(turn_ms=1000, bank_ms=5000, lag_ms=20)),
    ("turn=200ms,inc=10ms,turns=10,bank=1s",
     TimeControl(turn_ms=200, increment_ms=10, turns=10, bank_ms=1000)),
    ("inf", TimeControl(turn_ms=None)),
])
def test_parse(text: str, expect: TimeControl) -> None:
    tc = TimeControl.parse(text)
    assert tc == expect
    assert TimeControl.parse(str(tc)) == tc


@pytest.mark.parametrize("bad", ["", "abc", "0", "1s,foo=1", "x/60", "0/60", "1s+", "-1s", "1s,bank"])
def test_parse_rejects(bad: str) -> None:
    with pytest.raises(ValueError):
        TimeControl.parse(bad)


def test_wire_form_is_integers() -> None:
    wire = TimeControl.parse("500ms+100,bank=1.5s").to_wire()
    assert wire == {"turn_ms": 500, "increment_ms": 100, "bank_ms": 1500, "lag_ms": 50, "turns": None}
    assert all(v is None for v in TimeControl.parse("inf").to_wire().values())


def test_bank_overage_and_increment() -> None:
    c = SeatClock(TimeControl.parse("100ms+10,bank=1s"))
    assert c.available_ms() == 1100
    c.charge(300, transport_ms=0)
    assert not c.late and c.available_ms() == 800
    c.end_turn()
    assert c.bank_ms == 1000 - 200 + 10 and c.used_ms == 0
    c.charge(2000, transport_ms=0)
    assert c.late
    c.end_turn()
    assert c.bank_ms == 10 and c.over_ms == [pytest.approx(2000 - 100 - 810)]


def test_transport_forgiven_up_to_lag() -> None:
    c = SeatClock(TimeControl.parse("1s,lag=20ms"))
    assert c.charge(100, transport_ms=5) == 95
    assert c.charge(100, transport_ms=50) == 80  # only the lag allowance is forgiven
    assert c.think_total_ms == 175 and c.transport_total_ms == 25


def test_periodic_refill() -> None:
    c = SeatClock(TimeControl.parse("2/1s"))
    for _ in range(2):
        c.charge(100, 0)
        c.end_turn()
    assert c.bank_ms == 800 + 1000


def test_unlimited() -> None:
    c = SeatClock(TimeControl.parse("inf"))
    c.charge(1e9, 0)
    assert math.isinf(c.available_ms()) and not c.late
