/* heroes_eval.c: the reference's heuristic evaluation (spec §14), action rating (§16.1)
 * and action pruning (§15). */
#include "heroes_internal.h"

/* Square bonus by kind (K A C W N, then crystal) and square type (§14.2), indexed by
 * HR_SQ_* (none, deploy 1, deploy 2, defense, assault, power). */
#define HR_SQV(def, ass, pow) {0, -75, -75, def, ass, pow}
static const int16_t square_value[12][6] = {
    [HR_KNIGHT] = HR_SQV(30, 120, 30), [HR_ARCHER] = HR_SQV(80, 40, 120),
    [HR_CLERIC] = HR_SQV(20, 10, 40),  [HR_WIZARD] = HR_SQV(70, 40, 100),
    [HR_NINJA] = HR_SQV(60, 50, 70),   [HR_CRYSTAL] = HR_SQV(0, 0, 0),
};

/* Equipment value by kind and HR_EQ_* bits (§14.2, generic + class part): the sum of the
 * values of the items held, a = dragonscale, b = runemetal, c = shining helm, d = scroll. */
#define HR_EQV(a, b, c, d)                                                                 \
    {0, a, b, a + b, c, a + c, b + c, a + b + c, d, a + d, b + d, a + b + d, c + d, a + c + d,  \
     b + c + d, a + b + c + d}
static const int16_t equipment_value[12][16] = {
    [HR_KNIGHT] = HR_EQV(60, -30, 20, -10), [HR_ARCHER] = HR_EQV(60, 60, 40, 80),
    [HR_CLERIC] = HR_EQV(30, 20, 20, 30),   [HR_WIZARD] = HR_EQV(50, 60, 40, 80),
    [HR_NINJA] = HR_EQV(30, 20, 30, 70),
};

/* Base max hp by kind (hr_classes[kind].max_hp, which is hr_base_hp(kind) for the kinds on
 * a board), as a plain array: side_value reads it for every unit of every rollout's end. */
static const int16_t base_hp[12] = {1000, 800, 800, 800, 800, 0, 0, 0, 0, 0, 0, 4500};

/* Board + card term of player p (0/1), without infernos. */
static long side_value(const hr_state *st, int p)
{
    long v = 0;
    const uint8_t *sq = hr_maps[st->map].sq;
    for (uint64_t m = st->occ[p]; m; m &= m - 1) { /* the squares with owner p + 1 */
        int s = hr_lowest_bit(m);
        const hr_unit *u = &st->board[s];
        int base = base_hp[u->kind], eq = equipment_value[u->kind][u->items & 15];
        v += u->hp + (u->hp > 0 ? 2 * base + square_value[u->kind][sq[s]] + 2 * eq : base + eq);
    }
    /* unit cards in hand and deck: 1750 a knight, 1400 the others */
    const uint8_t *h = st->hand[p], *d = st->deck[p];
    long knights = h[HR_KNIGHT] + d[HR_KNIGHT];
    long others = h[HR_ARCHER] + d[HR_ARCHER] + h[HR_CLERIC] + d[HR_CLERIC] + h[HR_WIZARD] +
                  d[HR_WIZARD] + h[HR_NINJA] + d[HR_NINJA];
    return v + 1750 * knights + 1400 * others;
}

/* Heuristic value for `player` on the raw scale (winVal = false): +-60000 for a win or a
 * loss, 0 for a draw. The reference's P2 view credits P1's infernos (a bug kept on
 * purpose, spec §19 Q14). */
double hr_evaluate(const void *vst, int player)
{
    const hr_state *st = vst;
    if (st->terminal) {
        if (st->winner < 0)
            return 0.0;
        return st->winner == player ? HR_WIN_VALUE : -HR_WIN_VALUE;
    }
    long b1 = side_value(st, 0), b2 = side_value(st, 1);
    long i1 = 750L * (st->hand[0][HR_INFERNO] + st->deck[0][HR_INFERNO]);
    long i2 = 750L * (st->hand[1][HR_INFERNO] + st->deck[1][HR_INFERNO]);
    return player == 0 ? (double)((b1 + i1) - (b2 + i2)) : (double)((b2 + i1) - (b1 + i2));
}

#if defined(__GNUC__)
#define HR_NOINLINE __attribute__((noinline))
#else
#define HR_NOINLINE
#endif

/* hr_rate of a spell or an equip on square t = (tx, ty) on the board. Apart, and not
 * inlined, so that hr_rate's common path (moves and attacks, rated by the thousand in
 * every greedy rollout step) saves no registers and stays short. */
static HR_NOINLINE int rate_card(const hr_state *st, int type, int card, int tx, int ty, int t)
{
    const hr_unit *v = &st->board[t];
    if (type == HR_A_SPELL) {
        uint64_t m = hr_spell_targets(st, tx, ty);
        int val = -500;
        for (int s = 0; s < st->w * st->h; s++)
            if (m >> s & 1)
                val += st->board[s].hp == 0 ? 2 * hr_max_hp_of(&st->board[s]) : 300;
        return val;
    }
    if (card == HR_POTION) {
        int items = ((v->items >> 0) & 1) + ((v->items >> 1) & 1) + ((v->items >> 2) & 1) +
                    ((v->items >> 3) & 1);
        return v->hp == 0 ? hr_max_hp_of(v) + 200 * items : hr_max_hp_of(v) - v->hp - 300;
    }
    return hr_power(st, v, t) * (v->hp / hr_max_hp_of(v));
}

/* hr_rate of a move (or an unknown unit action type) onto a unit: a cleric stomping a
 * knocked-out enemy within 2, or another unit onto a knocked-out one. */
static HR_NOINLINE int rate_move_onto(const hr_state *st, mg_action a, int tx, int ty, int t)
{
    const hr_unit *v = &st->board[t];
    const hr_unit *u = &st->board[hr_idx(st, HR_A_FX(a), HR_A_FY(a))];
    /* A cleric onto an enemy KO'd unit within 2 is labelled HEAL by the reference. */
    int d = hr_abs(HR_A_FX(a) - tx) + hr_abs(HR_A_FY(a) - ty);
    if (u->kind == HR_CLERIC && d <= 2)
        return 1400;
    return 2 * hr_max_hp_of(v);
}

/* The reference's ComplexActionComparator value of an action (§16.1). */
int hr_rate(const void *vst, mg_action a)
{
    const hr_state *st = vst;
    int type = HR_A_TYPE(a);
    if (type == HR_A_END_TURN)
        return st->ap == 0 ? 10000 : 0;
    if (type == HR_A_SWAP_CARD || type == HR_A_TELEPORT)
        return 0;
    if (type == HR_A_DEPLOY)
        return 200;
    int tx = HR_A_TX(a), ty = HR_A_TY(a);
    if (!hr_on_board(st, tx, ty))
        return 0;
    int t = hr_idx(st, tx, ty);
    if (type == HR_A_SPELL || type == HR_A_EQUIP)
        return rate_card(st, type, HR_A_CARD(a), tx, ty, t);
    const hr_unit *v = &st->board[t];
    if (type == HR_A_ATTACK) {
        int f = hr_idx(st, HR_A_FX(a), HR_A_FY(a));
        const hr_unit *u = &st->board[f];
        return hr_power(st, u, f) + (u->kind == HR_WIZARD ? 200 : 0);
    }
    if (type == HR_A_HEAL)
        return v->hp == 0 ? 1400 : hr_max_hp_of(v) - v->hp;
    /* HR_A_MOVE */
    if (v->owner != 0)
        return rate_move_onto(st, a, tx, ty, t);
    return hr_maps[st->map].sq[t] == HR_SQ_NONE ? 0 : 30;
}

/* The reference's ActionPruner (§15): drop swaps of cards held once, infernos that hit
 * nothing, and infernos whose targets are a subset of another's; among infernos with the
 * same maximal target set the last in enumeration order survives. Order is kept. */
int hr_prune(const void *vst, mg_action *acts, int n)
{
    const hr_state *st = vst;
    uint64_t targets[HR_MAX_SQ];
    int where[HR_MAX_SQ], alive[HR_MAX_SQ], ni = 0;
    uint8_t drop[HR_MAX_ACTIONS];
    for (int i = 0; i < n; i++) {
        int type = HR_A_TYPE(acts[i]);
        drop[i] = 0;
        if (type == HR_A_SPELL && ni < HR_MAX_SQ) {
            targets[ni] = hr_spell_targets(st, HR_A_TX(acts[i]), HR_A_TY(acts[i]));
            where[ni] = i;
            alive[ni] = targets[ni] != 0;
            if (!alive[ni])
                drop[i] = 1;
            ni++;
        } else if (type == HR_A_SWAP_CARD && st->hand[st->current][HR_A_CARD(acts[i])] == 1) {
            drop[i] = 1;
        }
    }
    for (int i = 0; i < ni; i++) {
        if (!alive[i])
            continue;
        for (int j = 0; j < ni; j++)
            if (j != i && alive[j] && (targets[i] & ~targets[j]) == 0) {
                alive[i] = 0;
                drop[where[i]] = 1;
                break;
            }
    }
    int k = 0;
    for (int i = 0; i < n; i++)
        if (!drop[i])
            acts[k++] = acts[i];
    return k;
}
