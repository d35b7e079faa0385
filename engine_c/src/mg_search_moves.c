/* mg_search_moves.c: the move tree of the card-game thesis (spec/cards.md §8.2): a "move" is
 * the sequence of atomic actions of one turn ending with END_TURN, and the move tree has the
 * current state at its root and atomic actions as edges. Here: its depth-first generation
 * (gen_moves), the random move players RMP and RMPmax, and the post-Monte-Carlo completions
 * of UCT (§8.5). With n independent actions the tree holds f(n) = n f(n-1) + 1 moves, so
 * generation always stops at a cap. */
#include <stdlib.h>

#include "mg_search_internal.h"

mg_action ms_end_action(const mg_game_vt *vt, const void *st)
{
    mg_action acts[MG_MAX_ACTIONS];
    int n = vt->legal(st, acts);
    for (int i = 0; i < n; i++)
        if (vt->is_end_turn(acts[i]))
            return acts[i];
    return n > 0 ? acts[n - 1] : 0;
}

void ms_resample(const mg_game_vt *vt, const void *st, int observer, int det, mg_rng *rng,
                 void *out)
{
    if (!det) {
        memcpy(out, st, vt->state_size);
        return;
    }
    ms_state obs;
    vt->observe(st, observer, obs.b);
    (void)mg_determinize(vt, obs.b, MG_DET_UNIFORM, rng, out); /* uniform: every game has it */
}

/* The generation's working memory: one state and one legal list per depth, the move being
 * built, and the set of reached states (open addressing on the hash; 0 marks a free slot). */
typedef struct mv_gen {
    const mg_game_vt *vt;
    mg_rng *rng;
    long max, count;
    int room, mover;
    unsigned char *states; /* room x state_size */
    mg_action *acts;       /* room x max_actions */
    mg_action seq[MG_SEARCH_MAX_PLAN];
    uint64_t *seen;
    unsigned long mask;
    ms_move_visit visit;
    void *ctx;
} mv_gen;

/* 1 if the hash was new (and is now recorded). */
static int mv_first_visit(mv_gen *g, uint64_t h)
{
    h |= 1; /* never 0, the free mark */
    for (unsigned long i = (unsigned long)h & g->mask;; i = (i + 1) & g->mask) {
        if (g->seen[i] == h)
            return 0;
        if (g->seen[i] == 0) {
            g->seen[i] = h;
            return 1;
        }
    }
}

static void mv_emit(mv_gen *g, int len)
{
    g->visit(g->ctx, g->seq, len);
    g->count++;
}

/* The moves below the state at `depth` (g->states + depth), whose prefix is seq[0..depth). */
static void mv_dfs(mv_gen *g, int depth)
{
    const mg_game_vt *vt = g->vt;
    size_t ss = vt->state_size;
    unsigned char *x = g->states + (size_t)depth * ss;
    mg_action *acts = g->acts + (size_t)depth * (size_t)vt->max_actions;
    int n = vt->legal(x, acts), end = -1;
    for (int i = 0; i < n && end < 0; i++)
        if (vt->is_end_turn(acts[i]))
            end = i;
    if (end < 0 || g->count >= g->max)
        return;
    g->seq[depth] = acts[end];
    mv_emit(g, depth + 1);
    if (depth + 2 > g->room) /* no room for an action and END_TURN */
        return;
    unsigned char *y = x + ss;
    for (int i = 0; i < n && g->count < g->max; i++) {
        if (i == end)
            continue;
        memcpy(y, x, ss);
        if (vt->apply(y, acts[i], g->rng) != MG_OK)
            continue;
        if (g->seen && !mv_first_visit(g, vt->hash(y)))
            continue;
        g->seq[depth] = acts[i];
        if (vt->terminal(y, NULL) || vt->current(y) != g->mover)
            mv_emit(g, depth + 1); /* the action ended the game (or the turn) */
        else
            mv_dfs(g, depth + 1);
    }
}

long ms_gen_moves(const mg_game_vt *vt, const void *st, long max, int room, int prune,
                  mg_rng *rng, ms_move_visit visit, void *ctx)
{
    mv_gen g;
    memset(&g, 0, sizeof g);
    g.vt = vt;
    g.rng = rng;
    g.max = max;
    g.room = room < MG_SEARCH_MAX_PLAN ? room : MG_SEARCH_MAX_PLAN;
    g.mover = vt->current(st);
    g.visit = visit;
    g.ctx = ctx;
    if (g.room < 1 || vt->terminal(st, NULL))
        return 0;
    g.states = malloc((size_t)(g.room + 1) * vt->state_size);
    g.acts = malloc((size_t)(g.room + 1) * (size_t)vt->max_actions * sizeof *g.acts);
    if (prune) {
        /* every state kept yields a move, so 2 max slots never fill */
        unsigned long slots = ms_pow2((unsigned long)(2 * max + 2));
        g.seen = calloc(slots, sizeof *g.seen);
        g.mask = slots - 1;
    }
    long rc = -1;
    if (g.states && g.acts && (!prune || g.seen)) {
        memcpy(g.states, st, vt->state_size);
        if (prune)
            (void)mv_first_visit(&g, vt->hash(st));
        mv_dfs(&g, 0);
        rc = g.count;
    }
    free(g.states);
    free(g.acts);
    free(g.seen);
    return rc;
}

/* Reservoir sampling over the generated moves: uniform over all, or over the longest. */
typedef struct mv_pick {
    mg_rng *rng;
    int longest;
    long seen;   /* moves eligible so far (of the best length when longest) */
    int len;     /* the kept move's length */
    mg_action move[MG_SEARCH_MAX_PLAN];
} mv_pick;

static void mv_pick_visit(void *vctx, const mg_action *move, int len)
{
    mv_pick *k = vctx;
    if (k->longest && len < k->len)
        return;
    if (k->longest && len > k->len)
        k->seen = 0;
    k->seen++;
    if (mg_rng_below(k->rng, (uint32_t)k->seen) == 0) { /* max_moves < 2^32 */
        memcpy(k->move, move, (size_t)len * sizeof *move);
        k->len = len;
    }
}

int ms_random_move(const mg_game_vt *vt, const void *st, const mg_search_params *p, int longest,
                   int room, mg_rng *rng, mg_action *move, long *generated)
{
    mv_pick k;
    memset(&k, 0, sizeof k);
    k.rng = rng;
    k.longest = longest;
    long n = ms_gen_moves(vt, st, p->max_moves, room, p->transpositions, rng, mv_pick_visit, &k);
    if (generated)
        *generated = n;
    if (n < 0)
        return -1;
    memcpy(move, k.move, (size_t)k.len * sizeof *move);
    return k.len;
}

int mg_search_rmp(const mg_game_vt *vt, const void *st, const mg_search_params *p, mg_rng *rng,
                  mg_action *plan, int *plan_len, mg_search_stats *stats)
{
    long n = 0;
    int len = ms_random_move(vt, st, p, p->longest, MG_SEARCH_MAX_PLAN, rng, plan, &n);
    if (len < 0)
        return MG_ERR_NOMEM;
    *plan_len = len;
    stats->iterations = n;
    stats->nodes = n;
    stats->stop = n >= p->max_moves ? MG_STOP_ITERATIONS : MG_STOP_DONE;
    return MG_OK;
}

static void mv_count_visit(void *vctx, const mg_action *move, int len)
{
    (void)move;
    int *longest = vctx;
    if (len > *longest)
        *longest = len;
}

long mg_count_moves(const mg_game_vt *vt, const void *st, long max_moves, int prune, mg_rng *rng,
                    int *longest)
{
    int best = 0;
    long n = ms_gen_moves(vt, st, max_moves, MG_SEARCH_MAX_PLAN, prune, rng, mv_count_visit, &best);
    if (longest)
        *longest = best;
    return n;
}
