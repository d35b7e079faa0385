/* heroes_internal.h: helpers shared by the heroes source files (not part of the API). */
#ifndef HEROES_INTERNAL_H
#define HEROES_INTERNAL_H

#include <string.h>

#include "mg_heroes.h"
#include "heroes_tables.h"

/* Class table (spec §5.1), indexed by unit kind HR_KNIGHT..HR_NINJA, HR_CRYSTAL. */
typedef struct hr_class {
    int16_t max_hp;
    int8_t speed;
    int16_t power;
    int8_t phys_res;
    int8_t mag_res;
    int8_t range;
    int8_t magical; /* attack type: 1 magical, 0 physical */
    double melee;   /* damage multiplier at distance 1 */
    double ranged;  /* damage multiplier at distance >= 2 */
} hr_class;

extern const hr_class hr_classes[12];

static inline int hr_abs(int v) { return v < 0 ? -v : v; }
static inline int hr_sign(int v) { return (v > 0) - (v < 0); }

static inline const hr_map *hr_map_of(const hr_state *st) { return &hr_maps[st->map]; }
static inline int hr_idx(const hr_state *st, int x, int y) { return x * st->h + y; }
static inline int hr_on_board(const hr_state *st, int x, int y)
{
    return x >= 0 && y >= 0 && x < st->w && y < st->h;
}

/* Lowest set bit index of a non-zero mask. */
static inline int hr_lowest_bit(uint64_t m)
{
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_ctzll(m);
#else
    int i = 0;
    while (!(m & 1)) {
        m >>= 1;
        i++;
    }
    return i;
#endif
}

/* The deploy square type that player p (0/1) may not enter. */
static inline int hr_opp_deploy_type(int p) { return p == 0 ? HR_SQ_DEPLOY2 : HR_SQ_DEPLOY1; }

/* hr_max_hp and hr_power for the rules' hot paths (rating, enumeration, damage): inlined,
 * where a call costs as much as the arithmetic. hr_max_hp stays a function for the API. */
static inline int hr_max_hp_of(const hr_unit *u)
{
    int base = hr_classes[u->kind].max_hp;
    return base + ((u->items & HR_EQ_DRAGONSCALE) ? base / 10 : 0) +
           ((u->items & HR_EQ_SHINING_HELM) ? base / 10 : 0);
}

/* Power of unit u standing on square s (spec §10.1). */
static inline int hr_power(const hr_state *st, const hr_unit *u, int s)
{
    int p = hr_classes[u->kind].power;
    if (u->items & HR_EQ_RUNEMETAL)
        p += p / 2;
    if (hr_maps[st->map].sq[s] == HR_SQ_POWER)
        p += 100;
    if (u->items & HR_EQ_SCROLL)
        p *= 3;
    return p;
}

static inline int hr_full_health(const hr_unit *u) { return u->hp == hr_max_hp_of(u); }

/* ---- Zobrist keys and the mutations that keep st->zob --------------------------------------
 * Keys come from a mixing function, so no tables are needed (but for the card counts of
 * every draw, below). The mutations are inline: every apply makes a few, from
 * heroes_rules.c, and a call across files cannot be inlined (a cleared square then keys
 * the empty unit it writes, and a move clears and sets in two calls). */

/* Zobrist key of the unit on square s, 0 for an empty square. */
static inline uint64_t hr_unit_key(int s, const hr_unit *u)
{
    if (u->owner == 0)
        return 0;
    uint64_t k = ((uint64_t)s << 40) | ((uint64_t)u->kind << 32) | ((uint64_t)u->owner << 28) |
                 ((uint64_t)u->items << 20) | (uint16_t)u->hp;
    return mg_mix64_inline(k ^ 0x5a17c0de00000000ULL);
}

/* Zobrist key of `count` cards of kind `card` in player p's hand (in_deck 0) or deck (1). */
static inline uint64_t hr_card_key_mixed(int p, int in_deck, int card, int count)
{
    uint64_t k = ((uint64_t)p << 20) | ((uint64_t)in_deck << 16) | ((uint64_t)card << 8) |
                 (uint64_t)count;
    return count ? mg_mix64_inline(k ^ 0xca4d000000000000ULL) : 0;
}

/* hr_card_key_mixed from the generated table (heroes_tables.h) for the usual counts: a draw
 * moves a card from deck to hand, four keys, and end of turn draws up to five cards. */
static inline uint64_t hr_card_key(int p, int in_deck, int card, int count)
{
    if ((unsigned)count < HR_CARD_KEYS)
        return hr_card_keys[p][in_deck][card][count];
    return hr_card_key_mixed(p, in_deck, card, count);
}

/* The square masks after the squares of `clear` are emptied and unit u is put on `bit`.
 * Computed in registers and each stored once (a store of part of a mask followed by a read
 * of it stalls store forwarding). */
static inline void hr_put_masks(hr_state *st, uint64_t clear, uint64_t bit, const hr_unit *u)
{
    uint64_t o0 = st->occ[0] & ~clear, o1 = st->occ[1] & ~clear;
    uint64_t alive = st->alive & ~clear, crystals = st->crystals & ~clear;
    if (u->owner == 1)
        o0 |= bit;
    else if (u->owner == 2)
        o1 |= bit;
    if (u->owner && u->hp > 0)
        alive |= bit;
    if (u->owner && u->kind == HR_CRYSTAL)
        crystals |= bit;
    st->occ[0] = o0;
    st->occ[1] = o1;
    st->alive = alive;
    st->crystals = crystals;
}

/* Board and card mutations: every change goes through these, which keep st->zob. */
static inline void hr_set_unit(hr_state *st, int s, hr_unit u)
{
    u.pad = 0;
    if (u.owner == 0)
        memset(&u, 0, sizeof u);
    st->zob ^= hr_unit_key(s, &st->board[s]) ^ hr_unit_key(s, &u);
    st->board[s] = u;
    uint64_t bit = (uint64_t)1 << s;
    hr_put_masks(st, bit, bit, &u);
}

/* hr_set_unit of an empty unit, written out: the empty unit has no key and no bits. */
static inline void hr_clear_square(hr_state *st, int s)
{
    static const hr_unit empty = {0, 0, 0, 0, 0};
    uint64_t keep = ~((uint64_t)1 << s);
    st->zob ^= hr_unit_key(s, &st->board[s]);
    st->board[s] = empty;
    st->occ[0] &= keep;
    st->occ[1] &= keep;
    st->alive &= keep;
    st->crystals &= keep;
}

/* Move the unit on square f to square t (t != f; t empty or holding a knocked-out unit,
 * which is replaced): hr_clear_square(f) then hr_set_unit(t, unit), written as one update
 * of the hash and of each mask. Moves are most of a rollout's actions. */
static inline void hr_move_unit(hr_state *st, int f, int t)
{
    static const hr_unit empty = {0, 0, 0, 0, 0};
    hr_unit u = st->board[f];
    if (u.owner == 0)
        u = empty;
    u.pad = 0;
    uint64_t bt = (uint64_t)1 << t, both = ((uint64_t)1 << f) | bt;
    st->zob ^= hr_unit_key(f, &u) ^ hr_unit_key(t, &st->board[t]) ^ hr_unit_key(t, &u);
    st->board[t] = u;
    st->board[f] = empty;
    hr_put_masks(st, both, bt, &u);
}

static inline void hr_hand_add(hr_state *st, int p, int card, int delta)
{
    int old = st->hand[p][card];
    st->zob ^= hr_card_key(p, 0, card, old) ^ hr_card_key(p, 0, card, old + delta);
    st->hand[p][card] = (uint8_t)(old + delta);
    st->hand_n[p] = (uint8_t)(st->hand_n[p] + delta);
}

static inline void hr_deck_add(hr_state *st, int p, int card, int delta)
{
    int old = st->deck[p][card];
    st->zob ^= hr_card_key(p, 1, card, old) ^ hr_card_key(p, 1, card, old + delta);
    st->deck[p][card] = (uint8_t)(old + delta);
    st->deck_n[p] = (uint8_t)(st->deck_n[p] + delta);
}

/* Draw up to the hand size for player p. Returns MG_OK, or MG_ERR_CONFIG when random
 * draws are configured and no rng was given (state unchanged then). */
int hr_draw_up(hr_state *st, int p, mg_rng *rng);


/* Targets of an inferno centred on square s: bit mask over square indices (spec §15). */
uint64_t hr_spell_targets(const hr_state *st, int tx, int ty);

/* Winner by the reference's getWinner (§12.3): 0, 1, or -1 for a draw. */
int hr_winner_now(const hr_state *st);

/* Type of the unit action from F to T in this state (spec §8.1), or -1 if none. Both
 * enumeration and validation use this, so they cannot disagree. */
int hr_unit_action_type(const hr_state *st, int fx, int fy, int tx, int ty);

/* 1 if item `card` may be dropped on square s by the current player (spec §8.2). */
int hr_item_target_ok(const hr_state *st, int card, int s);

/* Rules effects (apply after validation). */
void hr_do_action(hr_state *st, mg_action a, mg_rng *rng);

#endif
