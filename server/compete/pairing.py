"""Who plays whom next on a ladder: the bot idle the longest picks an opponent of about its
strength, in O(n log n) for n waiting bots.

Each pick looks at the WINDOW nearest bots on either side of the picker in rating order
(more on one side where the other runs out; the others are at least as far in rating, so
their weight exp(-gap / spread) is at most theirs), kept in a list linked in rating order
from which bots leave as their capacity runs out; the idle order is a heap. A ladder of
2 * WINDOW + 1 bots or fewer sees every other bot, as the quadratic rule before it did, with
the same random draws.
"""

from __future__ import annotations

import heapq
import math
import random
from bisect import bisect
from itertools import accumulate

REMATCH_WEIGHT = 0.25
"""Weight factor of the picker's previous opponent (when there is another candidate)."""
WINDOW = 6
"""Candidates on each side of the picker in rating order."""


def choose_pairs(cap: dict[str, int], elo: dict[str, float], idle_since: dict[str, float],
                 last_opponent: dict[str, str], rng: random.Random, spread: float,
                 limit: int | None = None, rematch_wait: float = 0.0,
                 now: float = 0.0) -> list[tuple[str, str]]:
    """The games to start now, as (seat 0, seat 1) pairs, given each bot's free capacity
    `cap`: repeatedly, the bot idle the longest (`idle_since`, earliest first; never idle
    first of all, then by name) picks an opponent among the 2 * WINDOW nearest in rating
    order with capacity, weighted exp(-|Elo gap| / spread) (its previous opponent weighs
    REMATCH_WEIGHT), and the seats are drawn at random; both go to the back of the idle
    order. Unrated bots count as Elo 0. With `rematch_wait`, a bot whose only candidate is its
    previous opponent is not paired until it has been idle that long (`now` on the clock of
    `idle_since`): on a small ladder, the two bots of a game that just ended would otherwise
    play each other again and again, whoever else frees up a moment later."""
    cap = {b: n for b, n in cap.items() if n > 0}
    if len(cap) < 2:
        return []
    order = sorted(cap, key=lambda b: (elo.get(b, 0.0), b))
    n = len(order)
    rating = [elo.get(b, 0.0) for b in order]
    pos = {b: k for k, b in enumerate(order)}
    prev = list(range(-1, n - 1))
    nxt = list(range(1, n + 1))
    key = {b: (idle_since.get(b, -math.inf), b) for b in cap}
    heap = list(key.values())
    heapq.heapify(heap)
    pairs: list[tuple[str, str]] = []
    left = len(cap)
    exp, rand = math.exp, rng.random
    while left >= 2 and heap and (limit is None or len(pairs) < limit):
        k = heapq.heappop(heap)
        a = k[1]
        if key.get(a) != k:  # stale: a was re-queued or has left
            continue
        p = pos[a]
        # The 2 * WINDOW nearest in rating order: WINDOW on each side, more on one side
        # where the other runs out.
        below: list[int] = []
        q = prev[p]
        while q >= 0 and len(below) < WINDOW:
            below.append(q)
            q = prev[q]
        above: list[int] = []
        q = nxt[p]
        while q < n and len(above) < 2 * WINDOW - len(below):
            above.append(q)
            q = nxt[q]
        q = prev[below[-1]] if below else -1
        while q >= 0 and len(below) + len(above) < 2 * WINDOW:
            below.append(q)
            q = prev[q]
        near = below[::-1] + above  # rating order
        if n <= 2 * WINDOW + 1:  # everyone: by name, as the quadratic rule drew them
            near.sort(key=order.__getitem__)
        ea = rating[p]
        weights = [exp(-abs(ea - rating[q]) / spread) for q in near]
        last = pos.get(last_opponent.get(a, ""), -1)
        if rematch_wait and near == [last] and now - idle_since.get(a, -math.inf) < rematch_wait:
            continue  # (still free: another bot may pick it, or it picks in a later round)
        if last in near and len(near) > 1:
            weights[near.index(last)] *= REMATCH_WEIGHT
        cum = list(accumulate(weights))
        if cum[-1] <= 0.0:  # every gap is huge: fall back to uniform
            cum = list(range(1, len(near) + 1))
        # rng.choices(near, weights), inlined: the same draw
        b = order[near[bisect(cum, rand() * cum[-1], 0, len(near) - 1)]]
        pairs.append((a, b) if rand() < 0.5 else (b, a))
        for x in (a, b):
            cap[x] -= 1
            if cap[x] <= 0:  # out of the rating list and the idle order
                del key[x]
                i = pos[x]
                if prev[i] >= 0:
                    nxt[prev[i]] = nxt[i]
                if nxt[i] < n:
                    prev[nxt[i]] = prev[i]
                left -= 1
            else:  # to the back of the idle order
                key[x] = (math.inf, x)
                heapq.heappush(heap, key[x])
    return pairs
