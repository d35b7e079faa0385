/* conquest_model.c: the agents' forward model (spec §7.3, §8.3, §10) and the building blocks
 * of §7. A move here does exactly what the rules' move does (conquest_rules.c: blitz,
 * conquest of an empty territory at move time, joins), so a plan found on the model is a
 * legal plan of the real game; only battles differ: the model takes the most likely outcome
 * of §7.3 where the real game rolls dice. */
#include <math.h>
#include <string.h>

#include "conquest_ai.h"

void cqa_init(cq_fm *f, const cq_state *st)
{
    f->s = *st;
    memset(f->at, 0, sizeof f->at);
    f->side[0] = f->side[1] = (cq_set){{0, 0}};
    for (int u = 0; u < st->nunits; u++) {
        set_add(&f->side[cq_owner(st, u)], u);
        if (st->loc[u] != CQ_NONE)
            set_add(&f->at[st->loc[u]], u);
    }
}

cq_set cqa_unmoved(const cq_fm *f, int seat)
{
    cq_set out = {{0, 0}};
    for (int t = 0; t < f->s.nterr; t++)
        out = set_or(out, f->at[t]);
    out = set_and(out, f->side[seat]);
    return (cq_set){{out.w[0] & ~f->s.moved[0], out.w[1] & ~f->s.moved[1]}};
}

int cqa_strength2(const cq_fm *f, cq_set units, int attacking)
{
    cq_strength sum = {0, 0, 0};
    SET_FOR(u, units)
        cq_strength_add(&sum, cq_type_of(&f->s, u), attacking);
    return cq_strength_total(&sum, attacking);
}

int cqa_cheapest_first(const cq_fm *f, cq_set x, uint8_t *ids)
{
    int n = 0;
    SET_FOR(u, x) {
        int c = cq_type_of(&f->s, u)->cost, j = n++;
        for (; j > 0 && cq_type_of(&f->s, ids[j - 1])->cost > c; j--)
            ids[j] = ids[j - 1];
        ids[j] = (uint8_t)u;
    }
    return n;
}

int cqa_can_attack(const cq_fm *f, cq_set units, int t)
{
    if (set_empty(units))
        return 0;
    cq_set d = cqa_units(f, t, cq_owner_of(&f->s, t));
    return 10 * cqa_strength2(f, units, 1) > 11 * cqa_strength2(f, d, 0);
}

int cqa_threat2(const cq_fm *f, int t)
{
    int enemy = cq_owner_of(&f->s, t) ^ 1, s = 0;
    for (int n = 0; n < f->s.nterr; n++)
        if (f->s.adj[t] >> n & 1)
            s += cqa_strength2(f, cqa_units(f, n, enemy), 1);
    return s;
}

int cqa_path(const cq_fm *f, int u, int t, int *mid)
{
    const cq_state *st = &f->s;
    int s = st->loc[u], me = st->player, combat = st->phase == CQ_COMBAT;
    if (s == CQ_NONE || s == t || (cq_owner_of(st, t) == me) == combat)
        return 0;
    *mid = CQ_NONE;
    if (st->adj[s] >> t & 1)
        return 1;
    const cq_type *k = cq_type_of(st, u);
    if (k->move < 2)
        return 0;
    uint32_t both = st->adj[s] & st->adj[t];
    for (int m = 0; m < st->nterr; m++) /* an own middle first */
        if ((both >> m & 1) && cq_owner_of(st, m) == me && set_empty(cqa_units(f, m, me ^ 1))) {
            *mid = m;
            return 1;
        }
    if (!combat || !(k->flags & CQ_BLITZ))
        return 0;
    for (int m = 0; m < st->nterr; m++) /* else a blitz through an empty enemy territory */
        if ((both >> m & 1) && set_empty(cqa_units(f, m, me ^ 1))) {
            *mid = m;
            return 1;
        }
    return 0;
}

static void clear_join(cq_state *st)
{
    st->join_dst = st->join_src = st->join_mid = CQ_NONE;
    st->join_blitz = 0;
}

int cqa_move(cq_fm *f, int u, int mid, int t, mg_action *code)
{
    cq_state *st = &f->s;
    int src = st->loc[u], me = st->player;
    mg_action a = CQ_MOVE(u, st->tname[src], mid == CQ_NONE ? 0 : st->tname[mid], st->tname[t]);
    if (st->phase == CQ_COMBAT) {
        if (cq_owner_of(st, t) == me) { /* taken earlier this phase: only a join gets in */
            if (st->join_dst != t || st->join_src != src || st->join_mid != (mid == CQ_NONE ? CQ_NONE : mid))
                return 0;
            if (st->join_blitz && !(cq_type_of(st, u)->flags & CQ_BLITZ))
                return 0;
            a &= ~1u;
        } else {
            clear_join(st);
            int blitz = mid != CQ_NONE && cq_owner_of(st, mid) != me;
            if (blitz)
                cq_take(st, mid, me);
            if (set_empty(cqa_units(f, t, me ^ 1))) {
                cq_take(st, t, me);
                st->join_src = (uint8_t)src;
                st->join_mid = (uint8_t)mid;
                st->join_dst = (uint8_t)t;
                st->join_blitz = (uint8_t)blitz;
            }
        }
    }
    set_del(&f->at[src], u);
    set_add(&f->at[t], u);
    st->loc[u] = (uint8_t)t;
    st->moved[u >> 6] |= 1ull << (u & 63);
    if (code)
        *code = a;
    return 1;
}

/* ---- §7.3 the deterministic battle estimate --------------------------------------------- */

static int power(const cq_fm *f, cq_set units, int attacking)
{
    int p = 0, supportable = 0, support = 0;
    SET_FOR(u, units) {
        const cq_type *k = cq_type_of(&f->s, u);
        p += attacking ? k->attack : k->defense;
        supportable += (k->flags & CQ_SUPPORTABLE) != 0;
        support += k->support;
    }
    return p + (attacking ? (supportable < support ? supportable : support) : 0);
}

double cqa_estimate_win(const cq_fm *f, cq_set a, cq_set d)
{
    int pa = power(f, a, 1), pd = power(f, d, 0);
    if (pa <= 0)
        return 0.0;
    if (pd <= 0)
        return 99999.0;
    double ea = 2.0 * set_count(a) + pa, ed = 2.0 * set_count(d) + pd;
    return (ea - ed) / pow(ed, 0.85) * 50.0 + 50.0;
}

static void kill(cq_fm *f, int u)
{
    set_del(&f->at[f->s.loc[u]], u);
    f->s.loc[u] = CQ_NONE;
    f->s.moved[u >> 6] &= ~(1ull << (u & 63));
}

/* Kill all of `units` but the `keep` most expensive (cost, then the lowest id: DECISION). */
static void keep_best(cq_fm *f, cq_set units, int keep)
{
    cq_set kept = {{0, 0}};
    for (int i = 0; i < keep; i++) {
        int best = -1;
        SET_FOR(u, set_minus(units, kept))
            if (best < 0 || cq_type_of(&f->s, u)->cost > cq_type_of(&f->s, best)->cost)
                best = u;
        if (best < 0)
            break;
        set_add(&kept, best);
    }
    SET_FOR(u, set_minus(units, kept))
        kill(f, u);
}

void cqa_estimate_battle(cq_fm *f, int t)
{
    int me = f->s.player;
    cq_set a = cqa_units(f, t, me), d = cqa_units(f, t, me ^ 1);
    int na = set_count(a), nd = set_count(d);
    double win = cqa_estimate_win(f, a, d);
    if (win > 50.0) {
        keep_best(f, a, (int)ceil(na * ((win < 100.0 ? win : 100.0) - 50.0) / 50.0));
        keep_best(f, d, 0);
    } else {
        keep_best(f, d, (int)ceil(nd * (50.0 - (win > 0.0 ? win : 0.0)) / 50.0));
        keep_best(f, a, 0);
    }
    /* the attacker takes t unless only defenders are left (at exactly 50 both sides are wiped
     * out and the attacker takes it empty, as the thesis code does: spec §7.3) */
    if (!set_empty(cqa_units(f, t, me)) || set_empty(cqa_units(f, t, me ^ 1)))
        cq_take(&f->s, t, me);
}

void cqa_end_phase(cq_fm *f)
{
    if (f->s.phase == CQ_COMBAT) {
        int me = f->s.player;
        for (int t = 0; t < f->s.nterr; t++)
            if (!set_empty(cqa_units(f, t, me)) && !set_empty(cqa_units(f, t, me ^ 1)))
                cqa_estimate_battle(f, t);
    }
    cq_apply_legal(&f->s, CQ_END_PHASE, NULL); /* no battle is left for dice */
}

/* ---- §10 the reward, and distances ------------------------------------------------------ */

double cqa_reward_of(const cq_fm *f, int player, int phases, const cqa_reward *rw)
{
    if (f->s.phase == CQ_OVER) {
        if (f->s.winner < 0)
            return 0.0;
        double v = rw->win_base + rw->win_bonus * (rw->max_phases - phases) / rw->max_phases;
        return f->s.winner == player ? v : -v;
    }
    cq_set all = {{0, 0}};
    for (int t = 0; t < f->s.nterr; t++)
        all = set_or(all, f->at[t]);
    int own = set_count(set_and(all, f->side[player])), enemy = set_count(set_and(all, f->side[player ^ 1]));
    return own + enemy ? (own - enemy) / (rw->unit_div * (own + enemy)) : 0.0;
}

void cqa_distance(const cq_fm *f, uint32_t targets, uint8_t *dist)
{
    memset(dist, 255, CQ_MAX_T);
    uint32_t seen = targets & cq_all(&f->s), frontier = seen;
    for (int d = 0; frontier; d++) {
        uint32_t next = 0;
        for (int t = 0; t < f->s.nterr; t++)
            if (frontier >> t & 1) {
                dist[t] = (uint8_t)d;
                next |= f->s.adj[t];
            }
        frontier = next & ~seen;
        seen |= next;
    }
}
