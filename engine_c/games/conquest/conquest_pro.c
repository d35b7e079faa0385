/* conquest_pro.c: the Fast and Hard AIs of spec §12.2, a simplified re-specification of
 * TripleA's ProAI. Both follow the same steps (defend the capital, rank targets, take each
 * with the smallest cheap force that wins, drop conquests that cannot be held, then reinforce
 * threatened territories and advance); they differ in the battle calculator: Fast reads the
 * §7.3 estimate, Hard simulates the battle with dice (the rules' own cq_battle). */
#include <math.h>

#include "conquest_ai.h"

typedef struct odds {
    double win;       /* probability that the attacker takes the territory */
    double survivors; /* expected attacking units left */
    double tuv;       /* value lost by the defender minus value lost by the attacker */
} odds;

typedef struct calc_ctx {
    int hard, max_runs;
    mg_rng *rng;
} calc_ctx;

static int cost_of(const cq_fm *f, cq_set x)
{
    int c = 0;
    SET_FOR(u, x)
        c += cq_type_of(&f->s, u)->cost;
    return c;
}

/* Units of `seat` that could attack t in their next combat move: those next to t, and the
 * two-step units two steps away. */
static cq_set could_attack(const cq_fm *f, int t, int seat)
{
    cq_set out = {{0, 0}};
    uint32_t ring1 = f->s.adj[t], ring2 = 0;
    for (int n = 0; n < f->s.nterr; n++)
        if (ring1 >> n & 1) {
            out = set_or(out, cqa_units(f, n, seat));
            ring2 |= f->s.adj[n];
        }
    ring2 &= ~ring1 & ~(1u << t);
    for (int m = 0; m < f->s.nterr; m++)
        if (ring2 >> m & 1)
            SET_FOR(u, cqa_units(f, m, seat))
                if (cq_type_of(&f->s, u)->move >= 2)
                    set_add(&out, u);
    return out;
}

/* The odds of units a of seat `att` attacking t held by units d, wherever they stand now.
 * Hard skips the dice when the estimate is clear (< 45: lost; > 55 in a defence check: won). */
static odds calc(const cq_fm *f, cq_set a, cq_set d, int t, int att, int defence, const calc_ctx *cx)
{
    int na = set_count(a), nd = set_count(d);
    if (na == 0)
        return (odds){0, 0, 0};
    if (nd == 0)
        return (odds){1, na, 0};
    double est = cqa_estimate_win(f, a, d);
    if (!cx->hard || est < 45 || (defence && est > 55)) {
        double w = est > 100 ? 100 : est < 0 ? 0 : est;
        double surv = est > 50 ? ceil(na * (w - 50) / 50) : 0;
        double lost = na - surv, per = (double)cost_of(f, a) / na;
        double dlost = est > 50 ? cost_of(f, d) : cost_of(f, d) * (1 - ceil(nd * (50 - w) / 50) / nd);
        return (odds){cx->hard ? (est < 45 ? 0.0 : 1.0) : w / 100, surv, dlost - lost * per};
    }
    cq_state base = f->s;
    base.player = (uint8_t)att;
    for (int u = 0; u < base.nunits; u++)
        if (base.loc[u] == t && !set_has(&a, u) && !set_has(&d, u))
            base.loc[u] = CQ_NONE;
    SET_FOR(u, set_or(a, d))
        base.loc[u] = (uint8_t)t;
    int small = na < nd ? na : nd, runs = cx->max_runs - small < 16 ? 16 : cx->max_runs - small;
    double wins = 0, surv = 0, tuv = 0;
    int ca = cost_of(f, a), cd = cost_of(f, d);
    for (int r = 0; r < runs; r++) {
        cq_state s = base;
        cq_dice dice = {cx->rng, NULL, 0, 0};
        wins += cq_battle(&s, t, &dice) == 1;
        int left_a = 0, cost_a = 0, cost_d = 0;
        SET_FOR(u, a)
            if (s.loc[u] != CQ_NONE) {
                left_a++;
                cost_a += cq_type_of(&s, u)->cost;
            }
        SET_FOR(u, d)
            if (s.loc[u] != CQ_NONE)
                cost_d += cq_type_of(&s, u)->cost;
        surv += left_a;
        tuv += (cd - cost_d) - (ca - cost_a);
    }
    return (odds){wins / runs, surv / runs, tuv / runs};
}

/* Units of x kept best in defence first (defense, then cost, both descending). */
static int best_defenders_first(const cq_fm *f, cq_set x, uint8_t *ids)
{
    int n = 0;
    SET_FOR(u, x) {
        const cq_type *k = cq_type_of(&f->s, u);
        int key = k->defense * 256 + k->cost, j = n++;
        for (; j > 0; j--) {
            const cq_type *o = cq_type_of(&f->s, ids[j - 1]);
            if (o->defense * 256 + o->cost >= key)
                break;
            ids[j] = ids[j - 1];
        }
        ids[j] = (uint8_t)u;
    }
    return n;
}

/* Step 1: the capital's units that stay home so that an enemy attack wins below 80%. */
static cq_set capital_guard(const cq_fm *f, const calc_ctx *cx)
{
    int me = f->s.player, k = f->s.capital[me];
    cq_set keep = {{0, 0}};
    if (cq_owner_of(&f->s, k) != me)
        return keep;
    cq_set enemy = could_attack(f, k, me ^ 1);
    if (set_empty(enemy))
        return keep;
    uint8_t ids[CQ_MAX_UNITS];
    int n = best_defenders_first(f, cqa_units(f, k, me), ids);
    for (int i = 0; i < n && calc(f, enemy, keep, k, me ^ 1, 1, cx).win >= 0.8; i++)
        set_add(&keep, ids[i]);
    return keep;
}

typedef struct target {
    uint8_t t;
    double priority;
} target;

/* Steps 2-5 on a copy g of the model: assign forces to the targets in priority order, skipping
 * the dropped ones; returns the number of (territory, units) moves written. */
static int assign(const cq_fm *f, const target *tg, int nt, uint32_t dropped, cq_set reserved,
                  const calc_ctx *cx, uint8_t *where, cq_set *what, double *surv)
{
    cq_fm g = *f;
    int me = f->s.player, k = 0;
    for (int i = 0; i < nt; i++) {
        int t = tg[i].t;
        if ((dropped >> t & 1) || cq_owner_of(&g.s, t) == me)
            continue;
        uint8_t ids[CQ_MAX_UNITS];
        int nc = cqa_cheapest_first(&g, set_minus(cqa_reachers(&g, t), reserved), ids);
        if (nc == 0)
            continue;
        cq_set d = cqa_units(&g, t, me ^ 1), x = {{0, 0}};
        double left = 1;
        if (set_empty(d)) {
            set_add(&x, ids[0]);
        } else {
            int ok = 0;
            for (int j = 0; j < nc && !ok; j++) {
                set_add(&x, ids[j]);
                odds r = calc(&g, x, d, t, me, 0, cx);
                ok = r.win >= 0.8 && r.survivors >= 1;
                left = r.survivors;
            }
            if (!ok)
                continue;
        }
        cqa_apply_option(&g, t, x, NULL, NULL);
        where[k] = (uint8_t)t;
        what[k] = x;
        surv[k++] = left;
    }
    return k;
}

static int pro_combat(cq_fm *f, const calc_ctx *cx, mg_action *codes)
{
    int me = f->s.player, ken = f->s.capital[me ^ 1], nt = 0;
    cq_set reserved = capital_guard(f, cx);
    target tg[CQ_MAX_T];
    for (int t = 0; t < f->s.nterr; t++) { /* steps 2-3: targets worth attacking, ranked */
        if (cq_owner_of(&f->s, t) == me)
            continue;
        cq_set a = set_minus(cqa_reachers(f, t), reserved);
        if (set_empty(a))
            continue;
        odds r = calc(f, a, cqa_units(f, t, me ^ 1), t, me, 0, cx);
        if (r.win < 0.6)
            continue;
        double value = 1 + (t == ken ? 10 : 0), tuv = r.tuv > 0 ? r.tuv : 0;
        target x = {(uint8_t)t, (t == ken ? 10 : 1) * (value + tuv)};
        int j = nt++;
        for (; j > 0 && tg[j - 1].priority < x.priority; j--)
            tg[j] = tg[j - 1];
        tg[j] = x;
    }
    uint8_t where[CQ_MAX_T];
    cq_set what[CQ_MAX_T];
    double surv[CQ_MAX_T];
    uint32_t dropped = 0;
    int k = assign(f, tg, nt, 0, reserved, cx, where, what, surv);
    for (int i = 0; i < k; i++) { /* step 5: drop conquests the enemy retakes at 50% or more */
        int t = where[i];
        if (t == ken)
            continue;
        uint8_t ids[CQ_MAX_UNITS];
        int n = best_defenders_first(f, what[i], ids), keep = (int)lround(surv[i]);
        cq_set held = {{0, 0}};
        for (int j = 0; j < n && j < (keep < 1 ? 1 : keep); j++)
            set_add(&held, ids[j]);
        cq_set enemy = set_minus(could_attack(f, t, me ^ 1), cqa_units(f, t, me ^ 1));
        if (!set_empty(enemy) && calc(f, enemy, held, t, me ^ 1, 1, cx).win >= 0.5)
            dropped |= 1u << t;
    }
    if (dropped) /* step 6: the freed units may serve the other targets */
        k = assign(f, tg, nt, dropped, reserved, cx, where, what, surv);
    int n = 0;
    for (int i = 0; i < k; i++)
        cqa_apply_option(f, where[i], what[i], codes, &n);
    return n;
}

static int pro_noncombat(cq_fm *f, const calc_ctx *cx, mg_action *codes)
{
    int me = f->s.player, n = 0, cap = f->s.capital[me];
    uint32_t mine = cqa_owned(f, me);
    cq_set locked = {{0, 0}};
    for (int i = -1; i < f->s.nterr; i++) { /* the capital first, then map order */
        int t = i < 0 ? cap : i;
        if ((i >= 0 && t == cap) || !(mine >> t & 1))
            continue;
        cq_set enemy = could_attack(f, t, me ^ 1), d = cqa_units(f, t, me);
        if (set_empty(enemy) || calc(f, enemy, d, t, me ^ 1, 1, cx).win < 0.5)
            continue;
        uint8_t ids[CQ_MAX_UNITS];
        int nc = cqa_cheapest_first(f, set_minus(cqa_reachers(f, t), locked), ids), ok = 0;
        cq_set x = {{0, 0}};
        for (int j = 0; j < nc && !ok; j++) {
            set_add(&x, ids[j]);
            ok = calc(f, enemy, set_or(d, x), t, me ^ 1, 1, cx).win < 0.5;
        }
        if (!ok)
            continue; /* cannot be held: the units serve elsewhere */
        cqa_apply_option(f, t, x, codes, &n);
        locked = set_or(locked, set_or(d, x));
    }
    /* the rest advance as the playout heuristic does; the defenders stay (marked as moved on
     * this scratch model only) */
    f->s.moved[0] |= locked.w[0];
    f->s.moved[1] |= locked.w[1];
    return n + cqa_heuristic_phase(f, &CQA_PLAYOUT_HEUR, codes + n);
}

int cqa_pro_phase(cq_fm *f, int hard, int max_runs, mg_rng *rng, mg_action *codes)
{
    calc_ctx cx = {hard, max_runs, rng};
    if (f->s.phase == CQ_COMBAT)
        return pro_combat(f, &cx, codes);
    return f->s.phase == CQ_NONCOMBAT ? pro_noncombat(f, &cx, codes) : 0;
}
