"""The seed of each game of a reproducible run: one splitmix64 step from the run's seed.

The referee deals game `index` of a run seeded with `base` from `derive_seed(base, index)`
(maag.server's matches, ladders and validator); the lab's twins (maag.lab.twin_bot) rebuild
the true state of a match's deal from the same function, which is why it lives below both."""

from __future__ import annotations

__all__ = ["derive_seed"]

_MASK = 2**64 - 1


def derive_seed(base: int, index: int) -> int:
    """The seed of game `index` of a reproducible run seeded with `base` (splitmix64)."""
    z = (base + (index + 1) * 0x9E3779B97F4A7C15) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return (z ^ (z >> 31)) & (2**63 - 1)
