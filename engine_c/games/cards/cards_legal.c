/* cards_legal.c: the legal actions of the card game (spec §5.2) and the check of one action.
 * Order of the list: PLAY by hand slot (each with its targets in canonical order: the
 * acting player's hero and minions, then the opponent's), ATTACK by attacker (minions left
 * to right, then the hero), POWER, END_TURN last. The traces' `n_legal` counts this list. */
#include "cards_internal.h"

/* Characters in canonical order for the player to act: slot codes CD_TARGET(seat, slot). */
static int canonical(const cd_state *st, cd_ref *out)
{
    int n = 0;
    for (int k = 0; k < 2; k++) {
        int s = st->current ^ k;
        out[n].seat = s;
        out[n++].slot = CD_HERO_SLOT;
        for (int i = 0; i < st->p[s].nboard; i++) {
            out[n].seat = s;
            out[n++].slot = i;
        }
    }
    return n;
}

static int play_actions(const cd_state *st, int h, const cd_ref *chars, int nchars, mg_action *out)
{
    int seat = st->current, card = st->p[seat].hand[h], sel, n = 0;
    if (card == 0 || card >= CD_NCARDS || !cd_play_ok(st, seat, h))
        return 0;
    if (cd_card_needs_target(st, seat, card, &sel))
        for (int i = 0; i < nchars; i++)
            if (cd_selector_allows(st, seat, sel, chars[i]))
                out[n++] = CD_ACTION(CD_A_PLAY, h, CD_TARGET(chars[i].seat, chars[i].slot), card);
    if (n == 0) /* no target needed, or a battlecry without one (spells were refused) */
        out[n++] = CD_ACTION(CD_A_PLAY, h, 0, card);
    return n;
}

static int attack_actions(const cd_state *st, int src, mg_action *out)
{
    int seat = st->current, n = 0;
    if (!cd_can_attack(st, seat, src))
        return 0;
    cd_ref t = {seat ^ 1, CD_HERO_SLOT};
    if (cd_attack_target_ok(st, seat, t))
        out[n++] = CD_ACTION(CD_A_ATTACK, src, CD_TARGET(t.seat, t.slot), 0);
    for (t.slot = 0; t.slot < st->p[seat ^ 1].nboard; t.slot++)
        if (cd_attack_target_ok(st, seat, t))
            out[n++] = CD_ACTION(CD_A_ATTACK, src, CD_TARGET(t.seat, t.slot), 0);
    return n;
}

static int power_ok(const cd_state *st)
{
    const cd_player *p = &st->p[st->current];
    if (p->power_used || p->mana < CD_POWER_COST)
        return 0;
    return p->hero_class == CD_MAGE || p->nboard < CD_BOARD_MAX;
}

int cd_legal(const void *vst, mg_action *out)
{
    const cd_state *st = vst;
    if (st->terminal)
        return 0;
    const cd_player *p = &st->p[st->current];
    cd_ref chars[2 * (CD_BOARD_MAX + 1)];
    int nchars = canonical(st, chars), n = 0;
    for (int h = 0; h < p->nhand; h++)
        n += play_actions(st, h, chars, nchars, out + n);
    for (int a = 0; a < p->nboard; a++)
        n += attack_actions(st, a, out + n);
    n += attack_actions(st, CD_HERO_SLOT, out + n);
    if (power_ok(st)) {
        if (p->hero_class == CD_MAGE) { /* Fireblast: any character */
            for (int i = 0; i < nchars; i++)
                if (cd_spell_target_ok(st, st->current, chars[i]))
                    out[n++] = CD_ACTION(CD_A_POWER, 0, CD_TARGET(chars[i].seat, chars[i].slot), 0);
        } else {
            out[n++] = CD_ACTION(CD_A_POWER, 0, 0, 0);
        }
    }
    out[n++] = CD_ACTION(CD_A_END_TURN, 0, 0, 0);
    return n;
}

static cd_ref decode_target(int code)
{
    cd_ref r = {(code - 1) / 8, (code - 1) % 8};
    return r;
}

/* A target code names an existing character (or is 0). */
static int target_exists(const cd_state *st, int code)
{
    if (code == 0)
        return 1;
    cd_ref r = decode_target(code);
    return r.slot == CD_HERO_SLOT || r.slot < st->p[r.seat].nboard;
}

static int check_play(const cd_state *st, int h, int tcode, int card)
{
    int seat = st->current, sel;
    const cd_player *p = &st->p[seat];
    if (h >= p->nhand || p->hand[h] != card)
        return CD_ERR_NO_CARD;
    if (cd_info(card)->cost > p->mana)
        return CD_ERR_MANA;
    if (!cd_play_ok(st, seat, h)) {
        if (cd_info(card)->type == CD_TYPE_SE)
            return CD_ERR_SECRET;
        if (cd_info(card)->type == CD_TYPE_MI || p->nboard >= CD_BOARD_MAX)
            return CD_ERR_BOARD_FULL;
        return CD_ERR_TARGET; /* a targeted spell without any legal target */
    }
    if (!cd_card_needs_target(st, seat, card, &sel))
        return tcode == 0 ? MG_OK : CD_ERR_TARGET;
    if (tcode != 0)
        return cd_selector_allows(st, seat, sel, decode_target(tcode)) ? MG_OK : CD_ERR_TARGET;
    /* A battlecry may go without a target only if no character allows one. */
    for (int k = 0; k < 2; k++) {
        cd_ref t = {seat ^ k, CD_HERO_SLOT};
        if (cd_selector_allows(st, seat, sel, t))
            return CD_ERR_TARGET;
        for (t.slot = 0; t.slot < st->p[t.seat].nboard; t.slot++)
            if (cd_selector_allows(st, seat, sel, t))
                return CD_ERR_TARGET;
    }
    return MG_OK;
}

int cd_check(const void *vst, mg_action a)
{
    const cd_state *st = vst;
    if (st->terminal)
        return MG_ERR_TERMINAL;
    int type = CD_A_TYPE(a), src = CD_A_SRC(a), tcode = CD_A_TARGET(a), card = CD_A_CARD(a);
    if (a >> 18 || tcode > CD_TARGET(1, CD_HERO_SLOT))
        return MG_ERR_DECODE;
    switch (type) {
    case CD_A_END_TURN:
        return a == 0 ? MG_OK : MG_ERR_DECODE;
    case CD_A_PLAY:
        if (src >= CD_HAND_MAX || card == 0 || card >= CD_NCARDS)
            return MG_ERR_DECODE;
        if (!target_exists(st, tcode))
            return CD_ERR_TARGET;
        return check_play(st, src, tcode, card);
    case CD_A_ATTACK:
        if (card != 0 || tcode == 0 || (src > 6 && src != CD_HERO_SLOT))
            return MG_ERR_DECODE;
        if (src != CD_HERO_SLOT && src >= st->p[st->current].nboard)
            return CD_ERR_ATTACKER;
        if (!cd_can_attack(st, st->current, src))
            return CD_ERR_ATTACKER;
        if (!target_exists(st, tcode) || !cd_attack_target_ok(st, st->current, decode_target(tcode)))
            return CD_ERR_TARGET;
        return MG_OK;
    default: { /* CD_A_POWER */
        const cd_player *p = &st->p[st->current];
        if (card != 0 || src != 0)
            return MG_ERR_DECODE;
        if (p->power_used)
            return CD_ERR_POWER_USED;
        if (p->mana < CD_POWER_COST)
            return CD_ERR_MANA;
        if (p->hero_class == CD_MAGE) {
            if (tcode == 0 || !target_exists(st, tcode) ||
                !cd_spell_target_ok(st, st->current, decode_target(tcode)))
                return CD_ERR_TARGET;
            return MG_OK;
        }
        if (tcode != 0)
            return CD_ERR_TARGET;
        return p->nboard < CD_BOARD_MAX ? MG_OK : CD_ERR_BOARD_FULL;
    }
    }
}
