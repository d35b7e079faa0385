/* conquest_wire.c: the only writer of a state's JSON form (mg_game_vt.write_msgpack), as
 * msgpack: the referee sends these bytes in every `your_turn`, and State.to_json decodes them
 * for everyone else (watchers, the web view, replays, the tools). codec.py reads the form back
 * (state_from_json); tests/engine/test_one_serializer.py fails if it writes it again.
 * An observation is the state plus its observer (nothing is hidden).
 *
 * Territory, player and unit-type names are interned by the Python codec, so they come in
 * `names` (codec.py wire_names: _NAMES, by name number). Every number a state holds was
 * interned before the state was made (fill_config interns the map's names), so the table,
 * passed afresh whenever it grows, holds it. A map's territories, players and unit types
 * have distinct names (mapfile.py refuses repeats): the JSON form's maps keyed by name are
 * keyed by name number here. */
#include <stdio.h>

#include "conquest_internal.h"
#include "mg_wire.h"

/* The names codec.py reads back (PHASES, BY; mapfile.py VICTORY); the round-trip tests fail
 * if they drift. */
static const char *const PHASE_NAMES[3] = {"combat", "noncombat", "over"};
static const char *const BY_NAMES[4] = {NULL, "capital", "annihilation", "round_limit"};
static const char *const VICTORY_NAMES[2] = {"capital", "capital+annihilation"};

/* codec.py name_of: the name of a name number, "?0" for none (or with no table). */
static void write_name(mg_wire *w, const char *const *names, int number)
{
    if (number > 0 && names) {
        mw_str(w, names[number]);
    } else {
        char t[16];
        int n = snprintf(t, sizeof t, "?%d", number);
        mw_strn(w, t, (size_t)n);
    }
}

static void write_terr(mg_wire *w, const cq_state *s, const char *const *names, int t)
{
    write_name(w, names, s->tname[t]);
}

static int is_moved(const cq_state *s, int u)
{
    return s->loc[u] != CQ_NONE && (s->moved[u >> 6] >> (u & 63) & 1);
}

/* {player: its territories}, in the players' order, each list in territory order. */
static void write_owner(mg_wire *w, const cq_state *s, const char *const *names)
{
    mw_map(w, 2);
    for (int p = 0; p < 2; p++) {
        uint32_t n = 0;
        for (int t = 0; t < s->nterr; t++)
            n += cq_owner_of(s, t) == p;
        write_name(w, names, s->pname[p]);
        mw_array(w, n);
        for (int t = 0; t < s->nterr; t++)
            if (cq_owner_of(s, t) == p)
                write_terr(w, s, names, t);
    }
}

/* {territory: the living units in it}, the territories that hold any, in territory order. */
static void write_units(mg_wire *w, const cq_state *s, const char *const *names)
{
    uint8_t count[CQ_MAX_T] = {0};
    uint32_t held = 0;
    for (int u = 0; u < s->nunits; u++)
        if (s->loc[u] < s->nterr)
            held += count[s->loc[u]]++ == 0;
    mw_map(w, held);
    for (int t = 0; t < s->nterr; t++) {
        if (!count[t])
            continue;
        write_terr(w, s, names, t);
        mw_array(w, count[t]);
        for (int u = 0; u < s->nunits; u++)
            if (s->loc[u] == t)
                mw_int(w, u);
    }
}

/* {player: {unit type: its units, the dead too}}: per player, the types in the order of
 * their first unit. */
static void write_roster(mg_wire *w, const cq_state *s, const char *const *names)
{
    mw_map(w, 2);
    for (int p = 0; p < 2; p++) {
        uint8_t order[CQ_MAX_TYPES];
        uint8_t count[CQ_MAX_TYPES] = {0};
        int ntypes = 0;
        for (int u = 0; u < s->nunits; u++) {
            int k = s->ukind[u] & 7;
            if (s->ukind[u] >> 7 != p)
                continue;
            if (count[k]++ == 0)
                order[ntypes++] = (uint8_t)k;
        }
        write_name(w, names, s->pname[p]);
        mw_map(w, (uint32_t)ntypes);
        for (int i = 0; i < ntypes; i++) {
            int k = order[i];
            write_name(w, names, s->types[k].name);
            mw_array(w, count[k]);
            for (int u = 0; u < s->nunits; u++)
                if (s->ukind[u] == (p << 7 | k))
                    mw_int(w, u);
        }
    }
}

void cq_write_msgpack(const void *vst, const char *const *names, mg_wire *w)
{
    const cq_state *s = vst;
    mw_map(w, s->observer >= 0 ? 13 : 12);
    mw_str(w, "round"); mw_int(w, s->round);
    mw_str(w, "player"); write_name(w, names, s->pname[s->player & 1]);
    mw_str(w, "phase"); mw_str(w, PHASE_NAMES[s->phase < 3 ? s->phase : CQ_OVER]);
    mw_str(w, "owner"); write_owner(w, s, names);
    mw_str(w, "units"); write_units(w, s, names);
    uint32_t n = 0;
    for (int u = 0; u < s->nunits; u++)
        n += is_moved(s, u);
    mw_str(w, "moved");
    mw_array(w, n);
    for (int u = 0; u < s->nunits; u++)
        if (is_moved(s, u))
            mw_int(w, u);
    mw_str(w, "result");
    if (s->phase != CQ_OVER) {
        mw_nil(w);
    } else {
        mw_map(w, 2);
        mw_str(w, "winner");
        if (s->winner >= 0)
            write_name(w, names, s->pname[s->winner & 1]);
        else
            mw_nil(w);
        mw_str(w, "by");
        if (BY_NAMES[s->by & 3])
            mw_str(w, BY_NAMES[s->by & 3]);
        else
            mw_nil(w); /* CQ_BY_NONE: null */
    }
    n = 0;
    for (int t = 0; t < s->nterr; t++)
        n += s->conquered >> t & 1;
    mw_str(w, "conquered");
    mw_array(w, n);
    for (int t = 0; t < s->nterr; t++)
        if (s->conquered >> t & 1)
            write_terr(w, s, names, t);
    mw_str(w, "join");
    if (s->join_dst == CQ_NONE) {
        mw_nil(w);
    } else {
        int mid = s->join_mid != CQ_NONE;
        mw_map(w, 2);
        mw_str(w, "path");
        mw_array(w, mid ? 3 : 2);
        write_terr(w, s, names, s->join_src);
        if (mid)
            write_terr(w, s, names, s->join_mid);
        write_terr(w, s, names, s->join_dst);
        mw_str(w, "blitz"); mw_bool(w, s->join_blitz);
    }
    mw_str(w, "rounds"); mw_int(w, s->rounds);
    mw_str(w, "victory"); mw_str(w, VICTORY_NAMES[s->victory & 1]);
    mw_str(w, "roster"); write_roster(w, s, names);
    if (s->observer >= 0) {
        mw_str(w, "observer"); mw_int(w, s->observer + 1);
    }
}
