/* conquest_state.c: setting up a game from its map, the state's queries (terminal, value,
 * hash), observations (the state itself: nothing is hidden) and the mg_game_vt. */
#include <stdio.h>
#include <string.h>

#include "conquest_internal.h"

/* ---- The default map of spec §2.3 (twin_k4_14) --------------------------------------------
 * Name numbers as the Python side interns them first (codec.py DEFAULT_NAMES): territories
 * R1..R7 B1..B7 are 1..14, Red 15, Blue 16, infantry 17, artillery 18, tank 19. A test checks
 * that this table and the parsed file maps/twin_k4_14.map give the same configuration. */
static const uint8_t DEFAULT_EDGES[][2] = {
    {1, 2}, {1, 3}, {1, 5}, {2, 3}, {2, 5}, {3, 5}, {0, 5}, {3, 4}, {1, 6},
    {8, 9}, {8, 10}, {8, 12}, {9, 10}, {9, 12}, {10, 12}, {7, 12}, {10, 11}, {8, 13},
    {0, 7}, {0, 11}, {4, 7}, {4, 11}, {6, 13},
};
/* Per territory: infantry, artillery, tanks (the `units` lines, in file order). */
static const uint8_t DEFAULT_UNITS[14][3] = {
    {2, 0, 0}, {2, 1, 0}, {7, 3, 3}, {2, 1, 0}, {2, 0, 0}, {2, 1, 0}, {2, 0, 0},
    {2, 0, 0}, {2, 1, 0}, {7, 3, 3}, {2, 1, 0}, {2, 0, 0}, {2, 1, 0}, {2, 0, 0},
};

static void cq_default_config(void *vcfg)
{
    cq_config *c = vcfg;
    memset(c, 0, sizeof *c);
    c->nterr = 14;
    c->ntypes = 3;
    c->rounds = 35;
    c->victory = CQ_VICTORY_CAPITAL;
    for (int t = 0; t < 14; t++) {
        c->tname[t] = (uint8_t)(t + 1);
        c->start_owner[t] = t >= 7;
    }
    for (size_t e = 0; e < sizeof DEFAULT_EDGES / sizeof DEFAULT_EDGES[0]; e++) {
        c->adj[DEFAULT_EDGES[e][0]] |= 1u << DEFAULT_EDGES[e][1];
        c->adj[DEFAULT_EDGES[e][1]] |= 1u << DEFAULT_EDGES[e][0];
    }
    c->capital[0] = 2;
    c->capital[1] = 9;
    c->pname[0] = 15;
    c->pname[1] = 16;
    const cq_type types[3] = {{1, 2, 1, 3, 1, 0, CQ_SUPPORTABLE, 17}, {2, 2, 1, 4, 1, 1, 0, 18},
                              {3, 3, 2, 5, 1, 0, CQ_BLITZ, 19}};
    memcpy(c->types, types, sizeof types);
    for (int t = 0; t < 14; t++)
        for (int k = 0; k < 3; k++)
            for (int i = 0; i < DEFAULT_UNITS[t][k]; i++) {
                c->utype[c->nunits] = (uint8_t)k;
                c->uowner[c->nunits] = t >= 7;
                c->uloc[c->nunits++] = (uint8_t)t;
            }
}

static int config_error(char *err, const char *msg)
{
    if (err)
        snprintf(err, MG_ERR_LEN, "%s", msg);
    return MG_ERR_CONFIG;
}

static int popcount32(uint32_t x)
{
    int n = 0;
    for (; x; x &= x - 1)
        n++;
    return n;
}

/* The map's checks that the C side relies on (the map loader checks more, with lines). */
static int check_config(const cq_config *c, char *err)
{
    if (c->nterr < 2 || c->nterr > CQ_MAX_T)
        return config_error(err, "map: 2 to 32 territories");
    if (c->ntypes < 1 || c->ntypes > CQ_MAX_TYPES)
        return config_error(err, "map: 1 to 8 unit types");
    if (c->nunits < 0 || c->nunits > CQ_MAX_UNITS)
        return config_error(err, "map: at most 128 units");
    if (c->rounds < 1 || c->rounds > 10000)
        return config_error(err, "rounds must be in 1..10000");
    if (c->victory != CQ_VICTORY_CAPITAL && c->victory != CQ_VICTORY_CAPITAL_ANNIHILATION)
        return config_error(err, "victory must be capital or capital+annihilation");
    int maxdeg = 0;
    for (int t = 0; t < c->nterr; t++) {
        if (c->adj[t] & (1u << t) || c->adj[t] >> c->nterr >> 1 != 0 || c->start_owner[t] > 1)
            return config_error(err, "map: bad edge or owner");
        for (int o = 0; o < c->nterr; o++)
            if ((c->adj[t] >> o & 1) != (c->adj[o] >> t & 1))
                return config_error(err, "map: edges must go both ways");
        int d = popcount32(c->adj[t]);
        maxdeg = d > maxdeg ? d : maxdeg;
    }
    if (maxdeg > CQ_MAX_DEGREE)
        return config_error(err, "map: a territory has more than 8 neighbours");
    for (int p = 0; p < 2; p++)
        if (c->capital[p] >= c->nterr || c->start_owner[c->capital[p]] != p)
            return config_error(err, "map: each player needs a capital of its own");
    for (int k = 0; k < c->ntypes; k++)
        if (c->types[k].move < 1 || c->types[k].move > 2 || c->types[k].hp != 1)
            return config_error(err, "map: unit types move 1 or 2 and have 1 hp");
    int bound[2] = {1, 1};
    for (int u = 0; u < c->nunits; u++) {
        if (c->utype[u] >= c->ntypes || c->uowner[u] > 1 || c->uloc[u] >= c->nterr)
            return config_error(err, "map: a unit with a bad type, owner or territory");
        if (c->start_owner[c->uloc[u]] != c->uowner[u])
            return config_error(err, "map: units start in their owner's territories");
        bound[c->uowner[u]] += c->types[c->utype[u]].move >= 2 ? maxdeg * maxdeg : maxdeg;
    }
    if (bound[0] > CQ_MAX_ACTIONS || bound[1] > CQ_MAX_ACTIONS)
        return config_error(err, "map: too many units and neighbours for the legal list (1024 moves)");
    return MG_OK;
}

static int cq_init(void *vst, const void *vcfg, uint64_t seed, char *err)
{
    const cq_config *c = vcfg;
    cq_state *st = vst;
    (void)seed; /* the start is the map's; chance is the dice, from the RNG beside the state */
    int rc = check_config(c, err);
    if (rc != MG_OK)
        return rc;
    memset(st, 0, sizeof *st);
    memcpy(st->adj, c->adj, sizeof st->adj);
    memcpy(st->tname, c->tname, sizeof st->tname);
    memcpy(st->types, c->types, sizeof st->types);
    st->nterr = (uint8_t)c->nterr;
    st->nunits = (uint8_t)c->nunits;
    st->ntypes = (uint8_t)c->ntypes;
    st->victory = (uint8_t)c->victory;
    st->rounds = (uint16_t)c->rounds;
    for (int p = 0; p < 2; p++) {
        st->capital[p] = c->capital[p];
        st->pname[p] = c->pname[p];
    }
    for (int t = 0; t < c->nterr; t++)
        st->owner1 |= (uint32_t)(c->start_owner[t] & 1) << t;
    memset(st->loc, CQ_NONE, sizeof st->loc);
    for (int u = 0; u < c->nunits; u++) {
        st->ukind[u] = (uint8_t)(c->utype[u] | c->uowner[u] << 7);
        st->loc[u] = c->uloc[u];
    }
    st->round = 1;
    st->winner = -1;
    st->observer = -1;
    st->join_src = st->join_mid = st->join_dst = CQ_NONE;
    return MG_OK;
}

/* ---- Queries -------------------------------------------------------------------------------- */

static int cq_current(const void *vst) { return ((const cq_state *)vst)->player; }

static int cq_terminal(const void *vst, int *winner)
{
    const cq_state *st = vst;
    if (st->phase != CQ_OVER)
        return 0;
    if (winner)
        *winner = st->winner;
    return 1;
}

/* Spec §10, the thesis form: a finished game is worth +-1 (0 for a draw); otherwise the unit
 * balance (own - enemy) / (2 (own + enemy)), in [-0.5, 0.5]. */
static double cq_evaluate(const void *vst, int player)
{
    const cq_state *st = vst;
    if (st->phase == CQ_OVER)
        return st->winner < 0 ? 0.0 : st->winner == player ? CQ_WIN_VALUE : -CQ_WIN_VALUE;
    int n[2] = {0, 0};
    for (int u = 0; u < st->nunits; u++)
        if (st->loc[u] != CQ_NONE)
            n[cq_owner(st, u)]++;
    if (n[0] + n[1] == 0)
        return 0.0;
    return (double)(n[player] - n[player ^ 1]) / (2.0 * (n[0] + n[1]));
}

int cq_strength2(const cq_state *st, int t, int seat, int attacking)
{
    cq_strength sum = {0, 0, 0};
    for (int u = 0; u < st->nunits; u++)
        if (st->loc[u] == t && cq_owner(st, u) == seat)
            cq_strength_add(&sum, cq_type_of(st, u), attacking);
    return cq_strength_total(&sum, attacking);
}

/* FNV-1a over the game's part of the state (the map never changes within a game). */
static uint64_t cq_hash(const void *vst)
{
    const cq_state *st = vst;
    const unsigned char *p = (const unsigned char *)&st->round;
    const unsigned char *end = (const unsigned char *)st + sizeof *st;
    uint64_t h = 1469598103934665603ull;
    for (; p < end; p++)
        h = (h ^ *p) * 1099511628211ull;
    return h;
}

static void cq_observe(const void *vst, int seat, void *vobs)
{
    memcpy(vobs, vst, sizeof(cq_state));
    ((cq_state *)vobs)->observer = (int8_t)seat;
}

static void cq_determinize(const void *vobs, mg_rng *rng, void *vout)
{
    (void)rng; /* nothing is hidden: the observation is the state */
    memcpy(vout, vobs, sizeof(cq_state));
    ((cq_state *)vout)->observer = -1;
}

static int cq_observer(const void *vst) { return ((const cq_state *)vst)->observer; }

static int cq_is_end_turn(mg_action a) { return a == CQ_END_PHASE; }

static int cq_action_groups(const void *vst, const mg_action *acts, int n, int *start, int *group)
{
    (void)vst;
    int runs = 0;
    for (int i = 0; i < n; i++) {
        int g = acts[i] == CQ_END_PHASE ? 0 : (int)(MG_GROUP_UNIT | (unsigned)CQ_A_UNIT(acts[i]));
        if (runs == 0 || group[runs - 1] != g) {
            start[runs] = i;
            group[runs++] = g;
        }
    }
    start[runs] = n;
    return runs;
}

static const char *cq_errstr(int code)
{
    switch (code) {
    case CQ_ERR_TERRITORY: return "a path names a territory that is not on this map";
    case CQ_ERR_UNIT: return "no such living unit";
    case CQ_ERR_NOT_OWN: return "the unit belongs to the opponent";
    case CQ_ERR_NOT_THERE: return "the unit does not stand where the path starts";
    case CQ_ERR_MOVED: return "the unit moved this turn already";
    case CQ_ERR_ADJACENT: return "the path's territories must be neighbours, none visited twice";
    case CQ_ERR_STEPS: return "the path is longer than the unit's move";
    case CQ_ERR_THROUGH: return "the path crosses enemy units, or enemy territory without a blitz";
    case CQ_ERR_ENDS_OWN: return "a combat move must end in enemy territory";
    case CQ_ERR_ENTERS_ENEMY: return "a non-combat move may only enter own territory";
    case CQ_ERR_DICE: return "the recorded dice ran out";
    case CQ_ERR_JOIN: return "a unit may join only the move just made into the empty territory it took, "
                             "along the same path";
    default: return mg_errstr(code);
    }
}

const mg_game_vt mg_conquest_vt = {
    .version = MG_VT_VERSION,
    .name = "conquest",
    .state_size = sizeof(cq_state),
    .config_size = sizeof(cq_config),
    .max_actions = CQ_MAX_ACTIONS,
    .default_config = cq_default_config,
    .init = cq_init,
    .legal = cq_legal,
    .check = cq_check,
    .apply = cq_apply,
    .current = cq_current,
    .terminal = cq_terminal,
    .evaluate = cq_evaluate,
    .hash = cq_hash,
    .rate = NULL,
    .prune = NULL,
    .observe = cq_observe,
    .determinize = cq_determinize,
    .is_end_turn = cq_is_end_turn,
    .errstr = cq_errstr,
    .action_groups = cq_action_groups,
    .determinize_mode = NULL,
    .legal_groups = NULL,
    .group_legal = NULL,
    .apply_legal = cq_apply_legal,
    .observer = cq_observer,
    .value_scale = CQ_WIN_VALUE,
    .write_msgpack = cq_write_msgpack,
};
