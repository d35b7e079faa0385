/* conquest_internal.h: helpers shared by the conquest sources (not part of the interface). */
#ifndef CONQUEST_INTERNAL_H
#define CONQUEST_INTERNAL_H

#include "mg_conquest.h"

static inline int cq_owner(const cq_state *st, int u) { return st->ukind[u] >> 7; }
static inline const cq_type *cq_type_of(const cq_state *st, int u) { return &st->types[st->ukind[u] & 7]; }
static inline int cq_owner_of(const cq_state *st, int t) { return (int)(st->owner1 >> t & 1); }
static inline uint32_t cq_all(const cq_state *st)
{
    return st->nterr >= 32 ? 0xFFFFFFFFu : (1u << st->nterr) - 1;
}

int cq_legal(const void *st, mg_action *out);
int cq_check(const void *st, mg_action a);
int cq_apply(void *st, mg_action a, mg_rng *rng);
int cq_apply_legal(void *st, mg_action a, mg_rng *rng);
/* Give territory t to `seat`, marking it taken this turn. */
void cq_take(cq_state *st, int t, int seat);

#endif
