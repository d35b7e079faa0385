/* conquest_decisions.c: the thesis's action abstraction (spec §8). A move phase is a sequence
 * of decisions, one per territory in a fixed order, each choosing the set of units that move
 * INTO that territory; the last option of every decision is SKIP (the empty set). Also the
 * playout (§9 heuristic, or BB-MCTS's random phases) that ends every search leaf. */
#include "conquest_ai.h"

cq_set cqa_reachers(const cq_fm *f, int t)
{
    cq_set out = {{0, 0}};
    int mid;
    SET_FOR(u, cqa_unmoved(f, f->s.player))
        if (cqa_path(f, u, t, &mid))
            set_add(&out, u);
    return out;
}

int cqa_decision_list(const cq_fm *f, uint8_t *terr)
{
    int me = f->s.player, n = 0;
    uint32_t mine = cqa_owned(f, me), listed = 0;
    if (f->s.phase == CQ_COMBAT) {
        /* enemy neighbours of own territories, on first sight (§8.1); territories taken during
         * this phase list nothing (conquered is empty at a phase's start, where agents ask) */
        mine &= ~f->s.conquered;
        for (int s = 0; s < f->s.nterr; s++)
            for (int t = 0; t < f->s.nterr && (mine >> s & 1); t++)
                if ((f->s.adj[s] >> t & 1) && !(mine >> t & 1) && !(listed >> t & 1)) {
                    listed |= 1u << t;
                    terr[n++] = (uint8_t)t;
                }
        return n;
    }
    /* own capital first, then by distance to the nearest enemy territory, ties canonical
     * (§8.2, the thesis text) */
    uint8_t dist[CQ_MAX_T];
    cqa_distance(f, cq_all(&f->s) & ~mine, dist);
    int cap = f->s.capital[me];
    if (mine >> cap & 1)
        terr[n++] = (uint8_t)cap;
    for (int d = 0; d <= 255; d++)
        for (int t = 0; t < f->s.nterr; t++)
            if ((mine >> t & 1) && t != cap && dist[t] == d)
                terr[n++] = (uint8_t)t;
    return n;
}

/* ---- §8.1 combat options ------------------------------------------------------------------ */

static int combat_options(const cq_fm *f, int t, int gen, mg_rng *rng, cq_set *out)
{
    const cq_state *st = &f->s;
    int me = st->player, nc = 0;
    uint8_t c[CQ_MAX_UNITS];
    cq_set reach = cqa_reachers(f, t);
    if (set_empty(reach) || !cqa_can_attack(f, reach, t))
        return 0;
    /* C sorted by (source territory, type, id): DECISION (the code's order is a hash set's) */
    for (int s = 0; s < st->nterr; s++)
        for (int k = 0; k < st->ntypes; k++)
            SET_FOR(u, set_and(reach, f->at[s]))
                if ((st->ukind[u] & 7) == k)
                    c[nc++] = (uint8_t)u;
    if (nc == 0)
        return 0;
    if (gen != CQA_GEN_TREE)
        for (int i = nc - 1; i > 0; i--) {
            int j = (int)mg_rng_below(rng, (uint32_t)(i + 1));
            uint8_t x = c[i];
            c[i] = c[j];
            c[j] = x;
        }
    cq_set defenders = cqa_units(f, t, me ^ 1);
    int n = 0;
    if (set_empty(defenders)) { /* the cheapest unit walks in (DECISION, spec open question 5) */
        int best = c[0];
        for (int i = 1; i < nc; i++)
            if (cq_type_of(st, c[i])->cost < cq_type_of(st, best)->cost ||
                (cq_type_of(st, c[i])->cost == cq_type_of(st, best)->cost && c[i] < best))
                best = c[i];
        out[0] = (cq_set){{0, 0}};
        set_add(&out[0], best);
        out[1] = (cq_set){{0, 0}};
        return 2;
    }
    double d = cqa_strength2(f, defenders, 0) / 2.0;
    double upper = (gen == CQA_GEN_RANDOM ? 2.5 : 3.5) * d + 4.0;
    double step = gen == CQA_GEN_RANDOM ? 0.2 : 0.1, s = 1.1;
    int cap = gen == CQA_GEN_RANDOM ? 20 : CQA_MAX_OPTIONS - 2, last_in = 0;
    cq_set sets[CQA_MAX_OPTIONS], p = {{0, 0}};
    for (int i = 0; i < nc && n < cap; i++) {
        set_add(&p, c[i]);
        double str = cqa_strength2(f, p, 1) / 2.0;
        last_in = 0;
        if (str > s * d && str < upper) {
            sets[n++] = p;
            s += step;
            last_in = 1;
        }
        if (gen == CQA_GEN_RANDOM && str >= upper)
            break;
    }
    cq_set all = {{0, 0}};
    for (int i = 0; i < nc; i++)
        set_add(&all, c[i]);
    if (!last_in)
        sets[n++] = all; /* C itself is always offered */
    for (int i = 0; i < n; i++) /* largest first */
        out[i] = sets[n - 1 - i];
    out[n] = (cq_set){{0, 0}};
    return n + 1;
}

/* ---- §8.2 non-combat options: 0 / half / all of each source's units -------------------- */

static int noncombat_options(const cq_fm *f, int t, cq_set *out)
{
    const cq_state *st = &f->s;
    cq_set reach = cqa_reachers(f, t), half[CQ_MAX_T], whole[CQ_MAX_T];
    int ns = 0, radix[CQ_MAX_T];
    for (int s = 0; s < st->nterr; s++) {
        cq_set here = set_and(reach, f->at[s]);
        int k = set_count(here);
        if (k == 0)
            continue;
        whole[ns] = here;
        half[ns] = (cq_set){{0, 0}};
        int want = k / 2, got = 0; /* the first half in (type, id) order */
        for (int ty = 0; ty < st->ntypes && got < want; ty++)
            SET_FOR(u, here)
                if ((st->ukind[u] & 7) == ty && got < want) {
                    set_add(&half[ns], u);
                    got++;
                }
        radix[ns] = want >= 1 ? 3 : 2;
        ns++;
    }
    /* More than CQA_MAX_OPTIONS combinations (a territory with 5 or more sources, never on the
     * default map): sources are offered whole or not at all, and past 7 sources the rest
     * stay out (DECISION). */
    long total = 1;
    for (int i = 0; i < ns; i++)
        total *= radix[i];
    if (total > CQA_MAX_OPTIONS) {
        total = 1;
        for (int i = 0; i < ns; i++) {
            if (total * 2 > CQA_MAX_OPTIONS) {
                ns = i;
                break;
            }
            radix[i] = 2;
            total *= 2;
        }
    }
    /* digit 0: all, then half (radix 3), last: none; the all-none combination (SKIP) last */
    for (long idx = 0; idx < total; idx++) {
        cq_set x = {{0, 0}};
        long r = idx;
        for (int i = 0; i < ns; i++) {
            int dgt = (int)(r % radix[i]);
            r /= radix[i];
            if (dgt == 0)
                x = set_or(x, whole[i]);
            else if (dgt == 1 && radix[i] == 3)
                x = set_or(x, half[i]);
        }
        out[idx] = x;
    }
    return (int)total;
}

int cqa_options(const cq_fm *f, int t, int gen, mg_rng *rng, cq_set *out)
{
    if (f->s.phase == CQ_COMBAT)
        return combat_options(f, t, gen, rng, out);
    if (f->s.phase == CQ_NONCOMBAT && cq_owner_of(&f->s, t) == f->s.player)
        return noncombat_options(f, t, out);
    return 0;
}

void cqa_apply_option(cq_fm *f, int t, cq_set x, mg_action *codes, int *n)
{
    /* Paths first, from the state before any of these units moved, so the units of one
     * source take one path and the later ones join the first (conquest_rules.c). */
    uint8_t ids[CQ_MAX_UNITS], mids[CQ_MAX_UNITS];
    int k = 0;
    for (int s = 0; s < f->s.nterr; s++)
        SET_FOR(u, set_and(x, f->at[s])) {
            int mid;
            if (!cqa_moved(f, u) && cqa_path(f, u, t, &mid)) {
                ids[k] = (uint8_t)u;
                mids[k++] = (uint8_t)mid;
            }
        }
    for (int i = 0; i < k; i++) {
        mg_action a;
        if (cqa_move(f, ids[i], mids[i], t, &a) && codes)
            codes[(*n)++] = a;
    }
}

int cqa_root_decisions(const cq_fm *f)
{
    uint8_t terr[CQ_MAX_T];
    int n = cqa_decision_list(f, terr);
    if (f->s.phase != CQ_COMBAT)
        return n;
    int k = 0;
    for (int i = 0; i < n; i++)
        k += cqa_can_attack(f, cqa_reachers(f, terr[i]), terr[i]);
    return k;
}

/* BB-MCTS's random phase (§11.2): each decision gets a uniform option, SKIP included. */
static void random_phase(cq_fm *f, mg_rng *rng)
{
    uint8_t terr[CQ_MAX_T];
    cq_set opts[CQA_MAX_OPTIONS];
    int n = cqa_decision_list(f, terr);
    for (int i = 0; i < n; i++) {
        int k = cqa_options(f, terr[i], CQA_GEN_RANDOM, rng, opts);
        if (k > 0)
            cqa_apply_option(f, terr[i], opts[mg_rng_below(rng, (uint32_t)k)], NULL, NULL);
    }
}

double cqa_playout(cq_fm *f, int player, const cqa_reward *rw, double random_eps, mg_rng *rng, long *phases)
{
    int i = 0;
    for (; i < rw->max_phases && f->s.phase != CQ_OVER; i++) {
        if (random_eps > 0 && mg_rng_double(rng) < random_eps)
            random_phase(f, rng);
        else
            cqa_heuristic_phase(f, &CQA_PLAYOUT_HEUR, NULL);
        cqa_end_phase(f);
    }
    *phases += i;
    return cqa_reward_of(f, player, i, rw);
}

/* ---- The abstraction as the game's grouped legal actions (mg_conquest.h) ------------------ */

_Static_assert(CQ_MAX_GROUP_OPTIONS >= CQ_MAX_T * CQA_MAX_OPTIONS, "room for every option");

int cq_groups(const cq_state *st, uint8_t *terr_of, uint64_t *units)
{
    if (st->phase == CQ_OVER)
        return 0;
    cq_fm f;
    cqa_init(&f, st);
    uint8_t terr[CQ_MAX_T];
    cq_set opts[CQA_MAX_OPTIONS];
    int nd = cqa_decision_list(&f, terr), n = 0;
    for (int i = 0; i < nd; i++) {
        int k = cqa_options(&f, terr[i], CQA_GEN_TREE, NULL, opts);
        for (int j = 0; j < k; j++) {
            if (set_empty(opts[j]))
                continue; /* SKIP: not choosing is skipping */
            terr_of[n] = terr[i];
            units[2 * n] = opts[j].w[0];
            units[2 * n + 1] = opts[j].w[1];
            n++;
        }
    }
    return n;
}

int cq_group_actions(const cq_state *st, int t, const uint64_t *units, mg_action *codes)
{
    if (t < 0 || t >= st->nterr || st->phase == CQ_OVER)
        return 0;
    cq_fm f;
    cqa_init(&f, st);
    int n = 0;
    cqa_apply_option(&f, t, (cq_set){{units[0], units[1]}}, codes, &n);
    return n;
}
