"""The strike policy: a bot that keeps losing games by the same fault (crashing, running out
of memory, failing to start...) is taken out of a tournament or the ladder, so that one
broken submission does not hand free points to everyone it meets. A rule "KIND:N/M" strikes a
bot with N verdicts of KIND among its last M games; several rules are joined with commas;
"none" turns the policy off. Pure functions: the runner and the ladder apply them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from maag.server.referee.session import VERDICTS

__all__ = ["StrikeRule", "StrikePolicy", "DEFAULT_STRIKES", "histories", "verdict_counts"]

DEFAULT_STRIKES = "crash:3/10,memory:3/10,startup:3/10,protocol:3/10"
"""Three of these faults among a bot's last ten games take it out. Losses on time are left
to the time control (a slow bot still plays)."""


@dataclass(frozen=True, slots=True)
class StrikeRule:
    kind: str
    count: int
    window: int

    def __str__(self) -> str:
        return f"{self.kind}:{self.count}/{self.window}"


@dataclass(frozen=True, slots=True)
class StrikePolicy:
    rules: tuple[StrikeRule, ...]

    @classmethod
    def parse(cls, text: str) -> StrikePolicy:
        """"crash:3/10,memory:2/5" (or "none"); ValueError saying what is wrong."""
        text = text.strip()
        if text.lower() in ("", "none", "off"):
            return cls(())
        rules = []
        for part in text.split(","):
            kind, sep, rest = part.strip().partition(":")
            n, sep2, m = rest.partition("/")
            if not sep or not sep2 or not n.strip().isdigit() or not m.strip().isdigit():
                raise ValueError(f"bad strike rule {part.strip()!r}: use KIND:N/M, e.g. crash:3/10")
            if kind not in VERDICTS and kind != "any":
                raise ValueError(f"bad strike rule {part.strip()!r}: KIND is one of "
                                 f"{', '.join(VERDICTS)} or any")
            count, window = int(n), int(m)
            if not 1 <= count <= window:
                raise ValueError(f"bad strike rule {part.strip()!r}: need 1 <= N <= M")
            rules.append(StrikeRule(kind, count, window))
        return cls(tuple(rules))

    def __str__(self) -> str:
        return ",".join(map(str, self.rules)) or "none"

    def struck(self, history: Sequence[str | None]) -> StrikeRule | None:
        """The first rule a bot breaks, given the verdicts of its games in the order played
        (None for a game it did not forfeit), or None."""
        for r in self.rules:
            last = history[-r.window:]
            if sum(1 for v in last if v is not None and (r.kind == "any" or v == r.kind)) >= r.count:
                return r
        return None

    def struck_ever(self, history: Sequence[str | None]) -> StrikeRule | None:
        """The rule a bot broke first at any point of `history` (the first rule `struck`
        names for the shortest prefix it names one for), or None. A bot struck out stays
        out: games in flight then finish and count, and clean ones push its faults out of
        the window."""
        best: tuple[int, int, StrikeRule] | None = None
        for k, r in enumerate(self.rules):
            n = 0
            for i, v in enumerate(history):
                n += _counts(r, v)
                if i >= r.window:
                    n -= _counts(r, history[i - r.window])
                if n >= r.count:
                    if best is None or (i, k) < best[:2]:
                        best = (i, k, r)
                    break
        return None if best is None else best[2]

    def offenders(self, histories: Mapping[str, Sequence[str | None]],
                  already: Iterable[str] = ()) -> dict[str, StrikeRule]:
        """Bots (not in `already`) that break a rule, with the rule."""
        skip = set(already)
        out = {}
        for bot, h in histories.items():
            if bot in skip:
                continue
            r = self.struck(h)
            if r is not None:
                out[bot] = r
        return out


def _counts(rule: StrikeRule, verdict: str | None) -> int:
    return int(verdict is not None and (rule.kind == "any" or verdict == rule.kind))


def histories(games: Iterable[tuple[str, str, dict | None]]) -> dict[str, list[str | None]]:
    """Per bot, the verdicts of its games in order, from (seat1 bot, seat2 bot, verdict)
    triples in the order played (a verdict names the seat that forfeited)."""
    out: dict[str, list[str | None]] = {}
    for a, b, v in games:
        loser = None if not v else (a if v.get("seat") == 1 else b)
        for bot in (a, b):
            out.setdefault(bot, []).append(v.get("kind") if v and bot == loser else None)
    return out


def verdict_counts(games: Iterable[tuple[str, str, dict | None]]) -> dict[str, dict[str, int]]:
    """Per bot, its forfeits by verdict (standings), from the same triples as `histories`."""
    return {bot: {k: h.count(k) for k in sorted({x for x in h if x})} for bot, h in histories(games).items()}
