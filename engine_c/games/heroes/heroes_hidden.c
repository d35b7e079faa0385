/* heroes_hidden.c: heroes determinization strategies (mg_game_vt.determinize_mode): uniform,
 * the most probable hidden hand, and every unseen card in the opponent's hand. */
#include <string.h>

#include "heroes_internal.h"

/* The most probable hand of k cards from the unseen multiset u[] (multivariate
 * hypergeometric: P(h) is proportional to prod_c C(u[c], h[c])). log C(u, h) is concave in
 * h, so adding one card at a time with the largest gain C(u, h+1) / C(u, h) = (u - h) /
 * (h + 1) is optimal; equal gains go to the lower card index. Writes h[]. */
static void most_probable_hand(const uint8_t *u, int k, uint8_t *h)
{
    memset(h, 0, HR_NCARDS);
    for (int i = 0; i < k; i++) {
        int best = -1;
        for (int c = 0; c < HR_NCARDS; c++) {
            if (h[c] >= u[c])
                continue;
            /* gain(c) > gain(best)  <=>  (u_c - h_c)(h_b + 1) > (u_b - h_b)(h_c + 1) */
            if (best < 0 || (u[c] - h[c]) * (h[best] + 1) > (u[best] - h[best]) * (h[c] + 1))
                best = c;
        }
        if (best < 0)
            return; /* fewer unseen cards than k: cannot happen in a valid observation */
        h[best]++;
    }
}

/* mg_game_vt.determinize_mode for heroes. The opponent of the observer gets a hand by the
 * strategy; both deck seeds are drawn fresh from 0..999 (they fix future draws in the
 * seeded draw mode) whatever the strategy. */
int hr_determinize_mode(const void *vobs, int mode, mg_rng *rng, void *vout)
{
    if (mode < 0 || mode >= MG_DET_COUNT)
        return MG_ERR_CONFIG;
    if (mode == MG_DET_UNIFORM) {
        mg_heroes_vt.determinize(vobs, rng, vout);
        return MG_OK;
    }
    hr_state *out = vout;
    memcpy(out, vobs, sizeof *out);
    if (out->observer < 0)
        return MG_OK;
    int opp = 1 - out->observer;
    uint8_t unseen[HR_NCARDS], hand[HR_NCARDS];
    memcpy(unseen, out->deck[opp], sizeof unseen);
    if (mode == MG_DET_MOST_PROBABLE) {
        most_probable_hand(unseen, out->hand_n[opp], hand);
    } else { /* MG_DET_ALL_UNSEEN */
        memcpy(hand, unseen, sizeof hand);
        out->hand_n[opp] = (uint8_t)(out->hand_n[opp] + out->deck_n[opp]);
        out->deck_n[opp] = 0;
    }
    for (int c = 0; c < HR_NCARDS; c++) {
        out->hand[opp][c] = hand[c];
        out->deck[opp][c] = (uint8_t)(unseen[c] - hand[c]);
    }
    for (int p = 0; p < 2; p++)
        out->deck_seed[p] = (int32_t)mg_rng_below(rng, 1000);
    out->observer = -1;
    out->zob = hr_zobrist_full(out);
    return MG_OK;
}
