/* heroes_wire.c: the only writer of a state's JSON form (mg_game_vt.write_msgpack), as
 * msgpack: the referee sends these bytes in every `your_turn`, and State.to_json decodes them
 * for everyone else (watchers, the web view, replays, the tools). The conformance format plus
 * the configuration keys map, deck, draws, ap_per_turn and turn_limit; an observation also has
 * `observer`, `hand_sizes` and `deck_sizes`, the opponent's hand empty (its deck lists every
 * card the observer has not seen) and no deck seeds. codec.py reads this form back
 * (state_from_json); tests/engine/test_one_serializer.py fails if it writes it again. */
#include "mg_heroes.h"
#include "mg_wire.h"

/* The names codec.py reads back (CARDS, KINDS, MAPS, DECKS, DRAWS); the round-trip tests fail
 * if they drift. */
static const char *const CARD_NAMES[HR_NCARDS] = {
    "knight", "archer", "cleric", "wizard", "ninja", "inferno", "potion", "runemetal", "scroll",
    "dragonscale", "shining_helmet"};
static const char *const MAP_NAMES[] = {"a", "a-small", "a-tiny"};
static const char *const DECK_NAMES[] = {"standard", "small", "tiny"};
static const char *const DRAW_NAMES[] = {"seeded", "random"};
/* Cards in name order, as the JSON lists hands and decks. */
static const uint8_t SORTED_CARDS[HR_NCARDS] = {1, 2, 9, 5, 0, 4, 6, 7, 8, 10, 3};

static const char *kind_name(int kind) {
    return kind == HR_CRYSTAL ? "crystal" : kind < 5 ? CARD_NAMES[kind] : "";
}

static const char *pick(const char *const *names, int n, int i) {
    return i >= 0 && i < n ? names[i] : "?";
}

/* The items of an equipment mask, by name: dragonscale, runemetal, scroll, shining_helmet. */
MW_INLINE(void) write_items(mg_wire *w, int items) {
    static const struct { int bit; const char *name; } ITEMS[4] = {
        {HR_EQ_DRAGONSCALE, "dragonscale"}, {HR_EQ_RUNEMETAL, "runemetal"},
        {HR_EQ_SCROLL, "scroll"}, {HR_EQ_SHINING_HELM, "shining_helmet"}};
    uint32_t n = 0;
    for (int i = 0; i < 4; i++) n += (items & ITEMS[i].bit) != 0;
    mw_array(w, n);
    for (int i = 0; i < 4; i++)
        if (items & ITEMS[i].bit) mw_str(w, ITEMS[i].name);
}

MW_INLINE(void) write_board(mg_wire *w, const hr_state *s) {
    uint64_t occ = s->occ[0] | s->occ[1];
    uint32_t n = 0;
    for (uint64_t m = occ; m; m &= m - 1) n++;
    mw_array(w, n);
    for (int y = 0; y < s->h; y++)
        for (int x = 0; x < s->w; x++) {
            int idx = x * s->h + y;
            if (!(occ >> idx & 1)) continue;
            const hr_unit *u = &s->board[idx];
            mw_map(w, 7);
            mw_str(w, "x"); mw_int(w, x);
            mw_str(w, "y"); mw_int(w, y);
            mw_str(w, "kind"); mw_str(w, kind_name(u->kind));
            mw_str(w, "owner"); mw_int(w, u->owner);
            mw_str(w, "hp"); mw_int(w, u->hp);
            mw_str(w, "max_hp"); mw_int(w, hr_max_hp(u));
            mw_str(w, "items"); write_items(w, u->items & 15);
        }
}

MW_INLINE(void) write_hand(mg_wire *w, const uint8_t *hand) {
    uint32_t n = 0;
    for (int i = 0; i < HR_NCARDS; i++) n += hand[i];
    mw_array(w, n);
    for (int k = 0; k < HR_NCARDS; k++)
        for (int j = 0; j < hand[SORTED_CARDS[k]]; j++) mw_str(w, CARD_NAMES[SORTED_CARDS[k]]);
}

MW_INLINE(void) write_deck(mg_wire *w, const uint8_t *deck) {
    uint32_t n = 0;
    for (int i = 0; i < HR_NCARDS; i++) n += deck[i] != 0;
    mw_map(w, n);
    for (int k = 0; k < HR_NCARDS; k++) {
        int c = SORTED_CARDS[k];
        if (!deck[c]) continue;
        mw_str(w, CARD_NAMES[c]);
        mw_int(w, deck[c]);
    }
}

/* {"1": a, "2": b} */
MW_INLINE(void) write_pair(mg_wire *w, int a, int b) {
    mw_map(w, 2);
    mw_str(w, "1"); mw_int(w, a);
    mw_str(w, "2"); mw_int(w, b);
}

MW_INLINE(void) write_state(mg_wire *w, const hr_state *s) {
    int obs = s->observer >= 0;
    mw_map(w, obs ? 16 : 14);
    mw_str(w, "turn"); mw_int(w, s->turn);
    mw_str(w, "current"); mw_int(w, s->current + 1);
    mw_str(w, "ap"); mw_int(w, s->ap);
    mw_str(w, "terminal"); mw_bool(w, s->terminal);
    mw_str(w, "winner"); mw_int(w, s->terminal && s->winner >= 0 ? s->winner + 1 : 0);
    mw_str(w, "board"); write_board(w, s);
    mw_str(w, "hands");
    mw_map(w, 2);
    for (int p = 0; p < 2; p++) {
        mw_numstr(w, p + 1);
        if (obs && p != s->observer) mw_array(w, 0);
        else write_hand(w, s->hand[p]);
    }
    mw_str(w, "decks");
    mw_map(w, 2);
    for (int p = 0; p < 2; p++) {
        mw_numstr(w, p + 1);
        write_deck(w, s->deck[p]);
    }
    if (!obs) {
        mw_str(w, "deck_seed");
        write_pair(w, s->deck_seed[0], s->deck_seed[1]);
    }
    mw_str(w, "map"); mw_str(w, pick(MAP_NAMES, 3, s->map));
    mw_str(w, "deck"); mw_str(w, pick(DECK_NAMES, 3, s->deck_kind));
    mw_str(w, "draws"); mw_str(w, pick(DRAW_NAMES, 2, s->draws));
    mw_str(w, "ap_per_turn"); mw_int(w, s->ap_per_turn);
    mw_str(w, "turn_limit"); mw_int(w, s->turn_limit);
    if (obs) {
        mw_str(w, "observer"); mw_int(w, s->observer + 1);
        mw_str(w, "hand_sizes"); write_pair(w, s->hand_n[0], s->hand_n[1]);
        mw_str(w, "deck_sizes"); write_pair(w, s->deck_n[0], s->deck_n[1]);
    }
}

/* The writer works on a copy of the caller's mg_wire that no byte written can alias (every
 * helper above inlined into it), so that its length and capacity stay in registers instead
 * of being read back after every byte. */
void hr_write_msgpack(const void *vst, const char *const *names, mg_wire *out) {
    mg_wire w = *out;
    (void)names;
    write_state(&w, vst);
    *out = w;
}
