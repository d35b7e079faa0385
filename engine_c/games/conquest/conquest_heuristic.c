/* conquest_heuristic.c: the playout heuristic of spec §9 (TripleA's Weak AI, simplified) and,
 * with other switches, the Easy AI of §12.1, which is the original routine. Strengths are
 * the doubled integers of cqa_strength2, so the comparisons below scale the spec's numbers
 * by 2 (need = 2.5 D + 4 becomes 2.5 D2 + 8). */
#include "conquest_ai.h"

const cqa_heur CQA_PLAYOUT_HEUR = {1, 1, 1.1, NULL};

static int has_units(const cq_fm *f, int t, int seat) { return !set_empty(cqa_units(f, t, seat)); }

/* The unmoved units of the player to move in t, cheapest first (cost, then id). */
static int by_cost(const cq_fm *f, int t, uint8_t *ids)
{
    cq_set free = cqa_units(f, t, f->s.player);
    free.w[0] &= ~f->s.moved[0];
    free.w[1] &= ~f->s.moved[1];
    return cqa_cheapest_first(f, free, ids);
}

static void emit(mg_action *codes, int *n, mg_action a)
{
    if (codes)
        codes[*n] = a;
    (*n)++;
}

/* Step 1: tanks of one source blitz through an empty neighbour of the enemy capital k. */
static void capital_blitz(cq_fm *f, int k, mg_action *codes, int *n)
{
    int me = f->s.player, dk = cqa_strength2(f, cqa_units(f, k, me ^ 1), 0);
    for (int m = 0; m < f->s.nterr; m++) {
        if (!(f->s.adj[k] >> m & 1) || !set_empty(f->at[m]))
            continue;
        for (int src = 0; src < f->s.nterr; src++) {
            if (!(f->s.adj[m] >> src & 1) || src == k || cq_owner_of(&f->s, src) != me || !has_units(f, src, me))
                continue;
            cq_set tanks = {{0, 0}};
            SET_FOR(u, cqa_units(f, src, me)) {
                const cq_type *ty = cq_type_of(&f->s, u);
                if (!cqa_moved(f, u) && ty->move >= 2 && (ty->flags & CQ_BLITZ))
                    set_add(&tanks, u);
            }
            if (set_empty(tanks) || cqa_strength2(f, tanks, 1) <= dk)
                continue;
            SET_FOR(u, tanks) {
                mg_action a;
                if (cqa_move(f, u, m, k, &a))
                    emit(codes, n, a);
            }
            return;
        }
    }
}

static int is_capital(const cq_fm *f, int t) { return t == f->s.capital[0] || t == f->s.capital[1]; }

/* Step 3 for one target t with defence d2: attack from the own neighbours if strong enough. */
static void attack(cq_fm *f, const cqa_heur *h, int t, int d2, mg_action *codes, int *n)
{
    int me = f->s.player, srcs[CQ_MAX_T], ns = 0, a2 = 0;
    for (int s = 0; s < f->s.nterr; s++) {
        if (!(f->s.adj[t] >> s & 1) || cq_owner_of(&f->s, s) != me || !has_units(f, s, me))
            continue;
        cq_set here = cqa_units(f, s, me);
        if (is_capital(f, s) && cqa_threat2(f, s) > cqa_strength2(f, here, 0))
            continue; /* a threatened capital keeps its units */
        srcs[ns++] = s;
        uint8_t ids[CQ_MAX_UNITS];
        int k = by_cost(f, s, ids);
        cq_set free = {{0, 0}};
        for (int i = 0; i < k; i++)
            set_add(&free, ids[i]);
        a2 += cqa_strength2(f, free, 1);
    }
    if (!(a2 > h->attack_factor * d2))
        return;
    double need = 2.5 * d2 + 8.0;
    for (int i = 0; i < ns; i++) {
        int s = srcs[i], fronts = 0;
        for (int m = 0; m < f->s.nterr; m++)
            fronts += (f->s.adj[s] >> m & 1) && has_units(f, m, me ^ 1);
        uint8_t ids[CQ_MAX_UNITS];
        int k = by_cost(f, s, ids);
        cq_set x = {{0, 0}};
        for (int j = 0; j < k; j++)
            set_add(&x, ids[j]);
        if (fronts > 1 && cqa_strength2(f, x, 1) >= need) { /* keep the rest for the other front */
            x = (cq_set){{0, 0}};
            for (int j = 0; j < k; j++) {
                set_add(&x, ids[j]);
                if (need <= 0 || cqa_strength2(f, x, 1) > need)
                    break;
            }
        }
        need -= cqa_strength2(f, x, 1);
        SET_FOR(u, x) {
            mg_action a; /* refused when another source took t empty before: it stays */
            if (cqa_move(f, u, CQ_NONE, t, &a))
                emit(codes, n, a);
        }
    }
}

static void combat(cq_fm *f, const cqa_heur *h, mg_action *codes, int *n)
{
    int me = f->s.player, k = f->s.capital[me ^ 1], nt = 0;
    uint8_t order[CQ_MAX_T];
    int has_k = cq_owner_of(&f->s, k) != me;
    if (has_k)
        order[nt++] = (uint8_t)k;
    int first = nt;
    for (int t = 0; t < f->s.nterr; t++)
        if (t != k && cq_owner_of(&f->s, t) != me)
            order[nt++] = (uint8_t)t;
    if (h->shuffle) /* Easy: equal-priority targets in random order (the capital stays first) */
        for (int i = nt - 1; i > first; i--) {
            int j = first + (int)mg_rng_below(h->shuffle, (uint32_t)(i - first + 1));
            uint8_t x = order[i];
            order[i] = order[j];
            order[j] = x;
        }
    if (h->capital_blitz && has_k)
        capital_blitz(f, k, codes, n);
    for (int i = 0; i < nt; i++) { /* step 2: walk into empty enemy territories */
        int t = order[i];
        if (cq_owner_of(&f->s, t) == me || has_units(f, t, me ^ 1))
            continue;
        for (int s = 0; s < f->s.nterr; s++) {
            if (!(f->s.adj[t] >> s & 1) || cq_owner_of(&f->s, s) != me || !has_units(f, s, me))
                continue;
            uint8_t ids[CQ_MAX_UNITS];
            mg_action a;
            if (by_cost(f, s, ids) && cqa_move(f, ids[0], CQ_NONE, t, &a)) {
                emit(codes, n, a);
                break;
            }
        }
    }
    for (int i = 0; i < nt; i++) { /* step 3: attacks */
        int t = order[i];
        int d2 = cqa_strength2(f, cqa_units(f, t, me ^ 1), 0);
        if ((d2 > 0 || (t == k && h->empty_capital)) && cq_owner_of(&f->s, t) != me)
            attack(f, h, t, d2, codes, n);
    }
}

static void noncombat(cq_fm *f, mg_action *codes, int *n)
{
    int me = f->s.player, k = f->s.capital[me ^ 1];
    uint32_t mine = cqa_owned(f, me), theirs = cq_all(&f->s) & ~mine;
    uint8_t dist[CQ_MAX_T];
    if (cq_owner_of(&f->s, k) != me) {
        cqa_distance(f, 1u << k, dist);
    } else {
        uint32_t armies = 0;
        for (int t = 0; t < f->s.nterr; t++)
            if (has_units(f, t, me ^ 1))
                armies |= 1u << t;
        cqa_distance(f, armies ? armies : theirs, dist);
    }
    for (int t = 0; t < f->s.nterr; t++) {
        uint8_t ids[CQ_MAX_UNITS];
        int nu = by_cost(f, t, ids);
        if (nu == 0 || (is_capital(f, t) && cqa_threat2(f, t) > 0) || dist[t] == 255 || dist[t] == 0)
            continue;
        int step = -1;
        for (int m = 0; m < f->s.nterr && step < 0; m++)
            if ((f->s.adj[t] >> m & 1) && dist[m] == dist[t] - 1)
                step = m;
        if (step < 0 || !(mine >> step & 1))
            continue;
        for (int i = 0; i < nu; i++) {
            mg_action a;
            if (cqa_move(f, ids[i], CQ_NONE, step, &a))
                emit(codes, n, a);
        }
    }
}

int cqa_heuristic_phase(cq_fm *f, const cqa_heur *h, mg_action *codes)
{
    int n = 0;
    if (f->s.phase == CQ_COMBAT)
        combat(f, h, codes, &n);
    else if (f->s.phase == CQ_NONCOMBAT)
        noncombat(f, codes, &n);
    return n;
}
