"""derive_seed: the seed of each game of a seeded run. Its values are pinned: the docs' data
files name runs by their seed (`maag match ... --seed 58`), the lab's twins rebuild a match's
deals from it, and a replay of a stored game is its seed and its actions, so a change to the
function would silently change every recorded run's deals."""

from __future__ import annotations

from maag.engine.seeds import derive_seed


def test_the_seeds_of_a_run_are_pinned() -> None:
    assert [derive_seed(58, i) for i in range(3)] == [
        9056593541966880722, 7886205986134419855, 1490913096407829792]
    assert derive_seed(0, 0) == 7070836379803831727
    assert derive_seed(2**63 - 1, 1000) == 5579409418578628735


def test_seeds_are_distinct_and_fit_a_signed_64_bit_column() -> None:
    seeds = {derive_seed(base, i) for base in (0, 1, 58) for i in range(2000)}
    assert len(seeds) == 6000
    assert all(0 <= s < 2**63 for s in seeds)
