/* mg_game.c: status-code texts and the table of games by short name. The table is made
 * from engine_c/games/games.def, the one place a game is registered. */
#include <string.h>

#include "mg_game.h"

#define MG_GAME(name) extern const mg_game_vt mg_##name##_vt;
#include "games.def"
#undef MG_GAME

const char *mg_errstr(int code)
{
    switch (code & 0xff) {
    case MG_OK: return "ok";
    case MG_ERR_CONFIG: return "invalid configuration";
    case MG_ERR_ILLEGAL: return "illegal action";
    case MG_ERR_TERMINAL: return "the game is over";
    case MG_ERR_DECODE: return "the action code does not decode to an action of this game";
    case MG_ERR_STATE: return "inconsistent state";
    case MG_ERR_NOMEM: return "out of memory";
    default: return "unknown error";
    }
}

static const mg_game_vt *const registry[] = {
#define MG_GAME(name) &mg_##name##_vt,
#include "games.def"
#undef MG_GAME
};

const mg_game_vt *mg_game_find(const char *name)
{
    for (size_t i = 0; i < sizeof registry / sizeof *registry; i++)
        if (strcmp(registry[i]->name, name) == 0)
            return registry[i];
    return NULL;
}

int mg_step(const mg_game_vt *vt, void *st, int seat, mg_action a, mg_rng *rng)
{
    if (vt->current(st) != seat)
        return MG_STEP_NOT_TO_MOVE;
    int rc = vt->apply(st, a, rng);
    if (rc != MG_OK)
        return -rc;
    int flags = 0;
    if (vt->is_end_turn(a))
        flags |= MG_STEP_END_TURN;
    if (vt->terminal(st, NULL))
        flags |= MG_STEP_TERMINAL;
    if (vt->current(st) == 1)
        flags |= MG_STEP_CURRENT_1;
    return flags;
}

int mg_step_plan(const mg_game_vt *vt, void *st, int seat, const mg_action *a, int n, mg_rng *rng,
                 int *flags, int *status)
{
    *flags = 0;
    *status = MG_OK;
    for (int i = 0; i < n; i++) {
        int r = mg_step(vt, st, seat, a[i], rng);
        if (r < 0) {
            *status = -r;
            return i;
        }
        if (r & MG_STEP_NOT_TO_MOVE) {  /* (only the first: a turn's end stops the plan) */
            *flags = r;
            return i;
        }
        *flags = r;
        if (r & (MG_STEP_END_TURN | MG_STEP_TERMINAL))
            return i + 1;
    }
    return n;
}
