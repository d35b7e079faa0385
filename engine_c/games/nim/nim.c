/* nim.c: the rules of multi-action Nim (README.md) and its mg_game_vt. Every entry is a
 * short loop over at most NM_MAX_PILES piles; nothing allocates. */
#include <stdio.h>
#include <string.h>

#include "mg_nim.h"
#include "mg_wire.h"

static void nm_default_config(void *vcfg)
{
    nm_config *c = vcfg;
    memset(c, 0, sizeof *c);
    c->npiles = 3;
    c->piles[0] = 3;
    c->piles[1] = 4;
    c->piles[2] = 5;
    c->ap = 2;
    c->misere = 0;
    c->turn_limit = 100;
}

static int config_error(char *err, const char *msg)
{
    if (err)
        snprintf(err, MG_ERR_LEN, "%s", msg);
    return MG_ERR_CONFIG;
}

static int nm_init(void *vst, const void *vcfg, uint64_t seed, char *err)
{
    const nm_config *c = vcfg;
    nm_state *st = vst;
    (void)seed; /* no chance in this game */
    if (c->npiles < 1 || c->npiles > NM_MAX_PILES)
        return config_error(err, "piles: between 1 and 8 piles");
    int total = 0;
    for (int i = 0; i < c->npiles; i++) {
        if (c->piles[i] < 0 || c->piles[i] > NM_MAX_PILE)
            return config_error(err, "piles: each pile holds 0 to 15 objects");
        total += c->piles[i];
    }
    if (total == 0)
        return config_error(err, "piles: at least one object");
    if (c->ap < 1 || c->ap > NM_MAX_AP)
        return config_error(err, "ap must be in 1..8");
    if (c->turn_limit < 1 || c->turn_limit > 10000)
        return config_error(err, "turn_limit must be in 1..10000");
    memset(st, 0, sizeof *st);
    for (int i = 0; i < c->npiles; i++)
        st->pile[i] = (uint8_t)c->piles[i];
    st->npiles = (uint8_t)c->npiles;
    st->ap = st->ap_per_turn = (uint8_t)c->ap;
    st->misere = (uint8_t)(c->misere != 0);
    st->winner = -1;
    st->observer = -1;
    st->turn = 1;
    st->turn_limit = (int16_t)c->turn_limit;
    return MG_OK;
}

/* Legal order: takes by pile ascending, then count ascending; END_TURN last. */
static int nm_legal(const void *vst, mg_action *out)
{
    const nm_state *st = vst;
    int n = 0;
    if (st->terminal)
        return 0;
    if (st->ap > 0)
        for (int p = 0; p < st->npiles; p++)
            if (!(st->taken >> p & 1))
                for (int k = 1; k <= st->pile[p]; k++)
                    out[n++] = NM_ACTION(NM_TAKE, p, k);
    out[n++] = NM_ACTION(NM_END_TURN, 0, 0); /* always legal: a player may pass */
    return n;
}

static int nm_check(const void *vst, mg_action a)
{
    const nm_state *st = vst;
    if (st->terminal)
        return MG_ERR_TERMINAL;
    if (NM_TYPE(a) == NM_END_TURN)
        return a != NM_ACTION(NM_END_TURN, 0, 0) ? MG_ERR_DECODE : MG_OK;
    if (NM_TYPE(a) != NM_TAKE || a >> 12)
        return MG_ERR_DECODE;
    int p = NM_PILE(a), k = NM_COUNT(a);
    if (k < 1)
        return MG_ERR_DECODE;
    if (p >= st->npiles)
        return NM_ERR_NO_PILE;
    if (st->ap == 0)
        return NM_ERR_NO_AP;
    if (st->taken >> p & 1)
        return NM_ERR_PILE_USED;
    if (k > st->pile[p])
        return NM_ERR_TOO_MANY;
    return MG_OK;
}

static int all_empty(const nm_state *st)
{
    for (int p = 0; p < st->npiles; p++)
        if (st->pile[p])
            return 0;
    return 1;
}

static int nm_apply_legal(void *vst, mg_action a, mg_rng *rng)
{
    nm_state *st = vst;
    (void)rng;
    if (NM_TYPE(a) == NM_END_TURN) {
        if (st->turn >= st->turn_limit) { /* the last turn ended: a draw */
            st->terminal = 1;
            st->winner = -1;
            return MG_OK;
        }
        st->current ^= 1;
        st->ap = st->ap_per_turn;
        st->taken = 0;
        st->turn++;
        return MG_OK;
    }
    int p = NM_PILE(a);
    st->pile[p] = (uint8_t)(st->pile[p] - NM_COUNT(a));
    st->taken |= (uint8_t)(1u << p);
    st->ap--;
    if (all_empty(st)) { /* whoever took the last object wins, or loses in misère */
        st->terminal = 1;
        st->winner = (int8_t)(st->misere ? st->current ^ 1 : st->current);
    }
    return MG_OK;
}

static int nm_apply(void *vst, mg_action a, mg_rng *rng)
{
    int rc = nm_check(vst, a);
    return rc != MG_OK ? rc : nm_apply_legal(vst, a, rng);
}

static int nm_current(const void *vst) { return ((const nm_state *)vst)->current; }

static int nm_terminal(const void *vst, int *winner)
{
    const nm_state *st = vst;
    if (st->terminal && winner)
        *winner = st->winner;
    return st->terminal;
}

static int nim_sum(const nm_state *st)
{
    int s = 0;
    for (int p = 0; p < st->npiles; p++)
        s ^= st->pile[p];
    return s;
}

/* +-1 for a finished game, 0 for a draw. Otherwise a rough guide from classical Nim (one
 * take a turn): a zero nim-sum is bad for the player to move, here worth -+0.5. */
static double nm_evaluate(const void *vst, int player)
{
    const nm_state *st = vst;
    if (st->terminal)
        return st->winner < 0 ? 0.0 : st->winner == player ? NM_WIN_VALUE : -NM_WIN_VALUE;
    double v = nim_sum(st) == 0 ? -0.5 : 0.5; /* for the player to move */
    return st->current == player ? v : -v;
}

/* Takes that leave a zero nim-sum first, then the other takes, END_TURN last. */
static int nm_rate(const void *vst, mg_action a)
{
    const nm_state *st = vst;
    if (NM_TYPE(a) != NM_TAKE)
        return 0;
    int p = NM_PILE(a);
    return (nim_sum(st) ^ st->pile[p] ^ (st->pile[p] - NM_COUNT(a))) == 0 ? 2 : 1;
}

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Zobrist-style: one random word per (pile, size) and per value of the turn fields. */
static uint64_t nm_hash(const void *vst)
{
    const nm_state *st = vst;
    uint64_t h = mix(0x6E696D ^ ((uint64_t)st->npiles << 8));
    for (int p = 0; p < st->npiles; p++)
        h ^= mix(0x9E3779B97F4A7C15ULL * (uint64_t)(p * 16 + st->pile[p] + 1));
    uint64_t turn = (uint64_t)st->taken | (uint64_t)st->ap << 8 | (uint64_t)st->current << 12 |
                    (uint64_t)st->terminal << 13 | (uint64_t)(uint8_t)st->winner << 16 |
                    (uint64_t)(uint8_t)st->observer << 24 | (uint64_t)(uint16_t)st->turn << 32;
    return h ^ mix(turn + 0xD1B54A32D192ED03ULL);
}

static void nm_observe(const void *vst, int seat, void *vobs)
{
    memcpy(vobs, vst, sizeof(nm_state));
    ((nm_state *)vobs)->observer = (int8_t)seat;
}

/* Nothing is hidden: the one consistent full state is the observation itself. */
static void nm_determinize(const void *vobs, mg_rng *rng, void *vout)
{
    (void)rng;
    memmove(vout, vobs, sizeof(nm_state));
    ((nm_state *)vout)->observer = -1;
}

static int nm_is_end_turn(mg_action a) { return a == NM_ACTION(NM_END_TURN, 0, 0); }

static const char *nm_errstr(int code)
{
    switch (code) {
    case NM_ERR_NO_PILE: return "there is no such pile";
    case NM_ERR_TOO_MANY: return "the pile holds fewer objects";
    case NM_ERR_PILE_USED: return "this pile was already taken from this turn";
    case NM_ERR_NO_AP: return "no action points left: only end_turn";
    case MG_ERR_DECODE: return "not a nim action";
    default: return mg_errstr(code);
    }
}

/* One group per pile (its takes are consecutive in the legal list), END_TURN group 0. */
static int nm_action_groups(const void *vst, const mg_action *acts, int n, int *start, int *group)
{
    (void)vst;
    int runs = 0;
    for (int i = 0; i < n; i++) {
        int g = nm_is_end_turn(acts[i]) ? 0 : MG_GROUP_UNIT | NM_PILE(acts[i]);
        if (runs == 0 || group[runs - 1] != g) {
            start[runs] = i;
            group[runs++] = g;
        }
    }
    start[runs] = n;
    return runs;
}

static int nm_observer(const void *vst) { return ((const nm_state *)vst)->observer; }

/* The only writer of a state's JSON form (README.md), as msgpack: the referee sends these
 * bytes, State.to_json decodes them, codec.py reads the form back (state_from_json). */
static void nm_write_msgpack(const void *vst, const char *const *names, mg_wire *w)
{
    const nm_state *st = vst;
    (void)names;
    mw_map(w, st->observer >= 0 ? 11 : 10);
    mw_str(w, "piles");
    mw_array(w, st->npiles);
    for (int i = 0; i < st->npiles; i++) mw_int(w, st->pile[i]);
    mw_str(w, "current"); mw_int(w, st->current + 1);
    mw_str(w, "ap"); mw_int(w, st->ap);
    mw_str(w, "ap_per_turn"); mw_int(w, st->ap_per_turn);
    mw_str(w, "taken");
    mw_array(w, st->npiles);
    for (int i = 0; i < st->npiles; i++) mw_bool(w, st->taken >> i & 1);
    mw_str(w, "turn"); mw_int(w, st->turn);
    mw_str(w, "turn_limit"); mw_int(w, st->turn_limit);
    mw_str(w, "misere"); mw_bool(w, st->misere);
    mw_str(w, "terminal"); mw_bool(w, st->terminal);
    mw_str(w, "winner"); mw_int(w, st->terminal && st->winner >= 0 ? st->winner + 1 : 0);
    if (st->observer >= 0) {
        mw_str(w, "observer");
        mw_int(w, st->observer + 1);
    }
}

const mg_game_vt mg_nim_vt = {
    MG_VT_VERSION,
    "nim",
    sizeof(nm_state),
    sizeof(nm_config),
    NM_MAX_ACTIONS,
    nm_default_config,
    nm_init,
    nm_legal,
    nm_check,
    nm_apply,
    nm_current,
    nm_terminal,
    nm_evaluate,
    nm_hash,
    nm_rate,
    NULL, /* prune: nothing is dominated */
    nm_observe,
    nm_determinize,
    nm_is_end_turn,
    nm_errstr,
    nm_action_groups,
    NULL, /* determinize_mode: uniform only (there is nothing to sample) */
    NULL, /* legal_groups */
    NULL, /* group_legal */
    nm_apply_legal,
    nm_observer,
    NM_WIN_VALUE,
    0,    /* n_features: no feature vector */
    NULL, /* features */
    nm_write_msgpack,
};
