/* heroes_features.c: the feature vector of a heroes state for learned evaluations
 * (mg_game_vt.features, HR_NFEATURES numbers; mg_heroes.h lists them).
 *
 * Everything is seen from `player` ("me") and made only of what that player may see: the
 * board, both sides' hand and deck sizes, and per card kind the cards a side has left in
 * hand and deck together (the opponent's hand alone is hidden; hand + deck is what card
 * counting gives, and an observation or any determinization of it has the same sums). */
#include "heroes_internal.h"

/* The HR_FEAT_SIDE entries of side p (0/1) from offset 0 of out. */
static void side_features(const hr_state *st, int p, double *out)
{
    const uint8_t *sq = hr_maps[st->map].sq;
    for (int i = 0; i < HR_FEAT_SIDE; i++)
        out[i] = 0.0;
    for (uint64_t m = st->occ[p]; m; m &= m - 1) {
        int s = hr_lowest_bit(m);
        const hr_unit *u = &st->board[s];
        if (u->kind == HR_CRYSTAL) {
            out[11] += 1.0;
            out[12] += u->hp / 4500.0;
            continue;
        }
        if (u->hp == 0) {
            out[10] += 1.0;
            continue;
        }
        out[u->kind] += 1.0;
        out[5 + u->kind] += (double)u->hp / hr_max_hp(u);
        for (int b = 0; b < 4; b++)
            out[13] += (u->items >> b) & 1;
        out[14] += sq[s] == HR_SQ_POWER;
        out[15] += sq[s] == HR_SQ_ASSAULT;
        out[16] += sq[s] == HR_SQ_DEFENSE;
    }
    for (int c = HR_KNIGHT; c <= HR_NINJA; c++)
        out[17 + c] = (st->hand[p][c] + st->deck[p][c]) / 5.0;
    out[22] = (st->hand[p][HR_INFERNO] + st->deck[p][HR_INFERNO]) / 5.0;
    for (int c = HR_POTION; c <= HR_SHINING_HELM; c++)
        out[23] += (st->hand[p][c] + st->deck[p][c]) / 5.0;
    out[24] = st->hand_n[p] / (double)HR_HAND_SIZE;
    out[25] = st->deck_n[p] / 30.0;
    for (int i = 0; i <= 4; i++) /* unit counts on a scale of about [0, 1] */
        out[i] /= 5.0;
    out[10] /= 5.0;
    out[13] /= 5.0;
    for (int i = 14; i <= 16; i++)
        out[i] /= 5.0;
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
