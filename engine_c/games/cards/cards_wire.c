/* cards_wire.c: the only writer of a state's JSON form (mg_game_vt.write_msgpack), as
 * msgpack: the referee sends these bytes in every `your_turn`, and State.to_json decodes them
 * for everyone else (watchers, the web view, replays, the tools). codec.py reads the form back
 * (state_from_json); tests/engine/test_one_serializer.py fails if it writes it again.
 * Card ids come from the card table (cards_tables.h, generated from pool.py, as the codec's
 * CARDS is); the few other names are the ones the codec reads, copied below. */
#include "cards_internal.h"
#include "mg_wire.h"

/* The names codec.py reads back (HEROES, DECK_NAMES, KW, ENCH_KINDS); the round-trip tests
 * fail if they drift. */
static const char *const HERO_NAMES[2] = {"mage", "paladin"};
static const char *const DECK_NAMES[4] = {"M", "P", "X", "random"};
static const char *const KW_NAMES[5] = {"taunt", "charge", "ds", "stealth", "windfury"};

/* codec.py card_name: "?" for no card or an unknown one. */
static const char *card_id(int card)
{
    return card >= 1 && card < CD_NCARDS ? CD_CARDS[card].id : "?";
}

static void write_cards(mg_wire *w, const uint8_t *cards, int n)
{
    mw_array(w, (uint32_t)n);
    for (int i = 0; i < n; i++)
        mw_str(w, card_id(cards[i]));
}

/* The observer's own deck: how many of each card are left, not their order, keyed in the
 * order the cards first appear (the codec counts into a dict as it walks the deck). Every
 * unknown card is the one key "?", as the codec names them all so. */
static void write_deck_counts(mg_wire *w, const cd_player *p)
{
    uint8_t count[CD_NCARDS] = {0};
    uint8_t order[CD_DECK_SIZE];
    int nkeys = 0;
    for (int i = 0; i < p->ndeck; i++) {
        int key = p->deck[i] >= 1 && p->deck[i] < CD_NCARDS ? p->deck[i] : 0;
        if (count[key]++ == 0)
            order[nkeys++] = (uint8_t)key;
    }
    mw_map(w, (uint32_t)nkeys);
    for (int k = 0; k < nkeys; k++) {
        mw_str(w, card_id(order[k]));
        mw_int(w, count[order[k]]);
    }
}

static void write_ench(mg_wire *w, const char *src, const char *kind, int atk, int hp)
{
    mw_map(w, 4);
    mw_str(w, "src"); mw_str(w, src);
    mw_str(w, "kind"); mw_str(w, kind);
    mw_str(w, "atk"); mw_int(w, atk);
    mw_str(w, "hp"); mw_int(w, hp);
}

/* A card that gives each other friendly minion an aura (N23, N33 in the card table). */
static int has_aura(int card)
{
    return (cd_info(card)->triggers >> CD_TR_AURA & 1) != 0;
}

static void write_minion(mg_wire *w, const cd_state *s, int seat, int i)
{
    const cd_player *p = &s->p[seat];
    const cd_minion *m = &p->board[i];
    int kw = m->kw | m->ekw;
    mw_map(w, 17);
    mw_str(w, "card"); mw_str(w, card_id(m->card));
    mw_str(w, "eid"); mw_int(w, m->eid);
    mw_str(w, "atk"); mw_int(w, m->atk);
    mw_str(w, "hp"); mw_int(w, m->hp);
    mw_str(w, "max_hp"); mw_int(w, m->max_hp);
    for (int b = 0; b < 5; b++) {
        mw_str(w, KW_NAMES[b]);
        mw_bool(w, kw >> b & 1);
    }
    mw_str(w, "frozen"); mw_bool(w, m->frozen);
    mw_str(w, "silenced"); mw_bool(w, m->silenced);
    mw_str(w, "sick"); mw_bool(w, m->fresh && !(kw & CD_KW_CHARGE));
    mw_str(w, "fresh"); mw_bool(w, m->fresh);
    mw_str(w, "attacks_used"); mw_int(w, m->attacks_used);
    mw_str(w, "can_attack"); mw_bool(w, s->current == seat && cd_can_attack(s, seat, i));
    /* The enchantments kept, then one "aura" entry per other unsilenced aura minion on the
     * side, as the traces list them: auras are recomputed in C, so the codec skips these when
     * it reads a state. */
    uint32_t n = m->nench;
    for (int j = 0; j < p->nboard; j++)
        n += j != i && !p->board[j].silenced && has_aura(p->board[j].card);
    mw_str(w, "ench");
    mw_array(w, n);
    for (int e = 0; e < m->nench; e++) {
        const cd_ench *x = &m->ench[e];
        write_ench(w, card_id(x->src), x->kind == 2 ? "enrage" : "buff", x->atk, x->hp);
    }
    for (int j = 0; j < p->nboard; j++) {
        const cd_minion *o = &p->board[j];
        if (j == i || o->silenced || !has_aura(o->card))
            continue;
        const cd_card *k = cd_info(o->card);
        write_ench(w, k->id, "aura", k->aura_atk, k->aura_hp);
    }
}

static void write_player(mg_wire *w, const cd_state *s, int seat)
{
    const cd_player *p = &s->p[seat];
    int hidden = s->observer >= 0 && s->observer != seat;
    mw_map(w, hidden ? 16 : 19);
    mw_str(w, "hero");
    mw_map(w, 9);
    mw_str(w, "class"); mw_str(w, HERO_NAMES[p->hero_class & 1]);
    mw_str(w, "hp"); mw_int(w, p->hp);
    mw_str(w, "max_hp"); mw_int(w, CD_HERO_HP);
    mw_str(w, "armor"); mw_int(w, p->armor);
    mw_str(w, "atk"); mw_int(w, p->weapon && s->current == seat ? p->weapon_atk : 0);
    mw_str(w, "frozen"); mw_bool(w, p->frozen);
    mw_str(w, "immune"); mw_bool(w, p->immune);
    mw_str(w, "attacks_used"); mw_int(w, p->attacks_used);
    mw_str(w, "can_attack"); mw_bool(w, s->current == seat && cd_can_attack(s, seat, CD_HERO_SLOT));
    mw_str(w, "weapon");
    if (p->weapon) {
        mw_map(w, 4);
        mw_str(w, "card"); mw_str(w, card_id(p->weapon));
        mw_str(w, "atk"); mw_int(w, p->weapon_atk);
        mw_str(w, "durability"); mw_int(w, p->weapon_dur);
        mw_str(w, "eid"); mw_int(w, p->weapon_eid);
    } else {
        mw_nil(w);
    }
    mw_str(w, "mana"); mw_int(w, p->mana);
    mw_str(w, "max_mana"); mw_int(w, p->max_mana);
    mw_str(w, "overload_locked"); mw_int(w, p->overload_locked);
    mw_str(w, "overload_pending"); mw_int(w, p->overload_pending);
    mw_str(w, "power_used"); mw_bool(w, p->power_used);
    mw_str(w, "cards_played_this_turn"); mw_int(w, p->cards_played);
    mw_str(w, "fatigue"); mw_int(w, p->fatigue);
    mw_str(w, "deck_list"); mw_str(w, DECK_NAMES[p->deck_mode & 3]);
    mw_str(w, "hand_count"); mw_int(w, p->nhand);
    mw_str(w, "deck_count"); mw_int(w, p->ndeck);
    mw_str(w, "secret_count"); mw_int(w, p->nsecrets);
    mw_str(w, "secret_eids");
    mw_array(w, p->nsecrets);
    for (int i = 0; i < p->nsecrets; i++)
        mw_int(w, p->secret_eid[i]);
    if (!hidden) {
        mw_str(w, "hand"); write_cards(w, p->hand, p->nhand);
        mw_str(w, "secrets"); write_cards(w, p->secrets, p->nsecrets);
        mw_str(w, "deck");
        if (s->observer == seat)
            write_deck_counts(w, p);
        else
            write_cards(w, p->deck, p->ndeck);
    }
    mw_str(w, "board");
    mw_array(w, p->nboard);
    for (int i = 0; i < p->nboard; i++)
        write_minion(w, s, seat, i);
    uint32_t n = 0;
    for (int c = 1; c < CD_NCARDS; c++)
        n += p->revealed[c] != 0;
    mw_str(w, "revealed");
    mw_map(w, n);
    for (int c = 1; c < CD_NCARDS; c++)
        if (p->revealed[c]) {
            mw_str(w, CD_CARDS[c].id);
            mw_int(w, p->revealed[c]);
        }
}

void cd_write_msgpack(const void *vst, const char *const *names, mg_wire *w)
{
    const cd_state *s = vst;
    (void)names;
    mw_map(w, s->observer >= 0 ? 10 : 9);
    mw_str(w, "ply"); mw_int(w, s->ply);
    mw_str(w, "current"); mw_int(w, s->current + 1);
    mw_str(w, "first"); mw_int(w, s->first + 1);
    mw_str(w, "terminal"); mw_bool(w, s->terminal);
    mw_str(w, "winner"); mw_int(w, s->terminal && s->winner >= 0 ? s->winner + 1 : 0);
    mw_str(w, "capped"); mw_bool(w, s->capped);
    mw_str(w, "ply_limit"); mw_int(w, s->ply_limit);
    mw_str(w, "next_eid"); mw_int(w, s->next_eid);
    mw_str(w, "players");
    mw_array(w, 2);
    for (int seat = 0; seat < 2; seat++)
        write_player(w, s, seat);
    if (s->observer >= 0) {
        mw_str(w, "observer"); mw_int(w, s->observer + 1);
    }
}
