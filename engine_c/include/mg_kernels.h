/* mg_kernels.h: generic kernels over the game interface: random playouts and the timed
 * loops behind `maag bench engine`. No allocation; buffers are the caller's or on the stack. */
#ifndef MG_KERNELS_H
#define MG_KERNELS_H

#include "mg_game.h"

/* Largest state_size of any registered game (stack buffers for clones). */
#define MG_MAX_STATE_SIZE 2048

/* Play uniformly random legal actions until the game ends or max_actions were applied.
 * Like the reference's random agent, END_TURN is chosen only when nothing else is legal.
 * Returns the number of actions applied (END_TURN included); the state is advanced. */
long mg_random_playout(const mg_game_vt *vt, void *st, mg_rng *rng, long max_actions);

/* Repeat random playouts from `start` for `seconds`; report games, actions and the
 * elapsed time in seconds. Returns MG_OK. */
int mg_bench_playouts(const mg_game_vt *vt, const void *start, double seconds, uint64_t seed,
                      long *games, long *actions, double *elapsed);

/* Enumerate legal actions of states[i % n] (n states laid out back to back) repeatedly
 * for `seconds`; report the number of calls and the elapsed time. */
int mg_bench_legal(const mg_game_vt *vt, const void *states, int n, double seconds, long *calls,
                   double *elapsed);

/* memcpy-clone states[i % n] and apply one random legal action to the clone, repeatedly
 * for `seconds`; report the number of clone+apply pairs and the elapsed time. */
int mg_bench_clone_apply(const mg_game_vt *vt, const void *states, int n, double seconds,
                         uint64_t seed, long *count, double *elapsed);

#endif
