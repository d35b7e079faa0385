/* cards_internal.h: what the card game's C files share and nothing outside needs. */
#ifndef CARDS_INTERNAL_H
#define CARDS_INTERNAL_H

#include "mg_cards.h"
#include "cards_tables.h"

#define CD_HERO_EID(seat) ((uint16_t)(1 + (seat)))
#define CD_POWER_COST 2

/* The table entry of a card; an unknown card (an observation's hidden one) reads as the
 * empty entry 0, which has no abilities. */
static inline const cd_card *cd_info(int card)
{
    return &CD_CARDS[card > 0 && card < CD_NCARDS ? card : 0];
}

/* A character: a seat and a slot (0..6 a minion, CD_HERO_SLOT the hero). */
typedef struct cd_ref {
    int seat;
    int slot;
} cd_ref;

/* cards_rules.c */
int cd_find(const cd_state *st, uint16_t eid, cd_ref *out);
int cd_eid_of(const cd_state *st, cd_ref r);
int cd_has_kw(const cd_minion *m, int kw);
int cd_spell_target_ok(const cd_state *st, int actor, cd_ref t);
int cd_attack_target_ok(const cd_state *st, int attacker_seat, cd_ref t);
int cd_card_needs_target(const cd_state *st, int seat, int card, int *sel);
int cd_play_ok(const cd_state *st, int seat, int hand_slot);
void cd_do_action(cd_state *st, mg_action a, mg_rng *rng);
void cd_start_turn(cd_state *st, mg_rng *rng);

/* Whether selector `sel` (CD_S_*), used by `seat`, may choose character `t`: one copy for
 * the legal-action generator (cards_legal.c) and the rules (cards_rules.c), inlined in both. */
static inline int cd_selector_allows(const cd_state *st, int seat, int sel, cd_ref t)
{
    if (!cd_spell_target_ok(st, seat, t))
        return 0;
    switch (sel) {
    case CD_S_ANY_CHAR: return 1;
    case CD_S_ANY_MINION: return t.slot != CD_HERO_SLOT;
    case CD_S_ENEMY_MINION: return t.slot != CD_HERO_SLOT && t.seat != seat;
    case CD_S_FRIENDLY_MINION: return t.slot != CD_HERO_SLOT && t.seat == seat;
    default: return 0;
    }
}

/* cards_legal.c */
int cd_legal(const void *vst, mg_action *out);
int cd_check(const void *vst, mg_action a);

#endif
