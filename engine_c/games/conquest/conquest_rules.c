/* conquest_rules.c: the moves, battles and end of round of spec/conquest.md §3-5, and the
 * legal list. A move is one unit along one path; units moved "together" are the same path
 * in a row, and a unit that follows another into the empty territory it just took JOINs it
 * (mg_conquest.h, cq_state.join_*; conformance/conquest-README.md, "A multi-unit MOVE"). */
#include <string.h>

#include "conquest_internal.h"

int cq_territory(const cq_state *st, int name)
{
    if (name <= 0)
        return -1;
    for (int t = 0; t < st->nterr; t++)
        if (st->tname[t] == name)
            return t;
    return -1;
}

/* Territories holding living units of each seat, one bit each. */
static void presence(const cq_state *st, uint32_t *units)
{
    units[0] = units[1] = 0;
    for (int u = 0; u < st->nunits; u++)
        if (st->loc[u] != CQ_NONE)
            units[cq_owner(st, u)] |= 1u << st->loc[u];
}

static int joins(const cq_state *st, int src, int mid, int dst)
{
    return st->join_dst != CQ_NONE && st->join_src == src && st->join_mid == mid && st->join_dst == dst;
}

/* ---- Checking a move (spec §4.1, §4.2) ------------------------------------------------------ */

static int check_path(const cq_state *st, int u, int src, int mid, int dst, int join)
{
    const cq_type *k = cq_type_of(st, u);
    int steps = mid == CQ_NONE ? 1 : 2;
    uint32_t to_dst = mid == CQ_NONE ? st->adj[src] : st->adj[mid];
    if ((mid != CQ_NONE && !(st->adj[src] >> mid & 1)) || !(to_dst >> dst & 1) || dst == src)
        return CQ_ERR_ADJACENT;
    if (steps > k->move)
        return CQ_ERR_STEPS;
    int me = st->player;
    if (join) /* the path as it was before the move it joins: blitzed then, if its middle was */
        return joins(st, src, mid, dst) && st->phase == CQ_COMBAT
                   ? (st->join_blitz && !(k->flags & CQ_BLITZ) ? CQ_ERR_THROUGH : MG_OK)
                   : CQ_ERR_JOIN;
    if (st->phase == CQ_NONCOMBAT) {
        if (mid != CQ_NONE && cq_owner_of(st, mid) != me)
            return CQ_ERR_THROUGH;
        return cq_owner_of(st, dst) == me ? MG_OK : CQ_ERR_ENTERS_ENEMY;
    }
    if (mid != CQ_NONE) {
        uint32_t units[2];
        presence(st, units);
        if (units[me ^ 1] >> mid & 1)
            return CQ_ERR_THROUGH; /* no path crosses enemy units */
        if (cq_owner_of(st, mid) != me && !(k->flags & CQ_BLITZ))
            return CQ_ERR_THROUGH; /* only a blitzing unit crosses enemy territory */
    }
    return cq_owner_of(st, dst) == me ? CQ_ERR_ENDS_OWN : MG_OK;
}

int cq_check(const void *vst, mg_action a)
{
    const cq_state *st = vst;
    if (st->phase == CQ_OVER)
        return MG_ERR_TERMINAL;
    if (a == CQ_END_PHASE)
        return MG_OK;
    int u = CQ_A_UNIT(a), src = cq_territory(st, CQ_A_SRC(a)), dst = cq_territory(st, CQ_A_DST(a));
    int mid = CQ_A_MID(a) ? cq_territory(st, CQ_A_MID(a)) : CQ_NONE;
    if (src < 0 || dst < 0 || mid < 0)
        return CQ_ERR_TERRITORY;
    if (u >= st->nunits || st->loc[u] == CQ_NONE)
        return CQ_ERR_UNIT;
    if (cq_owner(st, u) != st->player)
        return CQ_ERR_NOT_OWN;
    if (st->loc[u] != src)
        return CQ_ERR_NOT_THERE;
    if (st->moved[u >> 6] >> (u & 63) & 1)
        return CQ_ERR_MOVED;
    return check_path(st, u, src, mid, dst, !CQ_A_IS_MOVE(a));
}

/* ---- The legal list ------------------------------------------------------------------------ */

/* Order: units by id; for each, 1-step paths (end ascending), then 2-step paths (middle, then
 * end ascending), then the JOIN of the last move if it may; END_PHASE last. Every valid path
 * is listed: two paths to one end through different own middles are different codes with
 * the same outcome. */
int cq_legal(const void *vst, mg_action *out)
{
    const cq_state *st = vst;
    if (st->phase == CQ_OVER)
        return 0;
    int me = st->player, n = 0;
    uint32_t units[2];
    presence(st, units);
    uint32_t mine = me ? st->owner1 : ~st->owner1 & cq_all(st);
    uint32_t enemy = cq_all(st) & ~mine;
    for (int u = 0; u < st->nunits; u++) {
        int s = st->loc[u];
        if (s == CQ_NONE || cq_owner(st, u) != me || (st->moved[u >> 6] >> (u & 63) & 1))
            continue;
        const cq_type *k = cq_type_of(st, u);
        uint32_t ends = st->phase == CQ_COMBAT ? enemy : mine;
        mg_action joiner = 0;
        for (int t = 0; t < st->nterr; t++)
            if ((st->adj[s] >> t & 1) && (ends >> t & 1))
                out[n++] = CQ_MOVE(u, st->tname[s], 0, st->tname[t]);
        if (st->join_dst != CQ_NONE && st->join_src == s && (st->join_mid == CQ_NONE || k->move >= 2) &&
            (!st->join_blitz || (k->flags & CQ_BLITZ)))
            joiner = CQ_JOIN(u, st->tname[s], st->join_mid == CQ_NONE ? 0 : st->tname[st->join_mid],
                             st->tname[st->join_dst]);
        if (k->move < 2) {
            if (joiner)
                out[n++] = joiner;
            continue;
        }
        for (int m = 0; m < st->nterr; m++) {
            if (!(st->adj[s] >> m & 1))
                continue;
            if (st->phase == CQ_COMBAT) {
                if ((units[me ^ 1] >> m & 1) || (!(mine >> m & 1) && !(k->flags & CQ_BLITZ)))
                    continue;
            } else if (!(mine >> m & 1)) {
                continue;
            }
            for (int t = 0; t < st->nterr; t++)
                if (t != s && (st->adj[m] >> t & 1) && (ends >> t & 1))
                    out[n++] = CQ_MOVE(u, st->tname[s], st->tname[m], st->tname[t]);
        }
        if (joiner)
            out[n++] = joiner;
    }
    out[n++] = CQ_END_PHASE;
    return n;
}

/* ---- Battles (spec §5, §5.1) --------------------------------------------------------------- */

static int roll(cq_dice *d)
{
    if (d->seq == NULL) {
        if (d->rng == NULL)
            return -1; /* a battle needs dice: callers always pass an RNG */
        d->used++;
        return 1 + (int)mg_rng_below(d->rng, 6);
    }
    if (d->used >= d->n)
        return -1;
    return d->seq[d->used++];
}

/* The units of `seat` in t in casualty order (the first is lost first), with the value each
 * hits on: least combat power first, ties to the cheaper unit, then the higher id. Attacking,
 * the supportable units with the lowest ids are supported (+1) and the supporters with the
 * lowest ids give it (their power counts what they give). */
static int order(const cq_state *st, int t, int seat, int attacking, uint8_t *ids, uint8_t *value)
{
    int n = 0, nsup = 0, give = 0;
    int key[CQ_MAX_UNITS];
    for (int u = 0; u < st->nunits; u++)
        if (st->loc[u] == t && cq_owner(st, u) == seat) {
            ids[n++] = (uint8_t)u;
            if (attacking) {
                nsup += (cq_type_of(st, u)->flags & CQ_SUPPORTABLE) != 0;
                give += cq_type_of(st, u)->support;
            }
        }
    int supported = nsup < give ? nsup : give, given = 0, lifted = 0;
    for (int i = 0; i < n; i++) { /* ids ascending: the lowest get and give support first */
        const cq_type *k = cq_type_of(st, ids[i]);
        int v = attacking ? k->attack : k->defense, power = v;
        if (attacking && (k->flags & CQ_SUPPORTABLE) && lifted < supported) {
            lifted++;
            v++;
            power++;
        }
        if (attacking && k->support && given < supported) {
            int g = supported - given < k->support ? supported - given : k->support;
            given += g;
            power += g;
        }
        value[i] = (uint8_t)(v > 255 ? 255 : v);
        key[i] = power * 65536 + k->cost * 256 + (255 - ids[i]);
    }
    for (int i = 1; i < n; i++) { /* insertion sort by key: at most CQ_MAX_UNITS units */
        int kk = key[i];
        uint8_t id = ids[i], v = value[i];
        int j = i - 1;
        for (; j >= 0 && key[j] > kk; j--) {
            key[j + 1] = key[j];
            ids[j + 1] = ids[j];
            value[j + 1] = value[j];
        }
        key[j + 1] = kk;
        ids[j + 1] = id;
        value[j + 1] = v;
    }
    return n;
}

static void kill(cq_state *st, int u)
{
    st->loc[u] = CQ_NONE;
    st->moved[u >> 6] &= ~(1ull << (u & 63));
}

/* One die per unit of the list, in order; the number that hit, or -1 if the dice ran out. */
static int fire(const uint8_t *value, int n, cq_dice *dice)
{
    int hits = 0;
    for (int i = 0; i < n; i++) {
        int r = roll(dice);
        if (r < 0)
            return -1;
        hits += r <= value[i];
    }
    return hits;
}

int cq_battle(cq_state *st, int t, cq_dice *dice)
{
    int me = st->player;
    uint8_t a_ids[CQ_MAX_UNITS], a_val[CQ_MAX_UNITS], d_ids[CQ_MAX_UNITS], d_val[CQ_MAX_UNITS];
    for (int r = 0; r < CQ_MAX_BATTLE_ROUNDS; r++) {
        int na = order(st, t, me, 1, a_ids, a_val), nd = order(st, t, me ^ 1, 0, d_ids, d_val);
        if (na == 0)
            return 0; /* the defender keeps t, even with nobody left */
        if (nd == 0) {
            cq_take(st, t, me);
            return 1;
        }
        int ha = fire(a_val, na, dice), hd = ha < 0 ? -1 : fire(d_val, nd, dice);
        if (hd < 0)
            return -1;
        for (int i = 0; i < ha && i < nd; i++)
            kill(st, d_ids[i]);
        for (int i = 0; i < hd && i < na; i++)
            kill(st, a_ids[i]);
    }
    return 0;
}

/* ---- Applying ------------------------------------------------------------------------------ */

void cq_take(cq_state *st, int t, int seat)
{
    if (seat)
        st->owner1 |= 1u << t;
    else
        st->owner1 &= ~(1u << t);
    st->conquered |= 1u << t;
}

static void do_move(cq_state *st, mg_action a)
{
    int u = CQ_A_UNIT(a), src = st->loc[u], dst = cq_territory(st, CQ_A_DST(a));
    int mid = CQ_A_MID(a) ? cq_territory(st, CQ_A_MID(a)) : CQ_NONE, me = st->player;
    if (st->phase == CQ_COMBAT && CQ_A_IS_MOVE(a)) {
        uint32_t units[2];
        presence(st, units);
        st->join_dst = st->join_src = st->join_mid = CQ_NONE;
        st->join_blitz = 0;
        int blitz = mid != CQ_NONE && cq_owner_of(st, mid) != me;
        if (blitz)
            cq_take(st, mid, me); /* blitz: the empty middle changes owner at move time */
        if (!(units[me ^ 1] >> dst & 1)) {
            cq_take(st, dst, me); /* an empty enemy territory is taken at once; others may join */
            st->join_src = (uint8_t)src;
            st->join_mid = (uint8_t)mid;
            st->join_dst = (uint8_t)dst;
            st->join_blitz = (uint8_t)blitz;
        }
    }
    st->loc[u] = (uint8_t)dst;
    st->moved[u >> 6] |= 1ull << (u & 63);
}

static int units_left(const cq_state *st, int seat)
{
    for (int u = 0; u < st->nunits; u++)
        if (st->loc[u] != CQ_NONE && cq_owner(st, u) == seat)
            return 1;
    return 0;
}

static void finish(cq_state *st, int winner, int by)
{
    st->phase = CQ_OVER;
    st->winner = (int8_t)winner;
    st->by = (uint8_t)by;
}

/* Spec §4.3, after the second player's turn: capitals, annihilation, the round limit. */
static void end_of_round(cq_state *st)
{
    int o0 = cq_owner_of(st, st->capital[0]), o1 = cq_owner_of(st, st->capital[1]);
    if (o0 == o1)
        return finish(st, o0, CQ_BY_CAPITAL);
    if (st->victory == CQ_VICTORY_CAPITAL_ANNIHILATION) {
        int l0 = units_left(st, 0), l1 = units_left(st, 1);
        if (!l0 || !l1)
            return finish(st, l0 ? 0 : l1 ? 1 : -1, CQ_BY_ANNIHILATION);
    }
    if (st->round >= st->rounds)
        return finish(st, -1, CQ_BY_ROUND_LIMIT);
    st->round++;
    st->player = 0;
    st->phase = CQ_COMBAT;
}

static int end_phase(cq_state *st, cq_dice *dice)
{
    st->join_dst = st->join_src = st->join_mid = CQ_NONE;
    st->join_blitz = 0;
    if (st->phase == CQ_COMBAT) {
        uint32_t units[2];
        presence(st, units);
        uint32_t fights = units[0] & units[1];
        for (int t = 0; t < st->nterr; t++)
            if ((fights >> t & 1) && cq_battle(st, t, dice) < 0)
                return CQ_ERR_DICE;
        st->phase = CQ_NONCOMBAT;
        return MG_OK;
    }
    st->moved[0] = st->moved[1] = 0;
    st->conquered = 0;
    if (st->player == 0) {
        st->player = 1;
        st->phase = CQ_COMBAT;
    } else {
        end_of_round(st);
    }
    return MG_OK;
}

int cq_apply_dice(cq_state *st, mg_action a, cq_dice *dice)
{
    int rc = cq_check(st, a);
    if (rc != MG_OK)
        return rc;
    if (a == CQ_END_PHASE)
        return end_phase(st, dice);
    do_move(st, a);
    return MG_OK;
}

int cq_apply_legal(void *vst, mg_action a, mg_rng *rng)
{
    cq_dice dice = {rng, NULL, 0, 0};
    if (a == CQ_END_PHASE)
        return end_phase(vst, &dice);
    do_move(vst, a);
    return MG_OK;
}

int cq_apply(void *vst, mg_action a, mg_rng *rng)
{
    cq_dice dice = {rng, NULL, 0, 0};
    return cq_apply_dice(vst, a, &dice);
}
