/* heroes_rules.c: legal-action enumeration, validation and the effects of every action
 * (spec §8-§12). Enumeration and validation share one classifier per action kind. */
#include "heroes_internal.h"
#include "heroes_tables.h"

/* ---- Line of sight (§10.7) -------------------------------------------------------------- */

/* 1 if square (x,y) blocks line of sight for the current player: a living unit (or a
 * crystal) not owned by the current player. */
static int blocks(const hr_state *st, int x, int y)
{
    const hr_unit *u = &st->board[hr_idx(st, x, y)];
    return u->owner != 0 && u->owner != st->current + 1 && u->hp != 0;
}

/* Supercover line (E. Dedu's Bresenham variant) from A to T, excluding both ends: 1 if
 * any visited cell blocks. Only called for distance >= 2, non-diagonal-neighbour targets. */
static int los_blocked(const hr_state *st, int x1, int y1, int x2, int y2)
{
    int sx = x2 - x1 >= 0 ? 1 : -1, sy = y2 - y1 >= 0 ? 1 : -1;
    int dx = hr_abs(x2 - x1), dy = hr_abs(y2 - y1);
    int ddx = 2 * dx, ddy = 2 * dy, x = x1, y = y1;
#define HR_VISIT(cx, cy)                                                                   \
    do {                                                                                   \
        int vx_ = (cx), vy_ = (cy);                                                        \
        if (!(vx_ == x2 && vy_ == y2) && !(vx_ == x1 && vy_ == y1) && blocks(st, vx_, vy_)) \
            return 1;                                                                      \
    } while (0)
    if (ddx >= ddy) {
        int err = dx, prev = dx;
        for (int i = 0; i < dx; i++) {
            x += sx;
            err += ddy;
            if (err > ddx) {
                y += sy;
                err -= ddx;
                if (err + prev < ddx) {
                    HR_VISIT(x, y - sy);
                } else if (err + prev > ddx) {
                    HR_VISIT(x - sx, y);
                } else {
                    HR_VISIT(x, y - sy);
                    HR_VISIT(x - sx, y);
                }
            }
            HR_VISIT(x, y);
            prev = err;
        }
    } else {
        int err = dy, prev = dy;
        for (int i = 0; i < dy; i++) {
            y += sy;
            err += ddx;
            if (err > ddy) {
                x += sx;
                err -= ddy;
                if (err + prev < ddy) {
                    HR_VISIT(x - sx, y);
                } else if (err + prev > ddy) {
                    HR_VISIT(x, y - sy);
                } else {
                    HR_VISIT(x - sx, y);
                    HR_VISIT(x, y - sy);
                }
            }
            HR_VISIT(x, y);
            prev = err;
        }
    }
#undef HR_VISIT
    return 0;
}

/* ---- Classifiers shared by enumeration and validation ----------------------------------- */

/* Type of the unit action of u (on (fx,fy)) to square t at (tx,ty), distance d, or -1:
 * the rules of spec §8.1 written out plainly. Validation uses it; enumeration computes the
 * same sets with square masks for speed, and a property test checks they agree. */
static int classify(const hr_state *st, const hr_unit *u, int fx, int fy, int tx, int ty, int t,
                    int d)
{
    const hr_unit *v = &st->board[t];
    const hr_class *c = &hr_classes[u->kind];
    int me = st->current + 1;
    if (v->owner == 0) {
        if (d > c->speed)
            return -1;
        return hr_maps[st->map].sq[t] == hr_opp_deploy_type(st->current) ? -1 : HR_A_MOVE;
    }
    if (v->hp == 0) { /* a knocked-out unit of either owner */
        if (hr_maps[st->map].sq[t] == hr_opp_deploy_type(st->current))
            return -1;
        if (u->kind == HR_CLERIC && d <= 2)
            /* The reference labels this HEAL but, for an enemy, executes a stomp (§9.5). */
            return v->owner == me ? HR_A_HEAL : HR_A_MOVE;
        return d <= c->speed ? HR_A_MOVE : -1;
    }
    if (v->owner != me) {
        if (d > c->range)
            return -1;
        if (d > 1 && !(hr_abs(tx - fx) == 1 && hr_abs(ty - fy) == 1) &&
            los_blocked(st, fx, fy, tx, ty))
            return -1;
        return HR_A_ATTACK;
    }
    if (v->kind == HR_CRYSTAL)
        return -1;
    if (u->kind == HR_CLERIC && d <= 2 && !hr_full_health(v))
        return HR_A_HEAL;
    if (u->kind == HR_NINJA)
        return HR_A_TELEPORT;
    return -1;
}

int hr_unit_action_type(const hr_state *st, int fx, int fy, int tx, int ty)
{
    int d = hr_abs(tx - fx) + hr_abs(ty - fy);
    return classify(st, &st->board[hr_idx(st, fx, fy)], fx, fy, tx, ty, hr_idx(st, tx, ty), d);
}

int hr_item_target_ok(const hr_state *st, int card, int s)
{
    const hr_unit *v = &st->board[s];
    if (v->owner != st->current + 1 || v->kind == HR_CRYSTAL)
        return 0;
    if (card == HR_POTION)
        return !hr_full_health(v);
    static const uint8_t bit[HR_NCARDS] = {0, 0, 0, 0, 0, 0, 0, HR_EQ_RUNEMETAL, HR_EQ_SCROLL,
                                           HR_EQ_DRAGONSCALE, HR_EQ_SHINING_HELM};
    return v->hp > 0 && !(v->items & bit[card]);
}

static int deploy_target_ok(const hr_state *st, int s)
{
    const hr_map *m = hr_map_of(st);
    int p = st->current;
    for (int i = 0; i < m->ndeploy[p]; i++)
        if (m->deploy[p][i] == s)
            return st->board[s].owner == 0 || st->board[s].hp == 0;
    return 0;
}

/* ---- Enumeration (§8) ------------------------------------------------------------------- */

/* Square masks of one enumeration (computed once per call from the state's masks). */
typedef struct gen_ctx {
    uint64_t empty, ko, ko_mine, enemy_alive, friends, opp_deploy;
} gen_ctx;

/* 1 if the attack from (fx,fy) to (tx,ty) (offset within 3) is blocked: a living enemy
 * unit or crystal on a line-of-sight cell (§10.7). */
static inline int attack_blocked(const hr_state *st, const gen_ctx *g, int fx, int fy, int tx, int ty)
{
    const hr_offset *o = &hr_los3[tx - fx + 3][ty - fy + 3];
    for (int i = 0; i < o->nlos; i++) {
        int s = (fx + o->los[i][0]) * st->h + fy + o->los[i][1];
        if (g->enemy_alive >> s & 1)
            return 1;
    }
    return 0;
}

/* Unit actions of the unit on square f, in the reference's order (dx outer, dy inner, which
 * is ascending square index since s = x*h + y). Each target square carries at most one
 * action, so the targets of each kind are computed as masks (the rules of classify, §8.1)
 * and emitted in ascending order. A property test checks this against classify. */
static int gen_unit(const hr_state *st, const gen_ctx *g, int f, mg_action *out, int n)
{
    const hr_unit *u = &st->board[f];
    const hr_class *c = &hr_classes[u->kind];
    const uint64_t *dia = hr_diamond[st->map][f];
    const uint8_t *xy = hr_sq_xy[st->map]; /* the squares' fields, without a division */
    mg_action from = (mg_action)xy[f] << 8;
    uint64_t move, heal = 0, tele = 0;
    uint64_t attack = g->enemy_alive & dia[c->range];
    if (u->kind == HR_CLERIC) {
        move = (g->empty | (g->ko & ~g->ko_mine)) & dia[2] & ~g->opp_deploy;
        heal = g->ko_mine & dia[2] & ~g->opp_deploy;
        uint64_t cand = g->friends & dia[2];
        while (cand) {
            int t = hr_lowest_bit(cand);
            cand &= cand - 1;
            if (!hr_full_health(&st->board[t]))
                heal |= (uint64_t)1 << t;
        }
    } else {
        move = (g->empty | g->ko) & dia[c->speed] & ~g->opp_deploy;
        if (u->kind == HR_NINJA)
            tele = g->friends & ~((uint64_t)1 << f);
    }
    uint64_t all = move | attack | heal | tele;
    while (all) {
        int t = hr_lowest_bit(all);
        uint64_t bit = (uint64_t)1 << t;
        all &= all - 1;
        int k;
        if (move & bit)
            k = HR_A_MOVE;
        else if (heal & bit)
            k = HR_A_HEAL;
        else if (tele & bit)
            k = HR_A_TELEPORT;
        else if (!(dia[1] & bit) && attack_blocked(st, g, f / st->h, f % st->h, t / st->h, t % st->h))
            continue; /* beyond distance 1 and blocked */
        else
            k = HR_A_ATTACK;
        out[n++] = (mg_action)k | from | (mg_action)xy[t] << 16; /* HR_ACTION(k, 0, f, t) */
    }
    return n;
}

/* The squares of the mover's units that item card `card` may be equipped on. */
static uint64_t item_targets(const hr_state *st, int card)
{
    uint64_t cand = st->occ[st->current] & ~st->crystals, ok = 0;
    while (cand) {
        int s = hr_lowest_bit(cand);
        cand &= cand - 1;
        if (hr_item_target_ok(st, card, s))
            ok |= (uint64_t)1 << s;
    }
    return ok;
}

static int gen_card(const hr_state *st, const gen_ctx *g, int card, mg_action *out, int n)
{
    int w = st->w, h = st->h, me = st->current;
    const uint8_t *xy = hr_sq_xy[st->map]; /* a square's to field, without a division */
    if (HR_IS_ITEM_CARD(card)) {
        uint64_t ok = item_targets(st, card);
        while (ok) {
            int s = hr_lowest_bit(ok);
            ok &= ok - 1;
            out[n++] = HR_ACTION(HR_A_EQUIP, card, 0, 0, 0, 0) | (mg_action)xy[s] << 16;
        }
    } else if (card == HR_INFERNO) {
        for (int x = 0; x < w; x++)
            for (int y = 0; y < h; y++)
                out[n++] = HR_ACTION(HR_A_SPELL, card, 0, 0, x, y);
    } else {
        const hr_map *m = hr_map_of(st);
        for (int i = 0; i < m->ndeploy[me]; i++) {
            int s = m->deploy[me][i];
            if ((g->empty | g->ko) >> s & 1)
                out[n++] = HR_ACTION(HR_A_DEPLOY, card, 0, 0, 0, 0) | (mg_action)xy[s] << 16;
        }
    }
    if (st->deck_n[me] > 0)
        out[n++] = HR_ACTION(HR_A_SWAP_CARD, card, 0, 0, 0, 0);
    return n;
}

/* The masks of an enumeration at st (AP > 0, not terminal). */
static void gen_init(const hr_state *st, gen_ctx *g)
{
    int me = st->current, opp = 1 - me;
    /* masks from tables: this runs twice per rollout step (groups, then one group) */
    uint64_t board = hr_board_mask[st->map];
    g->empty = board & ~(st->occ[0] | st->occ[1]);
    g->ko = (st->occ[0] | st->occ[1]) & ~st->alive;
    g->ko_mine = st->occ[me] & ~st->alive;
    g->enemy_alive = st->occ[opp] & st->alive;
    g->friends = st->occ[me] & st->alive & ~st->crystals;
    g->opp_deploy = hr_deploy_mask[st->map][opp];
}

/* 1 if the unit on square f has at least one action (gen_unit would emit one). */
static int unit_has_action(const hr_state *st, const gen_ctx *g, int f)
{
    const hr_unit *u = &st->board[f];
    const hr_class *c = &hr_classes[u->kind];
    const uint64_t *dia = hr_diamond[st->map][f];
    if (u->kind == HR_CLERIC) {
        if ((g->empty | g->ko) & dia[2] & ~g->opp_deploy)
            return 1; /* a move, or a heal of a knocked-out friend */
        uint64_t cand = g->friends & dia[2];
        while (cand) {
            int t = hr_lowest_bit(cand);
            cand &= cand - 1;
            if (!hr_full_health(&st->board[t]))
                return 1;
        }
    } else {
        if ((g->empty | g->ko) & dia[c->speed] & ~g->opp_deploy)
            return 1;
        if (u->kind == HR_NINJA && (g->friends & ~((uint64_t)1 << f)))
            return 1;
    }
    uint64_t attack = g->enemy_alive & dia[c->range];
    if (attack & dia[1]) /* an adjacent target needs no line of sight */
        return 1;
    int h = st->h, fx = f / h, fy = f % h;
    while (attack) {
        int t = hr_lowest_bit(attack);
        attack &= attack - 1;
        if (!attack_blocked(st, g, fx, fy, t / h, t % h))
            return 1;
    }
    return 0;
}

/* 1 if card `card` (in hand) has at least one action (gen_card would emit one). */
static int card_has_action(const hr_state *st, const gen_ctx *g, int card)
{
    int me = st->current;
    if (st->deck_n[me] > 0 || card == HR_INFERNO)
        return 1; /* a swap; an inferno may target any square */
    if (HR_IS_ITEM_CARD(card))
        return item_targets(st, card) != 0;
    const hr_map *m = hr_map_of(st);
    for (int i = 0; i < m->ndeploy[me]; i++)
        if ((g->empty | g->ko) >> m->deploy[me][i] & 1)
            return 1;
    return 0;
}

/* The groups of hr_legal's list (mg_game_vt.legal_groups), in its order: the units with an
 * action (ascending square), then the cards in hand with one (card order). The group
 * values are those of hr_action_groups. */
int hr_legal_groups(const void *vst, int *group)
{
    const hr_state *st = vst;
    int n = 0;
    if (st->terminal || st->ap <= 0)
        return 0;
    gen_ctx g;
    gen_init(st, &g);
    const uint8_t *yx = hr_sq_yx[st->map];
    uint64_t units = g.friends;
    while (units) {
        int s = hr_lowest_bit(units);
        units &= units - 1;
        if (unit_has_action(st, &g, s)) /* MG_GROUP_UNIT | x << 4 | y */
            group[n++] = MG_GROUP_UNIT | yx[s];
    }
    const uint8_t *hand = st->hand[st->current];
    if (st->deck_n[st->current] > 0) { /* every card in hand can be swapped (card_has_action) */
        for (int c = 0; c < HR_NCARDS; c++)
            if (hand[c] > 0)
                group[n++] = MG_GROUP_CARD | c;
        return n;
    }
    for (int c = 0; c < HR_NCARDS; c++)
        if (hand[c] > 0 && card_has_action(st, &g, c))
            group[n++] = MG_GROUP_CARD | c;
    return n;
}

/* The actions of one group of hr_legal_groups (mg_game_vt.group_legal), in hr_legal's
 * order; group 0 is END_TURN. */
int hr_group_legal(const void *vst, int group, mg_action *out)
{
    const hr_state *st = vst;
    if (group == 0) {
        out[0] = HR_ACTION(HR_A_END_TURN, 0, 0, 0, 0, 0);
        return 1;
    }
    gen_ctx g;
    gen_init(st, &g);
    if (MG_GROUP_CLASS(group) == 2)
        return gen_card(st, &g, group & 0xf, out, 0);
    return gen_unit(st, &g, hr_idx(st, (group >> 4) & 0xf, group & 0xf), out, 0);
}

/* Legal actions: the reference's list (§8) in its order, then END_TURN while AP > 0;
 * exactly [END_TURN] at AP 0; nothing in a terminal state. */
int hr_legal(const void *vst, mg_action *out)
{
    const hr_state *st = vst;
    int n = 0;
    if (st->terminal)
        return 0;
    if (st->ap > 0) {
        int me = st->current;
        gen_ctx g;
        gen_init(st, &g);
        uint64_t units = g.friends;
        while (units) {
            int s = hr_lowest_bit(units);
            units &= units - 1;
            n = gen_unit(st, &g, s, out, n);
        }
        const uint8_t *hand = st->hand[me];
        for (int c = 0; c < HR_NCARDS; c++)
            if (hand[c] > 0)
                n = gen_card(st, &g, c, out, n);
    }
    out[n++] = HR_ACTION(HR_A_END_TURN, 0, 0, 0, 0, 0);
    return n;
}

int hr_reference_legal_count(const hr_state *st)
{
    mg_action buf[HR_MAX_ACTIONS];
    if (st->ap <= 0)
        return 1;
    return hr_legal(st, buf) - 1;
}

/* ---- Validation ------------------------------------------------------------------------- */

/* Detail codes; texts in hr_errstr (heroes_state.c). */
enum {
    E_NO_AP = 1, E_NOT_IN_HAND, E_DEPLOY_SQUARE, E_ITEM_TARGET, E_OFF_BOARD, E_NO_UNIT,
    E_NOT_THAT_ACTION, E_DECK_EMPTY, E_WRONG_CARD, E_SAME_SQUARE
};

int hr_check(const void *vst, mg_action a)
{
    const hr_state *st = vst;
    int type = HR_A_TYPE(a), card = HR_A_CARD(a);
    int fx = HR_A_FX(a), fy = HR_A_FY(a), tx = HR_A_TX(a), ty = HR_A_TY(a);
    if (a >> 24 || type >= HR_A_NTYPES)
        return MG_ERR_DECODE;
    if (st->terminal)
        return MG_ERR_TERMINAL;
    if (type == HR_A_END_TURN)
        return (a == 0) ? MG_OK : MG_ERR_DECODE;
    if (st->ap <= 0)
        return HR_ILL(E_NO_AP);
    switch (type) {
    case HR_A_DEPLOY:
    case HR_A_EQUIP:
    case HR_A_SPELL:
        if (fx || fy || card >= HR_NCARDS)
            return MG_ERR_DECODE;
        if ((type == HR_A_DEPLOY && !HR_IS_UNIT_CARD(card)) ||
            (type == HR_A_EQUIP && !HR_IS_ITEM_CARD(card)) ||
            (type == HR_A_SPELL && card != HR_INFERNO))
            return HR_ILL(E_WRONG_CARD);
        if (!hr_on_board(st, tx, ty))
            return HR_ILL(E_OFF_BOARD);
        if (st->hand[st->current][card] == 0)
            return HR_ILL(E_NOT_IN_HAND);
        if (type == HR_A_DEPLOY && !deploy_target_ok(st, hr_idx(st, tx, ty)))
            return HR_ILL(E_DEPLOY_SQUARE);
        if (type == HR_A_EQUIP && !hr_item_target_ok(st, card, hr_idx(st, tx, ty)))
            return HR_ILL(E_ITEM_TARGET);
        return MG_OK;
    case HR_A_SWAP_CARD:
        if (fx || fy || tx || ty || card >= HR_NCARDS)
            return MG_ERR_DECODE;
        if (st->hand[st->current][card] == 0)
            return HR_ILL(E_NOT_IN_HAND);
        if (st->deck_n[st->current] == 0)
            return HR_ILL(E_DECK_EMPTY);
        return MG_OK;
    default: { /* unit actions */
        if (card)
            return MG_ERR_DECODE;
        if (!hr_on_board(st, fx, fy) || !hr_on_board(st, tx, ty))
            return HR_ILL(E_OFF_BOARD);
        if (fx == tx && fy == ty)
            return HR_ILL(E_SAME_SQUARE);
        const hr_unit *u = &st->board[hr_idx(st, fx, fy)];
        if (u->owner != st->current + 1 || u->kind == HR_CRYSTAL || u->hp == 0)
            return HR_ILL(E_NO_UNIT);
        if (hr_unit_action_type(st, fx, fy, tx, ty) != type)
            return HR_ILL(E_NOT_THAT_ACTION);
        return MG_OK;
    }
    }
}

/* ---- Effects ---------------------------------------------------------------------------- */

static int assault_bonus(const hr_state *st)
{
    const hr_map *m = hr_map_of(st);
    int k = 0;
    for (int i = 0; i < m->nassault; i++) {
        const hr_unit *u = &st->board[m->assault[i]];
        if (u->owner == st->current + 1 && u->hp > 0)
            k++;
    }
    return 300 * k;
}

static int resistance(const hr_state *st, const hr_unit *v, int s, int magical)
{
    const hr_class *c = &hr_classes[v->kind];
    if (magical)
        return c->mag_res + ((v->items & HR_EQ_SHINING_HELM) ? 20 : 0);
    return c->phys_res + ((v->items & HR_EQ_DRAGONSCALE) ? 20 : 0) +
           (hr_maps[st->map].sq[s] == HR_SQ_DEFENSE ? 20 : 0);
}

/* Base damage of a hit from u on square a to v on square q (§10.3), in doubles as the
 * reference computes it. */
static int damage(const hr_state *st, const hr_unit *u, int a, const hr_unit *v, int q)
{
    const hr_class *c = &hr_classes[u->kind];
    int h = st->h;
    int d = hr_abs(a / h - q / h) + hr_abs(a % h - q % h);
    double dam = (double)hr_power(st, u, a);
    dam = dam * (d == 1 ? c->melee : c->ranged);
    return (int)(dam * ((100.0 - (double)resistance(st, v, q, c->magical)) / 100.0));
}

/* A crystal of the opponent was destroyed: remove it and end the game if it was the last. */
static void crystal_destroyed(hr_state *st, int s)
{
    hr_clear_square(st, s);
    const hr_map *m = hr_map_of(st);
    int opp = 1 - st->current;
    for (int i = 0; i < m->ncrystal[opp]; i++) {
        const hr_unit *u = &st->board[m->crystal[opp][i]];
        if (u->owner == opp + 1 && u->kind == HR_CRYSTAL && u->hp > 0)
            return;
    }
    st->terminal = 1;
    st->winner = (int8_t)hr_winner_now(st);
}

/* Subtract dmg from the unit on square s (a living enemy); KO or destroy at <= 0. */
static void hit(hr_state *st, int s, int dmg)
{
    hr_unit v = st->board[s];
    int hp = v.hp - dmg;
    if (hp <= 0) {
        if (v.kind == HR_CRYSTAL) {
            crystal_destroyed(st, s);
            return;
        }
        hp = 0;
    }
    v.hp = (int16_t)hp;
    hr_set_unit(st, s, v);
}

static void push(hr_state *st, int a, int q)
{
    const hr_unit *v = &st->board[q];
    if (v->owner == 0 || v->kind == HR_CRYSTAL)
        return;
    int h = st->h;
    int nx = q / h + hr_sign(q / h - a / h), ny = q % h + hr_sign(q % h - a % h);
    if (!hr_on_board(st, nx, ny))
        return;
    int n = hr_idx(st, nx, ny);
    const hr_unit *w = &st->board[n];
    if (w->owner != 0 && w->hp > 0)
        return;
    int sq = hr_maps[st->map].sq[n];
    if ((sq == HR_SQ_DEPLOY1 && v->owner == 2) || (sq == HR_SQ_DEPLOY2 && v->owner == 1))
        return;
    hr_move_unit(st, q, n);
}

static int chain_value(int dx, int dy, int nx, int ny)
{
    if (nx == dx && ny == dy)
        return 10;
    return 1 + 4 * ((nx == 0) != (ny == 0)) + 2 * (ny == -1) + (nx == 1);
}

static void chain(hr_state *st, const hr_unit *u, int a, int q)
{
    int h = st->h;
    int dx = hr_sign(q / h - a / h), dy = hr_sign(q % h - a % h);
    int fx = q / h, fy = q % h;
    for (int jump = 1; jump <= 2; jump++) {
        int best = -1, best_val = 0, bdx = 0, bdy = 0;
        for (int ndx = -1; ndx <= 1; ndx++)
            for (int ndy = -1; ndy <= 1; ndy++) {
                if (ndx == 0 && ndy == 0)
                    continue;
                int cx = fx + ndx, cy = fy + ndy;
                if (!hr_on_board(st, cx, cy))
                    continue;
                const hr_unit *w = &st->board[hr_idx(st, cx, cy)];
                if (w->owner == 0 || w->owner == st->current + 1 || w->hp <= 0)
                    continue;
                if (ndx == -dx && ndy == -dy)
                    continue;
                int val = chain_value(dx, dy, ndx, ndy);
                if (val > best_val) {
                    best = hr_idx(st, cx, cy);
                    best_val = val;
                    bdx = ndx;
                    bdy = ndy;
                }
            }
        if (best < 0)
            return;
        const hr_unit *w = &st->board[best];
        int dmg = damage(st, u, a, w, best);
        dmg = (int)((double)dmg * (jump == 1 ? 0.75 : 0.56));
        if (w->kind == HR_CRYSTAL)
            dmg += assault_bonus(st);
        hit(st, best, dmg);
        dx = bdx;
        dy = bdy;
        fx = best / h;
        fy = best % h;
    }
}

static void drop_scroll(hr_state *st, int s)
{
    hr_unit u = st->board[s];
    if (u.items & HR_EQ_SCROLL) {
        u.items &= (uint8_t)~HR_EQ_SCROLL;
        hr_set_unit(st, s, u);
    }
}

static void attack(hr_state *st, int a, int q)
{
    hr_unit u = st->board[a]; /* a copy: the attacker's stats stay fixed during the attack */
    const hr_unit *v = &st->board[q];
    int dmg = damage(st, &u, a, v, q);
    if (v->kind == HR_CRYSTAL)
        dmg += assault_bonus(st);
    hit(st, q, dmg);
    if (u.kind == HR_KNIGHT)
        push(st, a, q);
    if (u.kind == HR_WIZARD)
        chain(st, &u, a, q);
    drop_scroll(st, a);
}

static void heal_by(hr_state *st, int s, int amount)
{
    hr_unit v = st->board[s];
    int hp = v.hp + amount, max = hr_max_hp_of(&v);
    v.hp = (int16_t)(hp > max ? max : hp);
    hr_set_unit(st, s, v);
}

static void heal(hr_state *st, int a, int t)
{
    int amount = hr_power(st, &st->board[a], a) * (st->board[t].hp == 0 ? 2 : 3);
    heal_by(st, t, amount);
    drop_scroll(st, a);
}

static void inferno(hr_state *st, int tx, int ty)
{
    for (int dx = -1; dx <= 1; dx++)
        for (int dy = -1; dy <= 1; dy++) {
            int x = tx + dx, y = ty + dy;
            if (!hr_on_board(st, x, y))
                continue;
            int s = hr_idx(st, x, y);
            hr_unit v = st->board[s];
            if (v.owner == 0 || v.owner == st->current + 1)
                continue;
            if (v.hp == 0) {
                hr_clear_square(st, s);
                continue;
            }
            double dmg = 350.0;
            if (v.kind == HR_CRYSTAL)
                dmg += (double)assault_bonus(st);
            dmg = dmg * ((100.0 - (double)resistance(st, &v, s, 1)) / 100.0);
            int hp = (int)((double)v.hp - dmg);
            if (hp <= 0) {
                if (v.kind == HR_CRYSTAL) {
                    crystal_destroyed(st, s);
                    continue;
                }
                hp = 0;
            }
            v.hp = (int16_t)hp;
            hr_set_unit(st, s, v);
        }
}

static void equip(hr_state *st, int card, int s)
{
    hr_unit v = st->board[s];
    if (card == HR_POTION) {
        heal_by(st, s, v.hp == 0 ? 100 : 1000);
        return;
    }
    switch (card) {
    case HR_RUNEMETAL: v.items |= HR_EQ_RUNEMETAL; break;
    case HR_SCROLL: v.items |= HR_EQ_SCROLL; break;
    case HR_DRAGONSCALE: v.items |= HR_EQ_DRAGONSCALE; break;
    default: v.items |= HR_EQ_SHINING_HELM; break;
    }
    if (card == HR_DRAGONSCALE || card == HR_SHINING_HELM) {
        int hp = (int)((double)v.hp + (double)v.hp / 10.0), max = hr_max_hp_of(&v);
        v.hp = (int16_t)(hp > max ? max : hp);
    }
    hr_set_unit(st, s, v);
}

/* 1 if player p (0/1) has a unit card in hand or deck, or any non-crystal unit on board. */
static int has_units(const hr_state *st, int p)
{
    for (int c = HR_KNIGHT; c <= HR_NINJA; c++)
        if (st->hand[p][c] || st->deck[p][c])
            return 1;
    return (st->occ[p] & ~st->crystals) != 0; /* a unit of p's on the board */
}

static int has_crystal(const hr_state *st, int p)
{
    const hr_map *m = hr_map_of(st);
    for (int i = 0; i < m->ncrystal[p]; i++) {
        const hr_unit *u = &st->board[m->crystal[p][i]];
        if (u->owner == p + 1 && u->kind == HR_CRYSTAL && u->hp > 0)
            return 1;
    }
    return 0;
}

int hr_winner_now(const hr_state *st)
{
    if (st->turn >= st->turn_limit)
        return -1;
    int a0 = has_crystal(st, 0) && has_units(st, 0);
    int a1 = has_crystal(st, 1) && has_units(st, 1);
    if (a0 == a1)
        return -1;
    return a0 ? 0 : 1;
}

/* End of turn (§6.1). Draws cannot fail here: apply checked the rng beforehand. */
static void end_turn(hr_state *st, mg_rng *rng)
{
    for (uint64_t ko = st->occ[st->current] & ~st->alive; ko; ko &= ko - 1)
        hr_clear_square(st, hr_lowest_bit(ko)); /* the mover's knocked-out units */
    if (!has_units(st, 0) || !has_units(st, 1) || !has_crystal(st, 1 - st->current) ||
        st->turn >= st->turn_limit) {
        st->terminal = 1;
        st->winner = (int8_t)hr_winner_now(st);
        return;
    }
    hr_draw_up(st, st->current, rng);
    st->current = (uint8_t)(1 - st->current);
    hr_draw_up(st, st->current, rng);
    st->ap = st->ap_per_turn;
    st->turn++;
}

void hr_do_action(hr_state *st, mg_action a, mg_rng *rng)
{
    int type = HR_A_TYPE(a), card = HR_A_CARD(a), p = st->current;
    int f = hr_idx(st, HR_A_FX(a), HR_A_FY(a)), t = hr_idx(st, HR_A_TX(a), HR_A_TY(a));
    switch (type) {
    case HR_A_END_TURN:
        end_turn(st, rng);
        return;
    case HR_A_DEPLOY: {
        hr_unit u = {hr_classes[card].max_hp, (uint8_t)card, (uint8_t)(p + 1), 0, 0};
        hr_set_unit(st, t, u);
        break;
    }
    case HR_A_EQUIP: equip(st, card, t); break;
    case HR_A_SPELL: inferno(st, HR_A_TX(a), HR_A_TY(a)); break;
    case HR_A_SWAP_CARD: hr_deck_add(st, p, card, 1); break;
    case HR_A_MOVE: hr_move_unit(st, f, t); break;
    case HR_A_ATTACK: attack(st, f, t); break;
    case HR_A_HEAL: heal(st, f, t); break;
    case HR_A_TELEPORT: {
        hr_unit u = st->board[f], v = st->board[t];
        hr_set_unit(st, f, v);
        hr_set_unit(st, t, u);
        break;
    }
    }
    if (type == HR_A_DEPLOY || type == HR_A_EQUIP || type == HR_A_SPELL || type == HR_A_SWAP_CARD)
        hr_hand_add(st, p, card, -1);
    st->ap--;
}

/* hr_apply for an action of hr_legal's list at st (mg_game_vt.apply_legal): no checks
 * but the rng's. */
int hr_apply_legal(void *vst, mg_action a, mg_rng *rng)
{
    hr_state *st = vst;
    if (a == 0 && st->draws == HR_DRAW_RANDOM && rng == NULL)
        return MG_ERR_CONFIG;
    hr_do_action(st, a, rng);
    return MG_OK;
}

int hr_apply(void *vst, mg_action a, mg_rng *rng)
{
    hr_state *st = vst;
    int rc = hr_check(st, a);
    if (rc != MG_OK)
        return rc;
    if (HR_A_TYPE(a) == HR_A_END_TURN && st->draws == HR_DRAW_RANDOM && rng == NULL)
        return MG_ERR_CONFIG;
    hr_do_action(st, a, rng);
    return MG_OK;
}
