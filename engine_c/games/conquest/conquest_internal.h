/* conquest_internal.h: helpers shared by the conquest sources (not part of the interface). */
#ifndef CONQUEST_INTERNAL_H
#define CONQUEST_INTERNAL_H

#include "mg_conquest.h"

static inline int cq_owner(const cq_state *st, int u) { return st->ukind[u] >> 7; }
static inline const cq_type *cq_type_of(const cq_state *st, int u) { return &st->types[st->ukind[u] & 7]; }
static inline int cq_owner_of(const cq_state *st, int t) { return (int)(st->owner1 >> t & 1); }
/* Quick strength of spec §7.1, times 2 so that it stays an integer: per unit
 * 2 * (2 + 1.5 hp + attack or defence), plus 2 per supported pair when attacking. Summed unit
 * by unit (cq_strength2 over a territory, cqa_strength2 over a set). */
typedef struct cq_strength {
    int s, supportable, support;
} cq_strength;
static inline void cq_strength_add(cq_strength *sum, const cq_type *k, int attacking)
{
    sum->s += 4 + 3 * k->hp + 2 * (attacking ? k->attack : k->defense);
    sum->supportable += (k->flags & CQ_SUPPORTABLE) != 0;
    sum->support += k->support;
}
static inline int cq_strength_total(const cq_strength *sum, int attacking)
{
    int pairs = sum->supportable < sum->support ? sum->supportable : sum->support;
    return sum->s + (attacking ? 2 * pairs : 0);
}
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
