"""maag match's statistics (maag.stats.pairwise, the one implementation every part uses)
and bot command lines (no processes here; see tests/e2e)."""

from __future__ import annotations

import math

import pytest
from maag.server.compete.match import bot_command, display_names
from maag.stats import pairwise as match_stats


def test_even_match() -> None:
    s = match_stats(10, 0, 10)
    assert s.score == 0.5 and s.elo == pytest.approx(0.0)
    lo, hi = s.score_ci95
    assert lo == pytest.approx(1 - hi) and hi - lo == pytest.approx(
        2 * 1.959964 * 0.5 / math.sqrt(20), rel=1e-4
    )
    assert s.elo_ci95[0] == pytest.approx(-s.elo_ci95[1])  # type: ignore[operator]
    assert s.los == pytest.approx(0.5)


def test_trinomial_interval_and_elo() -> None:
    s = match_stats(7, 2, 1)
    assert s.score == pytest.approx(0.8) and s.draw_ratio == pytest.approx(0.2)
    half = 1.959964 * math.sqrt(((7 * 0.2**2 + 2 * 0.3**2 + 1 * 0.8**2) / 10) / 10)
    assert s.score_ci95 == pytest.approx((0.8 - half, 1.0), abs=1e-5)
    assert s.elo == pytest.approx(-400 * math.log10(1 / 0.8 - 1))
    assert s.elo_ci95[1] == math.inf  # the upper end of the score interval is 1: unbounded
    assert s.elo_ci95[0] == pytest.approx(-400 * math.log10(1 / (0.8 - half) - 1), rel=1e-4)
    assert s.los == pytest.approx(0.98305, abs=1e-4)
    d = s.as_dict()
    assert {"games", "wins", "draws", "losses", "score", "score_ci95", "elo", "elo_ci95"} <= set(d)
    assert d["elo_ci95"][1] is None  # JSON has no infinity


def test_all_wins_uses_wilson() -> None:
    s = match_stats(5, 0, 0)
    assert s.score == 1.0 and s.elo == math.inf and s.as_dict()["elo"] is None
    assert s.score_ci95[0] == pytest.approx(0.5655, abs=1e-3) and s.score_ci95[1] == 1.0
    assert match_stats(0, 0, 0).games == 0


def test_names_and_commands() -> None:
    assert display_names("random", "random") == ("random#1", "random#2")
    assert display_names("mcts", "python3 /x/my bot.py --connect {connect}")[1] == "python3"
    cmd, shell = bot_command(
        "./bot --at {connect} --t {token} -j {concurrency}", "127.0.0.1", 9, "tok", 2, "b"
    )
    assert shell and cmd == "./bot --at 127.0.0.1:9 --t tok -j 2"
    cmd, shell = bot_command("random", "127.0.0.1", 9, "tok", 2, "b")
    assert not shell and "maag.server.net.minibot" in cmd and "tok" not in cmd  # token: $MAAG_TOKEN only


def test_z95_is_scipys_quantile_bit_for_bit() -> None:
    """maag.stats writes the 97.5% normal quantile as a literal (scipy is not imported at a
    `maag` process's start): it must be the very float scipy gives."""
    from maag.stats.ratings import Z95
    from scipy.stats import norm

    assert Z95 == float(norm.ppf(0.975))


def test_los_is_scipys_normal_cdf_bit_for_bit() -> None:
    """pairwise's likelihood of superiority calls scipy.special.ndtr (scipy.stats is not
    imported at a match's end): the very floats norm.cdf gives, at every wins/losses split."""
    from scipy.stats import norm

    for wins in range(0, 60, 3):
        for losses in range(0, 60, 4):
            if wins + losses:
                los = match_stats(wins, 5, losses).los
                assert los == float(norm.cdf((wins - losses) / math.sqrt(wins + losses))), (wins, losses)
