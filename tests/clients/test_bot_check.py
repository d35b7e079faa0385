"""`maag bot check`: the conformance kit passes a good bot and names what each
misbehaving test bot (clients/testbots/) gets wrong. Real referee, real bot processes."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from maag.server.kit.check import bot_command, old_placeholders, run_check

TESTBOTS = Path(__file__).resolve().parents[2] / "clients" / "testbots"


def bot_script(name: str, *flags: str) -> list[str]:
    return [sys.executable, str(TESTBOTS / f"{name}.py"), "{connect}", "{token}", *flags]


async def test_a_good_bot_passes_every_situation() -> None:
    lines: list[str] = []
    command = [sys.executable, "-m", "maag.server", "bot", "run", "greedy-action"]
    report = await run_check(command, tc="2s", log=lines.append)
    assert report.ok, (report.problems, [s.line() for s in report.situations], report.bot_stderr)
    assert [s.name for s in report.situations] == ["opening-seat1", "opening-seat2", "only-end-turn",
                                                   "win-in-one"]
    assert all(s.turns >= 1 for s in report.situations)
    assert report.situations[-1].notes == ["found the winning attack at once"]
    assert any(line.startswith("ok   opening-seat1") for line in lines)


@pytest.mark.parametrize("bot, finding", [
    (bot_script("sleeping"), "timeout: no answer"),
    (bot_script("crashing"), "exited with code 3"),
    (bot_script("illegal"), "illegal_action: "),
    (bot_script("illegal", "--bad"), "bad_action: "),
    (bot_script("flooding"), "rate_limited"),
    (bot_script("garbage", "--mode", "bytes"), "protocol error bad_encoding"),
    (bot_script("garbage", "--mode", "field"), "protocol error bad_field (field 'game_id')"),
    (bot_script("garbage", "--mode", "unknown"), "protocol error unknown_type"),
    (bot_script("garbage", "--mode", "greeting"), "protocol error bad_greeting"),
], ids=["sleeping", "crashing", "illegal", "unreadable", "flooding", "garbage-bytes", "garbage-field",
        "garbage-type", "no-greeting"])
async def test_each_misbehaving_bot_is_caught(bot: list[str], finding: str) -> None:
    report = await run_check(bot, tc="300ms", situations=["opening-seat1"], connect_timeout_s=20)
    assert not report.ok
    everything = report.problems + [p for s in report.situations for p in s.problems]
    assert any(finding in p for p in everything), everything


def test_command_placeholders() -> None:
    assert bot_command(["b", "{connect}", "--t={token}"], "127.0.0.1:5", "T") == ["b", "127.0.0.1:5", "--t=T"]
    # the old spelling is still read, with a warning; other braces are left alone
    assert bot_command(["b", "{address}", '{"x": 1}'], "127.0.0.1:5", "T") == ["b", "127.0.0.1:5", '{"x": 1}']
    assert old_placeholders(["b", "{address}"]) and not old_placeholders(["b", "{connect}"])
    assert bot_command(["python my_bot.py"], "h:1", "T") == ["python", "my_bot.py", "--connect", "h:1",
                                                              "--token", "T"]
