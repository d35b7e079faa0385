/* heroes_features.c: the feature vector of a heroes state for learned evaluations
 * (mg_game_vt.features, HR_NFEATURES numbers; mg_heroes.h lists them).
 *
 * Everything is seen from `player` ("me") and made only of what that player may see: the
 * board, both sides' hand and deck sizes, and per card kind the cards a side has left in
 * hand and deck together (the opponent's hand alone is hidden; hand + deck is what card
 * counting gives, and an observation or any determinization of it has the same sums). */
#include "heroes_internal.h"

/* The HR_FEAT_SIDE entries of side p (0/1) from offset 0 of out. Counts are kept as integers
 * and scaled once by multiplication (no divisions: this runs at every evaluation). */
static void side_features(const hr_state *st, int p, double *out)
{
    const double fifth = 0.2;
    const uint8_t *sq = hr_maps[st->map].sq;
    int alive[5] = {0, 0, 0, 0, 0}, ko = 0, crystals = 0, crystal_hp = 0, items = 0, on[3] = {0, 0, 0};
    double health[5] = {0, 0, 0, 0, 0};
    for (uint64_t m = st->occ[p]; m; m &= m - 1) {
        int s = hr_lowest_bit(m);
        const hr_unit *u = &st->board[s];
        if (u->kind == HR_CRYSTAL) {
            crystals++;
            crystal_hp += u->hp;
        } else if (u->hp == 0) {
            ko++;
        } else {
            alive[u->kind]++;
            health[u->kind] += (double)u->hp / hr_max_hp_of(u);
            items += (u->items & 1) + (u->items >> 1 & 1) + (u->items >> 2 & 1) + (u->items >> 3 & 1);
            on[0] += sq[s] == HR_SQ_POWER;
            on[1] += sq[s] == HR_SQ_ASSAULT;
            on[2] += sq[s] == HR_SQ_DEFENSE;
        }
    }
    const uint8_t *hand = st->hand[p], *deck = st->deck[p];
    for (int k = 0; k < 5; k++) {
        out[k] = alive[k] * fifth;
        out[5 + k] = health[k];
        out[17 + k] = (hand[k] + deck[k]) * fifth;
    }
    out[10] = ko * fifth;
    out[11] = crystals;
    out[12] = crystal_hp * (1.0 / 4500.0);
    out[13] = items * fifth;
    for (int k = 0; k < 3; k++)
        out[14 + k] = on[k] * fifth;
    out[22] = (hand[HR_INFERNO] + deck[HR_INFERNO]) * fifth;
    int item_cards = 0;
    for (int c = HR_POTION; c <= HR_SHINING_HELM; c++)
        item_cards += hand[c] + deck[c];
    out[23] = item_cards * fifth;
    out[24] = st->hand_n[p] * (1.0 / HR_HAND_SIZE);
    out[25] = st->deck_n[p] * (1.0 / 30.0);
}

void hr_features(const void *vst, int player, double *out)
{
    const hr_state *st = vst;
    side_features(st, player, out);
    side_features(st, 1 - player, out + HR_FEAT_SIDE);
    double *g = out + 2 * HR_FEAT_SIDE;
    g[0] = st->current == player;
    g[1] = st->ap_per_turn > 0 ? (double)st->ap / st->ap_per_turn : 0.0;
    g[2] = st->turn_limit > 0 ? (double)st->turn / st->turn_limit : 0.0;
}
