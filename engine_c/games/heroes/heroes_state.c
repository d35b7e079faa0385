/* heroes_state.c: heroes tables, setup, card draws, hashing, observations, determinization,
 * state validation and the game's interface record. */
#include <string.h>

#include "heroes_internal.h"

/* ---- Tables ----------------------------------------------------------------------------- */

const hr_class hr_classes[12] = {
    /* max_hp speed power phys mag range magical melee ranged */
    [HR_KNIGHT] = {1000, 2, 200, 20, 0, 1, 0, 1.0, 1.0},
    [HR_ARCHER] = {800, 2, 300, 0, 0, 3, 0, 0.5, 1.0},
    [HR_CLERIC] = {800, 2, 200, 0, 0, 2, 1, 1.0, 1.0},
    [HR_WIZARD] = {800, 2, 200, 0, 10, 2, 1, 1.0, 1.0},
    [HR_NINJA] = {800, 3, 200, 0, 0, 2, 0, 2.0, 1.0},
    [HR_CRYSTAL] = {4500, 0, 0, 0, 0, 0, 0, 0.0, 0.0},
};

/* Generated from the map files of spec §2 (index s = x*h + y). */
const hr_map hr_maps[HR_NMAPS] = {
    {/* map a: d000S000D / 00c000C00 / 00P000P00 / 0c00000C0 / d000A000D */
     "a", 9, 5,
     {1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0,
      0, 4, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 2},
     {2, 2}, {{0, 4}, {40, 44}},
     {2, 2}, {{11, 8}, {31, 38}},
     1, {24}},
    {/* map a-small: d00S00D / 00c0C00 / 0c0P0C0 / d00A00D */
     "a-small", 7, 4,
     {1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 5, 4, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 2},
     {2, 2}, {{0, 3}, {24, 27}},
     {2, 2}, {{9, 6}, {17, 22}},
     1, {15}},
    {/* map a-tiny: d0S0P / c0A0C / P0S0D */
     "a-tiny", 5, 3,
     {1, 0, 5, 0, 0, 0, 3, 4, 3, 0, 0, 0, 5, 0, 2},
     {1, 1}, {{0}, {14}},
     {1, 1}, {{1}, {13}},
     1, {7}},
};

const uint8_t hr_decks[HR_NDECKS][HR_NCARDS] = {
    /* K  A  C  W  N  Inf Pot Rune Scroll Dragon Helm */
    {3, 3, 3, 3, 1, 2, 2, 3, 2, 3, 3}, /* standard, 28 */
    {2, 2, 2, 2, 1, 1, 1, 2, 1, 2, 2}, /* small, 18 */
    {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, /* tiny, 11 */
};

int hr_base_hp(int kind)
{
    return (kind <= HR_NINJA || kind == HR_CRYSTAL) ? hr_classes[kind].max_hp : 0;
}

int hr_max_hp(const hr_unit *u) { return hr_max_hp_of(u); }

uint64_t hr_spell_targets(const hr_state *st, int tx, int ty)
{
    uint64_t mask = 0;
    for (int x = tx - 1; x <= tx + 1; x++)
        for (int y = ty - 1; y <= ty + 1; y++) {
            if (!hr_on_board(st, x, y))
                continue;
            int s = hr_idx(st, x, y);
            if (st->board[s].owner != 0 && st->board[s].owner != st->current + 1)
                mask |= (uint64_t)1 << s;
        }
    return mask;
}

/* ---- Zobrist hashing: keys come from a mixing function, so no tables are needed -------- */

/* The keys (hr_unit_key, hr_card_key_mixed) and the mutations that keep st->zob are in
 * heroes_internal.h. hr_zobrist_full computes every key by mixing, never from the table of
 * card keys, so that the tests comparing it with the incremental hash check that table. */

/* Rebuild the square masks from the board (after an import). */
static void rebuild_masks(hr_state *st)
{
    st->occ[0] = st->occ[1] = st->alive = st->crystals = 0;
    for (int s = 0; s < HR_MAX_SQ; s++) {
        const hr_unit *u = &st->board[s];
        uint64_t bit = (uint64_t)1 << s;
        if (!u->owner)
            continue;
        st->occ[u->owner - 1] |= bit;
        if (u->hp > 0)
            st->alive |= bit;
        if (u->kind == HR_CRYSTAL)
            st->crystals |= bit;
    }
}

uint64_t hr_zobrist_full(const hr_state *st)
{
    uint64_t z = 0;
    for (int s = 0; s < HR_MAX_SQ; s++)
        z ^= hr_unit_key(s, &st->board[s]);
    for (int p = 0; p < 2; p++)
        for (int c = 0; c < HR_NCARDS; c++)
            z ^= hr_card_key_mixed(p, 0, c, st->hand[p][c]) ^ hr_card_key_mixed(p, 1, c, st->deck[p][c]);
    return z;
}

static uint64_t hr_hash(const void *vst)
{
    const hr_state *st = vst;
    uint64_t scal = (uint64_t)(uint8_t)st->ap | ((uint64_t)(uint16_t)st->turn << 8) |
                    ((uint64_t)st->current << 24) | ((uint64_t)st->terminal << 25) |
                    ((uint64_t)(uint8_t)st->winner << 32) |
                    ((uint64_t)(uint8_t)st->observer << 40);
    uint64_t seeds = ((uint64_t)(uint32_t)st->deck_seed[0] << 32) | (uint32_t)st->deck_seed[1];
    return st->zob ^ mg_mix64_inline(scal) ^ mg_mix64_inline(seeds ^ 0x5eed5eed5eed5eedULL);
}

/* ---- Draws (§4.3) ---------------------------------------------------------------------- */

static int draw_one(hr_state *st, int p, mg_rng *rng)
{
    int r;
    if (st->draws == HR_DRAW_SEEDED) {
        /* The reference's double arithmetic; with -ffp-contract=off identical to Java. */
        int32_t s = st->deck_seed[p];
        s = s > 100000 ? (int32_t)((double)s * 0.1) : (int32_t)((double)s * 1.3 + 7.0);
        st->deck_seed[p] = s;
        r = s % st->deck_n[p];
    } else {
        r = (int)mg_rng_below(rng, st->deck_n[p]);
    }
    for (int c = 0; c < HR_NCARDS; c++) {
        if (r < st->deck[p][c])
            return c;
        r -= st->deck[p][c];
    }
    return HR_NCARDS - 1; /* unreachable: deck_n is the sum of the counts */
}

int hr_draw_up(hr_state *st, int p, mg_rng *rng)
{
    if (st->draws == HR_DRAW_RANDOM && rng == NULL)
        return MG_ERR_CONFIG;
    while (st->deck_n[p] > 0 && st->hand_n[p] < HR_HAND_SIZE) {
        int c = draw_one(st, p, rng);
        hr_hand_add(st, p, c, 1);
        hr_deck_add(st, p, c, -1);
    }
    return MG_OK;
}

static int unit_cards_in_hand(const hr_state *st, int p)
{
    int n = 0;
    for (int c = HR_KNIGHT; c <= HR_NINJA; c++)
        n += st->hand[p][c];
    return n;
}

/* Opening deal (§4.2): redeal until the hand holds 6 cards, exactly 3 of them units. */
static void opening_deal(hr_state *st, int p, mg_rng *rng)
{
    for (;;) {
        for (int c = 0; c < HR_NCARDS; c++) {
            int k = st->hand[p][c];
            if (k) {
                hr_deck_add(st, p, c, k);
                hr_hand_add(st, p, c, -k);
            }
        }
        hr_draw_up(st, p, rng);
        if (st->hand_n[p] == HR_HAND_SIZE && unit_cards_in_hand(st, p) == 3)
            return;
    }
}

/* ---- Setup ------------------------------------------------------------------------------ */

static void hr_default_config(void *vcfg)
{
    hr_config *cfg = vcfg;
    cfg->map = HR_MAP_A;
    cfg->deck = HR_DECK_STANDARD;
    cfg->ap = 5;
    cfg->start_ap = 3;
    cfg->turn_limit = 100;
    cfg->draws = HR_DRAW_RANDOM;
}

static int config_error(char *err, const char *msg)
{
    if (err) {
        strncpy(err, msg, MG_ERR_LEN - 1);
        err[MG_ERR_LEN - 1] = 0;
    }
    return MG_ERR_CONFIG;
}

static int hr_init(void *vst, const void *vcfg, uint64_t seed, char *err)
{
    hr_state *st = vst;
    const hr_config *cfg = vcfg;
    if (cfg->map < 0 || cfg->map >= HR_NMAPS)
        return config_error(err, "map must be a, a-small or a-tiny");
    if (cfg->deck < 0 || cfg->deck >= HR_NDECKS)
        return config_error(err, "deck must be standard, small or tiny");
    if (cfg->ap < 1 || cfg->ap > 25)
        return config_error(err, "ap must be between 1 and 25");
    if (cfg->start_ap < 1 || cfg->start_ap > 25)
        return config_error(err, "start_ap must be between 1 and 25");
    if (cfg->turn_limit < 1 || cfg->turn_limit > 10000)
        return config_error(err, "turn_limit must be between 1 and 10000");
    if (cfg->draws != HR_DRAW_SEEDED && cfg->draws != HR_DRAW_RANDOM)
        return config_error(err, "draws must be seeded or random");
    memset(st, 0, sizeof *st);
    const hr_map *m = &hr_maps[cfg->map];
    st->map = (uint8_t)cfg->map;
    st->w = (uint8_t)m->w;
    st->h = (uint8_t)m->h;
    st->deck_kind = (uint8_t)cfg->deck;
    st->draws = (uint8_t)cfg->draws;
    st->ap_per_turn = (int8_t)cfg->ap;
    st->ap = (int8_t)cfg->start_ap;
    st->turn = 1;
    st->turn_limit = (int16_t)cfg->turn_limit;
    st->observer = -1;
    st->winner = -1; /* -1 while the game goes on, as after an import */
    mg_rng rng;
    mg_rng_seed(&rng, seed);
    for (int p = 0; p < 2; p++) {
        st->deck_seed[p] = (int32_t)mg_rng_below(&rng, 1000);
        for (int c = 0; c < HR_NCARDS; c++)
            hr_deck_add(st, p, c, hr_decks[cfg->deck][c]);
    }
    for (int p = 0; p < 2; p++)
        opening_deal(st, p, &rng);
    for (int p = 0; p < 2; p++)
        for (int i = 0; i < m->ncrystal[p]; i++) {
            hr_unit u = {4500, HR_CRYSTAL, (uint8_t)(p + 1), 0, 0};
            hr_set_unit(st, m->crystal[p][i], u);
        }
    return MG_OK;
}

static int hr_current(const void *vst) { return ((const hr_state *)vst)->current; }

static int hr_terminal(const void *vst, int *winner)
{
    const hr_state *st = vst;
    if (winner)
        *winner = st->terminal ? st->winner : -1;
    return st->terminal;
}

static int hr_is_end_turn(mg_action a) { return a == 0; }

/* Groups for the meta rollout policy (mg_game_vt.action_groups), as runs: a unit action
 * belongs to its unit's square, a card action (deploy, equip, spell, swap) to its card. */
static int hr_action_groups(const void *st, const mg_action *acts, int n, int *start, int *group)
{
    /* by action type: 0 END_TURN, 1 unit action, 2 card action */
    static const uint8_t cls[16] = {0, 2, 2, 2, 1, 1, 1, 1, 2};
    int runs = 0, last = -1;
    (void)st;
    for (int i = 0; i < n; i++) {
        mg_action a = acts[i];
        int c = cls[HR_A_TYPE(a)];
        int g = c == 2 ? MG_GROUP_CARD | HR_A_CARD(a)
              : c == 1 ? MG_GROUP_UNIT | (HR_A_FX(a) << 4) | HR_A_FY(a) : 0;
        if (g != last) {
            start[runs] = i;
            group[runs++] = g;
            last = g;
        }
    }
    start[runs] = n;
    return runs;
}

/* ---- Hidden information ----------------------------------------------------------------- */

/* Observation for `seat`: the opponent's hand is merged into its deck (deck[] then holds
 * every card the seat has not seen; hand_n and deck_n keep the true sizes), and both deck
 * seeds, which fix future draws, are zeroed. */
static int hr_observer(const void *vst)
{
    return ((const hr_state *)vst)->observer;
}

static void hr_observe(const void *vst, int seat, void *vobs)
{
    hr_state *obs = vobs;
    memcpy(obs, vst, sizeof *obs);
    int opp = 1 - seat;
    /* Only the opponent's hand and deck counts change, so the hash is updated by their keys
     * (XOR) rather than keyed again over the whole board: the same value as
     * hr_zobrist_full (checked by the property tests), at a fraction of the cost. ISMCTS
     * keys its nodes by the observation of every state it steps through. */
    uint64_t z = obs->zob;
    for (int c = 0; c < HR_NCARDS; c++) {
        int h = obs->hand[opp][c], d = obs->deck[opp][c];
        if (h == 0)
            continue;
        z ^= hr_card_key(opp, 0, c, h) ^ hr_card_key(opp, 0, c, 0) ^ hr_card_key(opp, 1, c, d) ^
             hr_card_key(opp, 1, c, d + h);
        obs->deck[opp][c] = (uint8_t)(d + h);
        obs->hand[opp][c] = 0;
    }
    obs->deck_seed[0] = obs->deck_seed[1] = 0;
    obs->observer = (int8_t)seat;
    obs->zob = z;
}

/* Sample a full state from an observation: the opponent's hand uniformly from the unseen
 * cards, and fresh deck seeds (the seeded rule then orders both decks at random). */
static void hr_determinize(const void *vobs, mg_rng *rng, void *vout)
{
    hr_state *out = vout;
    memcpy(out, vobs, sizeof *out);
    if (out->observer < 0)
        return;
    int opp = 1 - out->observer;
    int unseen = 0;
    for (int c = 0; c < HR_NCARDS; c++)
        unseen += out->deck[opp][c];
    for (int i = 0; i < out->hand_n[opp]; i++) {
        int r = (int)mg_rng_below(rng, (uint32_t)unseen);
        int c = 0;
        while (r >= out->deck[opp][c])
            r -= out->deck[opp][c++];
        out->deck[opp][c]--;
        out->hand[opp][c]++;
        unseen--;
    }
    for (int p = 0; p < 2; p++)
        out->deck_seed[p] = (int32_t)mg_rng_below(rng, 1000);
    out->observer = -1;
    out->zob = hr_zobrist_full(out);
}

/* ---- Import validation ------------------------------------------------------------------ */

static int state_error(char *err, const char *msg)
{
    if (err) {
        strncpy(err, msg, MG_ERR_LEN - 1);
        err[MG_ERR_LEN - 1] = 0;
    }
    return MG_ERR_STATE;
}

static int check_cards(const hr_state *st, char *err)
{
    for (int p = 0; p < 2; p++) {
        int hn = 0, dn = 0;
        for (int c = 0; c < HR_NCARDS; c++) {
            hn += st->hand[p][c];
            dn += st->deck[p][c];
            int used = st->hand[p][c] + st->deck[p][c];
            if (HR_IS_UNIT_CARD(c))
                for (int s = 0; s < st->w * st->h; s++)
                    used += st->board[s].owner == p + 1 && st->board[s].kind == c;
            if (used > hr_decks[st->deck_kind][c])
                return state_error(err, "more cards of a kind than the deck holds");
        }
        if (st->observer == 1 - p) {
            /* An observation's opponent: hand empty, deck[] = every unseen card. */
            if (hn != 0 || dn != st->hand_n[p] + st->deck_n[p])
                return state_error(err, "the unseen cards do not add up to hand_sizes + deck_sizes");
            if (st->hand_n[p] > HR_HAND_SIZE)
                return state_error(err, "a hand holds more than 6 cards");
        } else if (hn != st->hand_n[p] || dn != st->deck_n[p]) {
            return state_error(err, "hand or deck size does not match the counts");
        }
        if (st->observer != 1 - p && hn > HR_HAND_SIZE)
            return state_error(err, "a hand holds more than 6 cards");
        if (st->deck_seed[p] < 0)
            return state_error(err, "deck seeds must not be negative");
    }
    return MG_OK;
}

static int check_board(const hr_state *st, char *err)
{
    for (int s = 0; s < HR_MAX_SQ; s++) {
        const hr_unit *u = &st->board[s];
        if (u->owner == 0) {
            if (u->hp || u->kind || u->items || u->pad)
                return state_error(err, "an empty square carries unit data");
            continue;
        }
        if (s >= st->w * st->h)
            return state_error(err, "a unit lies off the board");
        if (u->owner > 2 || (u->kind > HR_NINJA && u->kind != HR_CRYSTAL) || u->items > 15 ||
            u->pad)
            return state_error(err, "a unit has an unknown owner, kind or item");
        if (u->hp < 0 || u->hp > hr_max_hp(u))
            return state_error(err, "a unit's hp is outside 0..max_hp");
        if (u->kind == HR_CRYSTAL && (u->hp == 0 || u->items))
            return state_error(err, "a crystal must be alive and carry no items");
    }
    return MG_OK;
}

int hr_finish_import(hr_state *st, char *err)
{
    if (st->map >= HR_NMAPS || st->deck_kind >= HR_NDECKS ||
        (st->draws != HR_DRAW_SEEDED && st->draws != HR_DRAW_RANDOM))
        return state_error(err, "unknown map, deck or draw mode");
    if (st->w != hr_maps[st->map].w || st->h != hr_maps[st->map].h)
        return state_error(err, "board size does not match the map");
    if (st->turn < 1 || st->turn_limit < 1 || st->current > 1 ||
        st->current != (st->turn - 1) % 2)
        return state_error(err, "turn and current player disagree (P1 plays odd turns)");
    if (st->ap < 0 || st->ap_per_turn < 1 || st->ap_per_turn > 25 || st->ap > 25)
        return state_error(err, "ap out of range");
    if (st->terminal > 1 || st->winner < -1 || st->winner > 1 || (!st->terminal && st->winner != -1))
        return state_error(err, "terminal or winner out of range");
    if (st->observer < -1 || st->observer > 1)
        return state_error(err, "observer out of range");
    int rc = check_board(st, err);
    if (rc == MG_OK)
        rc = check_cards(st, err);
    if (rc != MG_OK)
        return rc;
    st->zob = hr_zobrist_full(st);
    rebuild_masks(st);
    return MG_OK;
}

/* ---- Error texts and the interface record ----------------------------------------------- */

static const char *hr_errstr(int code)
{
    static const char *detail[] = {
        NULL,
        "no action points left: only end_turn is legal",
        "that card is not in the player's hand",
        "a unit card must be deployed on an own deploy square that is empty or holds a knocked-out unit",
        "an item needs an own non-crystal unit without that item (alive, except for a potion on a damaged or knocked-out unit)",
        "a square is off the board",
        "the 'from' square holds no living unit of the player to act",
        "the unit cannot do that action to that square (range, line of sight, target or action type)",
        "swap_card needs a non-empty deck",
        "the card does not fit the action type (deploy: unit card, equip: item card, spell: inferno)",
        "'from' and 'to' are the same square",
    };
    int n = code >> 8;
    if ((code & 0xff) == MG_ERR_ILLEGAL && n > 0 && n < (int)(sizeof detail / sizeof *detail))
        return detail[n];
    return mg_errstr(code);
}

int hr_legal(const void *st, mg_action *out);
int hr_check(const void *st, mg_action a);
int hr_apply(void *st, mg_action a, mg_rng *rng);
double hr_evaluate(const void *st, int player);
int hr_rate(const void *st, mg_action a);
int hr_prune(const void *st, mg_action *acts, int n);
int hr_determinize_mode(const void *obs, int mode, mg_rng *rng, void *out); /* heroes_hidden.c */
int hr_legal_groups(const void *st, int *group);
int hr_group_legal(const void *st, int group, mg_action *out);
int hr_apply_legal(void *st, mg_action a, mg_rng *rng);

const mg_game_vt mg_heroes_vt = {
    MG_VT_VERSION,
    "heroes",
    sizeof(hr_state),
    sizeof(hr_config),
    HR_MAX_ACTIONS,
    hr_default_config,
    hr_init,
    hr_legal,
    hr_check,
    hr_apply,
    hr_current,
    hr_terminal,
    hr_evaluate,
    hr_hash,
    hr_rate,
    hr_prune,
    hr_observe,
    hr_determinize,
    hr_is_end_turn,
    hr_errstr,
    hr_action_groups,
    hr_determinize_mode,
    hr_legal_groups,
    hr_group_legal,
    hr_apply_legal,
    hr_observer,
    HR_WIN_VALUE,
    HR_NFEATURES,
    hr_features,
    hr_write_msgpack,
};
