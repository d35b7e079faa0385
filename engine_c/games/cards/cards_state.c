/* cards_state.c: setting up a game (spec §5.1), what each seat may see and how a hidden
 * state is sampled (spec §7.2-7.4), the heuristic, the hash, and the card game's
 * mg_game_vt. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cards_internal.h"

const cd_card *cd_card_info(int card) { return card > 0 && card < CD_NCARDS ? &CD_CARDS[card] : NULL; }
int cd_card_count(void) { return CD_NCARDS - 1; }

static void cd_default_config(void *vcfg)
{
    cd_config *c = vcfg;
    memset(c, 0, sizeof *c);
    c->deck[0] = CD_DECK_M; /* spec §4.4: the default pairing, Mage against Paladin */
    c->deck[1] = CD_DECK_P;
    c->hero[0] = c->hero[1] = -1;
    c->first = -1;
    c->ply_limit = CD_PLY_LIMIT;
}

static int config_error(char *err, const char *msg)
{
    if (err)
        snprintf(err, MG_ERR_LEN, "%s", msg);
    return MG_ERR_CONFIG;
}

static void shuffle(uint8_t *a, int n, mg_rng *rng)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)mg_rng_below(rng, (uint32_t)i + 1);
        uint8_t t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

static int copy_limit(int card) { return cd_info(card)->legendary ? 1 : 2; }

/* Spec §4.4: 30 picks uniform over the pool, a pick that would exceed the copy limit
 * drawn again. */
static void random_deck(uint8_t *deck, mg_rng *rng)
{
    uint8_t count[CD_CARD_SLOTS] = {0};
    for (int n = 0; n < CD_DECK_SIZE;) {
        int card = 1 + (int)mg_rng_below(rng, CD_NPOOL);
        if (count[card] < copy_limit(card)) {
            count[card]++;
            deck[n++] = (uint8_t)card;
        }
    }
}

static void draw_setup(cd_player *p)
{
    p->hand[p->nhand++] = p->deck[0];
    memmove(p->deck, p->deck + 1, (size_t)(p->ndeck - 1));
    p->deck[--p->ndeck] = 0;
}

static int cd_init(void *vst, const void *vcfg, uint64_t seed, char *err)
{
    const cd_config *c = vcfg;
    cd_state *st = vst;
    for (int s = 0; s < 2; s++) {
        if (c->deck[s] < CD_DECK_M || c->deck[s] > CD_DECK_RANDOM)
            return config_error(err, "deck must be M, P, X or random");
        if (c->hero[s] < -1 || c->hero[s] > CD_PALADIN)
            return config_error(err, "hero must be mage or paladin");
    }
    if (c->first < -1 || c->first > 1)
        return config_error(err, "first must be 1, 2 or random");
    if (c->ply_limit < 1 || c->ply_limit > 1000)
        return config_error(err, "ply_limit must be in 1..1000");
    memset(st, 0, sizeof *st);
    mg_rng rng;
    mg_rng_seed(&rng, seed);
    st->observer = -1;
    st->winner = -1;
    st->ply_limit = (uint16_t)c->ply_limit;
    st->next_eid = 3;
    /* Spec §5.1: the first player by one draw (unless fixed), then each deck shuffled, seat
     * 0 first (a random deck is dealt just before its shuffle). */
    st->first = (uint8_t)(c->first >= 0 ? c->first : (int)mg_rng_below(&rng, 2));
    for (int s = 0; s < 2; s++) {
        cd_player *p = &st->p[s];
        int d = c->deck[s];
        p->deck_mode = (uint8_t)d;
        p->hp = CD_HERO_HP;
        p->hero_class = (uint8_t)(c->hero[s] >= 0 ? c->hero[s] : d == CD_DECK_RANDOM ? s : CD_DECK_HERO[d]);
        if (d == CD_DECK_RANDOM)
            random_deck(p->deck, &rng);
        else
            memcpy(p->deck, CD_DECKS[d], CD_DECK_SIZE);
        p->ndeck = CD_DECK_SIZE;
        shuffle(p->deck, CD_DECK_SIZE, &rng);
    }
    cd_player *first = &st->p[st->first], *second = &st->p[st->first ^ 1];
    for (int i = 0; i < 3; i++)
        draw_setup(first);
    for (int i = 0; i < 4; i++)
        draw_setup(second);
    second->hand[second->nhand++] = CD_T_COIN;
    st->current = st->first;
    cd_start_turn(st, &rng);
    return MG_OK;
}

static int cd_apply_legal(void *vst, mg_action a, mg_rng *rng)
{
    if (rng == NULL)
        return CD_ERR_NO_RNG;
    cd_do_action(vst, a, rng);
    return MG_OK;
}

static int cd_apply(void *vst, mg_action a, mg_rng *rng)
{
    const cd_state *st = vst;
    int rc = cd_check(vst, a);
    if (rc != MG_OK)
        return rc;
    if (st->observer >= 0)
        return MG_ERR_STATE; /* an observation holds unknown cards: determinize it first */
    return cd_apply_legal(vst, a, rng);
}

static int cd_current(const void *vst) { return ((const cd_state *)vst)->current; }

static int cd_terminal(const void *vst, int *winner)
{
    const cd_state *st = vst;
    if (st->terminal && winner)
        *winner = st->winner;
    return st->terminal;
}

/* ---- The heuristic (README.md "Evaluation") ------------------------------------------------ */

#define W_HERO 1.0    /* per point of hero health or armor */
#define W_ATK 1.0     /* per point of attack of a minion */
#define W_HP 1.0      /* per point of health of a minion */
#define W_TAUNT 2.0   /* a taunt minion */
#define W_SHIELD 2.0  /* a divine shield */
#define W_CARD 3.0    /* a card in hand (the Coin counts 1) */
#define W_WEAPON 0.5  /* per point of weapon attack times durability */
#define W_SECRET 3.0  /* a secret in play */
#define W_SPREAD 25.0 /* the score difference that gives tanh(1) of the scale */

static double side_score(const cd_player *p)
{
    double v = W_HERO * (p->hp + p->armor) + W_WEAPON * p->weapon_atk * p->weapon_dur + W_SECRET * p->nsecrets;
    for (int i = 0; i < p->nboard; i++) {
        const cd_minion *m = &p->board[i];
        v += W_ATK * m->atk + W_HP * (m->hp > 0 ? m->hp : 0);
        if (cd_has_kw(m, CD_KW_TAUNT))
            v += W_TAUNT;
        if (m->kw & CD_KW_DS)
            v += W_SHIELD;
    }
    for (int i = 0; i < p->nhand; i++)
        v += p->hand[i] == CD_T_COIN ? 1.0 : W_CARD;
    return v;
}

static double cd_evaluate(const void *vst, int player)
{
    const cd_state *st = vst;
    if (st->terminal)
        return st->winner < 0 ? 0.0 : st->winner == player ? CD_WIN_VALUE : -CD_WIN_VALUE;
    double d = side_score(&st->p[player]) - side_score(&st->p[player ^ 1]);
    return 0.99 * CD_WIN_VALUE * tanh(d / W_SPREAD);
}

/* Plays first (dearer cards first), then attacks (on the hero a little higher), the power,
 * END_TURN last: the order greedy and rollout policies try actions in. */
static int cd_rate(const void *vst, mg_action a)
{
    const cd_state *st = vst;
    switch (CD_A_TYPE(a)) {
    case CD_A_PLAY: return 20 + cd_info(CD_A_CARD(a))->cost;
    case CD_A_ATTACK: return 10 + ((CD_A_TARGET(a) - 1) % 8 == CD_HERO_SLOT);
    case CD_A_POWER: return 5 + (st->p[st->current].mana >= 2);
    default: return 0;
    }
}

/* ---- Hash: every byte of the flat state, eight at a time --------------------------------- */

static uint64_t cd_hash(const void *vst)
{
    const unsigned char *b = vst;
    uint64_t h = 0xC0FFEE5EEDULL;
    size_t n = sizeof(cd_state), i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        h = mg_mix64_inline(h ^ w);
    }
    uint64_t w = 0;
    memcpy(&w, b + i, n - i);
    return mg_mix64_inline(h ^ w ^ n);
}

/* ---- Observations and determinization (spec §7.2-7.4) ------------------------------------ */

static int cmp_u8(const void *a, const void *b) { return *(const uint8_t *)a - *(const uint8_t *)b; }

static void sort_u8(uint8_t *a, int n)
{
    for (int i = 1; i < n; i++) /* insertion sort: at most 30 cards */
        for (int j = i; j > 0 && cmp_u8(&a[j - 1], &a[j]) > 0; j--) {
            uint8_t t = a[j];
            a[j] = a[j - 1];
            a[j - 1] = t;
        }
}

/* The observer keeps its hand and secrets and sees its deck as a multiset (sorted); of the
 * opponent it sees the counts only. Everything else is public. */
static void cd_observe(const void *vst, int seat, void *vobs)
{
    cd_state *o = vobs;
    memmove(o, vst, sizeof *o);
    o->observer = (int8_t)seat;
    cd_player *me = &o->p[seat], *opp = &o->p[seat ^ 1];
    sort_u8(me->deck, me->ndeck);
    memset(opp->hand, CD_UNKNOWN, opp->nhand);
    memset(opp->deck, CD_UNKNOWN, opp->ndeck);
    memset(opp->secrets, CD_UNKNOWN, opp->nsecrets);
}

/* What `p` may still hold: its decklist (and The Coin for the second player) minus what it
 * revealed. In the random-deck mode the list is unknown: returns 0 and the caller samples
 * from the pool. */
static int unseen_of(const cd_state *st, int seat, uint8_t *count)
{
    const cd_player *p = &st->p[seat];
    memset(count, 0, CD_CARD_SLOTS);
    if (p->deck_mode == CD_DECK_RANDOM)
        return 0;
    for (int i = 0; i < CD_DECK_SIZE; i++)
        count[CD_DECKS[p->deck_mode][i]]++;
    for (int c = 1; c < CD_NCARDS; c++)
        count[c] = (uint8_t)(count[c] > p->revealed[c] ? count[c] - p->revealed[c] : 0);
    return 1;
}

/* One card drawn uniformly from the multiset `count` (total `total`), taken out of it. */
static int take(uint8_t *count, int *total, mg_rng *rng)
{
    int k = (int)mg_rng_below(rng, (uint32_t)*total);
    for (int c = 1; c < CD_NCARDS; c++) {
        if (k < count[c]) {
            count[c]--;
            (*total)--;
            return c;
        }
        k -= count[c];
    }
    return 0;
}

/* One collectible card uniform over the pool within its copy limit given `used`. */
static int pool_card(uint8_t *used, int want_type, mg_rng *rng)
{
    for (int tries = 0; tries < 10000; tries++) {
        int c = 1 + (int)mg_rng_below(rng, CD_NPOOL);
        if ((want_type < 0 || cd_info(c)->type == want_type) && used[c] < copy_limit(c)) {
            used[c]++;
            return c;
        }
    }
    return CD_N09; /* unreachable with this pool; a plain minion keeps the state valid */
}

static int holds(const uint8_t *a, int n, int card)
{
    for (int i = 0; i < n; i++)
        if (a[i] == card)
            return 1;
    return 0;
}

/* Secrets: distinct secret cards. From the unseen multiset when the list is known (the
 * pool's otherwise, or when the list ran out: a state loaded without its history). */
static void deal_secrets(cd_player *p, uint8_t *count, int *total, int listed, uint8_t *used, mg_rng *rng)
{
    for (int i = 0; i < p->nsecrets; i++) {
        int options[CD_NCARDS], n = 0;
        for (int c = 1; c <= CD_NPOOL; c++)
            if (cd_info(c)->type == CD_TYPE_SE && !holds(p->secrets, i, c) &&
                (listed ? count[c] > 0 : used[c] < copy_limit(c)))
                options[n++] = c;
        if (n == 0)
            for (int c = 1; c <= CD_NPOOL; c++)
                if (cd_info(c)->type == CD_TYPE_SE && !holds(p->secrets, i, c))
                    options[n++] = c;
        int c = options[mg_rng_below(rng, (uint32_t)n)];
        p->secrets[i] = (uint8_t)c;
        used[c]++;
        if (listed && count[c] > 0) {
            count[c]--;
            (*total)--;
        }
    }
}

static int hidden_card(uint8_t *count, int *total, int listed, uint8_t *used, mg_rng *rng)
{
    if (listed && *total > 0)
        return take(count, total, rng);
    return pool_card(used, -1, rng);
}

/* Sample the opponent's secrets, hand and deck consistently with what it revealed (spec
 * §7.4: its decklist minus the revealed cards when decks are known, the pool within the
 * copy limits otherwise); reshuffle the observer's own deck. */
static void cd_determinize(const void *vobs, mg_rng *rng, void *vout)
{
    cd_state *st = vout;
    memmove(st, vobs, sizeof *st);
    int me = st->observer;
    st->observer = -1;
    if (me < 0)
        return;
    cd_player *o = &st->p[me ^ 1];
    uint8_t count[CD_CARD_SLOTS], used[CD_CARD_SLOTS];
    int listed = unseen_of(st, me ^ 1, count), total = 0;
    memcpy(used, o->revealed, CD_CARD_SLOTS);
    int coin = st->first != (me ^ 1) && o->revealed[CD_T_COIN] == 0 && o->nhand > 0;
    if (listed)
        for (int c = 1; c < CD_NCARDS; c++)
            total += count[c];
    deal_secrets(o, count, &total, listed, used, rng);
    for (int i = 0; i < o->nhand; i++)
        o->hand[i] = (uint8_t)(coin && i == 0 ? CD_T_COIN : hidden_card(count, &total, listed, used, rng));
    shuffle(o->hand, o->nhand, rng); /* the Coin's place in the hand is hidden too */
    for (int i = 0; i < o->ndeck; i++)
        o->deck[i] = (uint8_t)hidden_card(count, &total, listed, used, rng);
    shuffle(st->p[me].deck, st->p[me].ndeck, rng);
}

static int cd_is_end_turn(mg_action a) { return a == CD_ACTION(CD_A_END_TURN, 0, 0, 0); }

static const char *cd_errstr(int code)
{
    switch (code) {
    case CD_ERR_NO_CARD: return "that hand slot does not hold that card";
    case CD_ERR_MANA: return "not enough mana";
    case CD_ERR_TARGET: return "not a legal target for this card, attack or power";
    case CD_ERR_BOARD_FULL: return "the board is full (7 minions)";
    case CD_ERR_ATTACKER: return "this character cannot attack now";
    case CD_ERR_POWER_USED: return "the hero power was already used this turn";
    case CD_ERR_SECRET: return "that secret is already in play (or 5 secrets are)";
    case CD_ERR_NO_RNG: return "the card game needs a random number generator to apply actions";
    case MG_ERR_DECODE: return "not a card-game action";
    default: return mg_errstr(code);
    }
}

/* One group per hand slot (card groups), per attacker and for the power (unit groups). */
static int group_of(mg_action a)
{
    switch (CD_A_TYPE(a)) {
    case CD_A_PLAY: return MG_GROUP_CARD | CD_A_SRC(a);
    case CD_A_ATTACK: return MG_GROUP_UNIT | CD_A_SRC(a);
    case CD_A_POWER: return MG_GROUP_UNIT | 8;
    default: return 0;
    }
}

static int cd_action_groups(const void *vst, const mg_action *acts, int n, int *start, int *group)
{
    (void)vst;
    int runs = 0;
    for (int i = 0; i < n; i++) {
        int g = group_of(acts[i]);
        if (runs == 0 || group[runs - 1] != g) {
            start[runs] = i;
            group[runs++] = g;
        }
    }
    start[runs] = n;
    return runs;
}

static int cd_observer(const void *vst) { return ((const cd_state *)vst)->observer; }

const mg_game_vt mg_cards_vt = {
    MG_VT_VERSION,
    "cards",
    sizeof(cd_state),
    sizeof(cd_config),
    CD_MAX_ACTIONS,
    cd_default_config,
    cd_init,
    cd_legal,
    cd_check,
    cd_apply,
    cd_current,
    cd_terminal,
    cd_evaluate,
    cd_hash,
    cd_rate,
    NULL, /* prune: nothing is dominated in general */
    cd_observe,
    cd_determinize,
    cd_is_end_turn,
    cd_errstr,
    cd_action_groups,
    NULL, /* determinize_mode: uniform only */
    NULL, /* legal_groups */
    NULL, /* group_legal */
    cd_apply_legal,
    cd_observer,
    CD_WIN_VALUE,
    0,    /* n_features: no feature vector */
    NULL, /* features */
    cd_write_msgpack,
};
