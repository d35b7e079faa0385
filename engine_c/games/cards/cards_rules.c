/* cards_rules.c: resolving one atomic action of the card game (spec §5-6). An action
 * becomes events on a fixed FIFO queue (spec §5.3): each event is applied when popped and
 * may push more events (its POST listeners, deathrattles) to the back; when the queue runs
 * dry the death phase removes the dead and queues their deathrattles. The queue lives on
 * the stack of one action: nothing allocates, and the state stays a flat struct. */
#include <string.h>

#include "cards_internal.h"

#define QCAP 256 /* events pending at once; the pool cannot come close (spec §10) */

enum {
    EV_DAMAGE,       /* target, n, src */
    EV_DAMAGED,      /* POST of a damage: target, src (listeners ON_DAMAGED, ON_DEALT_DAMAGE) */
    EV_HIT,          /* one random 1-damage hit of a SPLIT: seat, src, arg = pool */
    EV_HEAL,         /* target, n */
    EV_FREEZE,       /* target */
    EV_DRAW,         /* seat */
    EV_SUMMON,       /* seat, arg = token, slot: where (SLOT_END, SLOT_RIGHT_OF_SRC, or a slot) */
    EV_SUMMONED,     /* POST of a summon: target = the new minion (listener ON_SUMMON_FRIENDLY) */
    EV_BUFF,         /* target, n = attack, arg = health, card = source card */
    EV_GIVE,         /* target, arg = keyword bit index */
    EV_SILENCE,      /* target */
    EV_TRANSFORM,    /* target, arg = token */
    EV_KILL_WEAPON,  /* seat */
    EV_EQUIP,        /* seat, arg = weapon card */
    EV_OVERLOAD,     /* seat, n */
    EV_GAIN_MANA,    /* seat, n */
    EV_ARMOR,        /* seat, n */
    EV_IMMUNE,       /* seat */
    EV_DEATHRATTLE,  /* seat, card = the dead minion's, src = its eid, slot = the surviving
                        minions left of it, n = its board index before the death phase */
};

#define SLOT_END 255
#define SLOT_RIGHT_OF_SRC 254

typedef struct cd_event {
    uint8_t type;
    uint8_t seat;   /* the controller of the effect */
    uint8_t arg;
    uint8_t slot;
    uint8_t card;   /* the card the effect comes from */
    uint8_t pad;
    int16_t n;
    uint16_t src;    /* eid of the source character, 0 for none */
    uint16_t target; /* eid of the target character */
} cd_event;

typedef struct cd_ctx {
    cd_state *st;
    mg_rng *rng;
    int head, tail;
    /* The deathrattle summons placed in the current death phase, per seat: their sources'
     * board indexes before the phase (a later one counts those that stood left of it). */
    uint8_t ndr[2];
    uint8_t dr_from[2][CD_BOARD_MAX];
    cd_event q[QCAP];
} cd_ctx;

/* ---- Looking things up -------------------------------------------------------------------- */

int cd_find(const cd_state *st, uint16_t eid, cd_ref *out)
{
    if (eid == 1 || eid == 2) {
        out->seat = eid - 1;
        out->slot = CD_HERO_SLOT;
        return 1;
    }
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < st->p[s].nboard; i++)
            if (st->p[s].board[i].eid == eid) {
                out->seat = s;
                out->slot = i;
                return 1;
            }
    return 0;
}

int cd_eid_of(const cd_state *st, cd_ref r)
{
    return r.slot == CD_HERO_SLOT ? CD_HERO_EID(r.seat) : st->p[r.seat].board[r.slot].eid;
}

int cd_has_kw(const cd_minion *m, int kw) { return ((m->kw | m->ekw) & kw) != 0; }

static int has_trigger(int card, int trig) { return (cd_info(card)->triggers >> trig) & 1; }

static int alive(const cd_state *st, cd_ref r)
{
    return r.slot == CD_HERO_SLOT ? st->p[r.seat].hp > 0 : st->p[r.seat].board[r.slot].hp > 0;
}

/* ---- Targets (spec §6.3-6.4) ------------------------------------------------------------- */

/* Spells, battlecries and powers: anything on the board but an enemy stealthed minion
 * (immune characters may be chosen: v1.2). */
int cd_spell_target_ok(const cd_state *st, int actor, cd_ref t)
{
    if (t.seat < 0 || t.seat > 1)
        return 0;
    if (t.slot == CD_HERO_SLOT)
        return 1;
    if (t.slot < 0 || t.slot >= st->p[t.seat].nboard)
        return 0;
    return t.seat == actor || !cd_has_kw(&st->p[t.seat].board[t.slot], CD_KW_STEALTH);
}

static int attackable(const cd_state *st, cd_ref t)
{
    const cd_player *p = &st->p[t.seat];
    if (t.slot == CD_HERO_SLOT)
        return !p->immune;
    return !cd_has_kw(&p->board[t.slot], CD_KW_STEALTH);
}

static int taunt_up(const cd_state *st, int seat)
{
    for (int i = 0; i < st->p[seat].nboard; i++) {
        const cd_minion *m = &st->p[seat].board[i];
        if (cd_has_kw(m, CD_KW_TAUNT) && !cd_has_kw(m, CD_KW_STEALTH))
            return 1;
    }
    return 0;
}

int cd_attack_target_ok(const cd_state *st, int attacker_seat, cd_ref t)
{
    if (t.seat != (attacker_seat ^ 1))
        return 0;
    if (t.slot != CD_HERO_SLOT && (t.slot < 0 || t.slot >= st->p[t.seat].nboard))
        return 0;
    if (!attackable(st, t))
        return 0;
    if (taunt_up(st, t.seat))
        return t.slot != CD_HERO_SLOT && cd_has_kw(&st->p[t.seat].board[t.slot], CD_KW_TAUNT);
    return 1;
}

/* Spec §6.2 plus at least one legal target (the traces' `can_attack`). */
int cd_can_attack(const cd_state *st, int seat, int slot)
{
    const cd_player *p = &st->p[seat];
    if (slot == CD_HERO_SLOT) {
        int windfury = p->weapon && (cd_info(p->weapon)->kw & CD_KW_WINDFURY);
        if (p->weapon_atk <= 0 || p->frozen || p->attacks_used >= (windfury ? 2 : 1))
            return 0;
    } else {
        if (slot < 0 || slot >= p->nboard)
            return 0;
        const cd_minion *m = &p->board[slot];
        if (m->atk <= 0 || m->frozen || m->attacks_used >= (cd_has_kw(m, CD_KW_WINDFURY) ? 2 : 1))
            return 0;
        if (m->fresh && !cd_has_kw(m, CD_KW_CHARGE))
            return 0;
    }
    cd_ref t = {seat ^ 1, CD_HERO_SLOT};
    if (cd_attack_target_ok(st, seat, t))
        return 1;
    for (t.slot = 0; t.slot < st->p[seat ^ 1].nboard; t.slot++)
        if (cd_attack_target_ok(st, seat, t))
            return 1;
    return 0;
}

/* The ops a card resolves when played now: its COMBO ops if it has them and a card was
 * played before it this turn, else its BC/SP ops. Returns the trigger to run. */
static int play_trigger(const cd_state *st, int seat, int card)
{
    if (st->p[seat].cards_played >= 1 && has_trigger(card, CD_TR_COMBO))
        return CD_TR_COMBO;
    return cd_info(card)->type == CD_TYPE_SP ? CD_TR_SP : CD_TR_BC;
}

static int chosen_selector(int sel)
{
    return sel == CD_S_ANY_CHAR || sel == CD_S_ANY_MINION || sel == CD_S_ENEMY_MINION ||
           sel == CD_S_FRIENDLY_MINION;
}

/* Whether the card, played now by `seat`, takes a chosen target: 1 (and *sel), or 0. */
int cd_card_needs_target(const cd_state *st, int seat, int card, int *sel)
{
    const cd_card *c = cd_info(card);
    int trig = play_trigger(st, seat, card);
    for (int i = 0; i < c->nops; i++) {
        const cd_op *op = &CD_OPS[c->first_op + i];
        if (op->trig == trig && chosen_selector(op->sel)) {
            *sel = op->sel;
            return 1;
        }
    }
    return 0;
}

/* Whether any character is a legal choice for `sel`. */
static int any_target(const cd_state *st, int seat, int sel)
{
    for (int s = 0; s < 2; s++) {
        cd_ref t = {s, CD_HERO_SLOT};
        if (cd_selector_allows(st, seat, sel, t))
            return 1;
        for (t.slot = 0; t.slot < st->p[s].nboard; t.slot++)
            if (cd_selector_allows(st, seat, sel, t))
                return 1;
    }
    return 0;
}

static int summons(int card)
{
    const cd_card *c = cd_info(card);
    for (int i = 0; i < c->nops; i++)
        if (CD_OPS[c->first_op + i].eff == CD_E_SUMMON)
            return 1;
    return 0;
}

/* Whether the card in hand slot h may be played now, apart from its target. */
int cd_play_ok(const cd_state *st, int seat, int h)
{
    const cd_player *p = &st->p[seat];
    int card = p->hand[h];
    const cd_card *c = cd_info(card);
    if (c->cost > p->mana)
        return 0;
    switch (c->type) {
    case CD_TYPE_MI:
        return p->nboard < CD_BOARD_MAX;
    case CD_TYPE_SE:
        if (p->nsecrets >= CD_SECRETS_MAX)
            return 0;
        for (int i = 0; i < p->nsecrets; i++)
            if (p->secrets[i] == card)
                return 0;
        return 1;
    case CD_TYPE_SP: {
        int sel;
        if (summons(card) && p->nboard >= CD_BOARD_MAX)
            return 0; /* REAL: Mirror Image, Feral Spirit */
        if (cd_card_needs_target(st, seat, card, &sel))
            return any_target(st, seat, sel);
        return 1;
    }
    default:
        return 1;
    }
}

/* ---- The queue ------------------------------------------------------------------------------ */

static void push(cd_ctx *c, cd_event e)
{
    if (c->tail - c->head >= QCAP)
        return; /* cannot happen with this pool (spec §10); dropping beats overrunning */
    if (c->tail == QCAP) { /* slide the live part to the front */
        memmove(c->q, c->q + c->head, (size_t)(c->tail - c->head) * sizeof *c->q);
        c->tail -= c->head;
        c->head = 0;
    }
    c->q[c->tail++] = e;
}

static cd_event ev(int type, int seat, uint16_t src, uint16_t target, int n, int arg, int card)
{
    cd_event e;
    memset(&e, 0, sizeof e);
    e.type = (uint8_t)type;
    e.seat = (uint8_t)seat;
    e.src = src;
    e.target = target;
    e.n = (int16_t)n;
    e.arg = (uint8_t)arg;
    e.card = (uint8_t)card;
    e.slot = SLOT_END;
    return e;
}

/* Characters of a set selector in canonical order (spec §5.6): the active player's hero
 * and minions left to right, then the opponent's. `seat` is the effect's controller. */
static int set_members(const cd_state *st, int seat, int sel, uint16_t self, uint16_t *out)
{
    int n = 0;
    for (int k = 0; k < 2; k++) {
        int s = st->current ^ k;
        int mine = s == seat;
        int heroes = 0, minions = 0;
        switch (sel) {
        case CD_S_ALL_ENEMY_MINIONS: minions = !mine; break;
        case CD_S_ALL_MINIONS: minions = 1; break;
        case CD_S_ALL_ENEMIES: heroes = minions = !mine; break;
        case CD_S_ALL_CHARS: case CD_S_ALL_OTHER_CHARS: heroes = minions = 1; break;
        case CD_S_ALL_FRIENDLY_CHARS: heroes = minions = mine; break;
        case CD_S_OTHER_FRIENDLY: minions = mine; break;
        default: break;
        }
        if (heroes)
            out[n++] = CD_HERO_EID(s);
        if (minions)
            for (int i = 0; i < st->p[s].nboard; i++)
                if (!((sel == CD_S_ALL_OTHER_CHARS || sel == CD_S_OTHER_FRIENDLY) &&
                      st->p[s].board[i].eid == self))
                    out[n++] = st->p[s].board[i].eid;
    }
    return n;
}

/* Queue the events of one op. `chosen` is the eid of the chosen target (0 for none),
 * `self` the source minion's eid, `dr` the deathrattle being resolved (NULL for none). */
static void emit(cd_ctx *c, const cd_op *op, int seat, int card, uint16_t self, uint16_t chosen,
                 const cd_event *dr)
{
    cd_state *st = c->st;
    uint16_t targets[2 * (CD_BOARD_MAX + 1)];
    int nt = 0;
    switch (op->sel) {
    case CD_S_NONE: break;
    case CD_S_ANY_CHAR: case CD_S_ANY_MINION: case CD_S_ENEMY_MINION: case CD_S_FRIENDLY_MINION:
    case CD_S_SAME:
        if (chosen)
            targets[nt++] = chosen;
        break;
    case CD_S_SELF: targets[nt++] = self; break;
    case CD_S_MY_HERO: targets[nt++] = CD_HERO_EID(seat); break;
    case CD_S_ENEMY_HERO: targets[nt++] = CD_HERO_EID(seat ^ 1); break;
    default: nt = set_members(st, seat, op->sel, self, targets); break;
    }
    switch (op->eff) {
    case CD_E_DMG:
        for (int i = 0; i < nt; i++)
            push(c, ev(EV_DAMAGE, seat, self, targets[i], op->n, 0, card));
        break;
    case CD_E_HEAL:
        for (int i = 0; i < nt; i++)
            push(c, ev(EV_HEAL, seat, self, targets[i], op->n, 0, card));
        break;
    case CD_E_SPLIT:
        for (int i = 0; i < op->n; i++)
            push(c, ev(EV_HIT, seat, self, 0, 1, op->sel, card));
        break;
    case CD_E_FREEZE:
        for (int i = 0; i < nt; i++)
            push(c, ev(EV_FREEZE, seat, self, targets[i], 0, 0, card));
        break;
    case CD_E_DRAW:
        for (int i = 0; i < op->n; i++)
            push(c, ev(EV_DRAW, seat, self, 0, 0, 0, card));
        break;
    case CD_E_OPP_DRAW:
        for (int i = 0; i < op->n; i++)
            push(c, ev(EV_DRAW, seat ^ 1, self, 0, 0, 0, card));
        break;
    case CD_E_SUMMON:
        for (int i = 0; i < op->n; i++) {
            cd_event e = ev(EV_SUMMON, seat, self, 0, 0, op->arg, card);
            /* REAL placement (spec §3.1): a deathrattle's summon takes its source's slot among
             * the survivors, a minion in play summons to its right, anything else at the
             * right end. */
            if (dr) {
                e.slot = dr->slot;
                e.n = dr->n;
            } else if (self > 2 && (op->trig == CD_TR_BC || op->trig == CD_TR_COMBO))
                e.slot = SLOT_RIGHT_OF_SRC;
            push(c, e);
        }
        break;
    case CD_E_BUFF:
        for (int i = 0; i < nt; i++)
            push(c, ev(EV_BUFF, seat, self, targets[i], op->n, op->arg, card));
        break;
    case CD_E_GIVE:
        for (int i = 0; i < nt; i++)
            push(c, ev(EV_GIVE, seat, self, targets[i], 0, op->arg, card));
        break;
    case CD_E_SILENCE:
        for (int i = 0; i < nt; i++)
            push(c, ev(EV_SILENCE, seat, self, targets[i], 0, 0, card));
        break;
    case CD_E_TRANSFORM:
        for (int i = 0; i < nt; i++)
            push(c, ev(EV_TRANSFORM, seat, self, targets[i], 0, op->arg, card));
        break;
    case CD_E_DESTROY_WEAPON: push(c, ev(EV_KILL_WEAPON, seat ^ 1, self, 0, 0, 0, card)); break;
    case CD_E_EQUIP: push(c, ev(EV_EQUIP, seat, self, 0, 0, op->arg, card)); break;
    case CD_E_OVERLOAD: push(c, ev(EV_OVERLOAD, seat, self, 0, op->n, 0, card)); break;
    case CD_E_GAIN_MANA: push(c, ev(EV_GAIN_MANA, seat, self, 0, op->n, 0, card)); break;
    case CD_E_ARMOR: push(c, ev(EV_ARMOR, seat, self, 0, op->n, 0, card)); break;
    case CD_E_IMMUNE_TURN: push(c, ev(EV_IMMUNE, seat, self, 0, 0, 0, card)); break;
    default: break; /* SET_ATK is not in the pool; CANCEL, RETARGET and SELF_FREEZE_TARGET
                       are handled where their events are */
    }
}

/* Queue every op of `card` with trigger `trig`. */
static void emit_trigger(cd_ctx *c, int card, int trig, int seat, uint16_t self, uint16_t chosen,
                         const cd_event *dr)
{
    const cd_card *k = cd_info(card);
    for (int i = 0; i < k->nops; i++) {
        const cd_op *op = &CD_OPS[k->first_op + i];
        if (op->trig == trig)
            emit(c, op, seat, card, self, chosen, dr);
    }
}

/* ---- Derived stats: auras and enrage (spec §6.1) ------------------------------------------ */

static void ench_remove_enrage(cd_minion *m)
{
    for (int i = 0; i < m->nench; i++)
        if (m->ench[i].kind == 2) {
            memmove(&m->ench[i], &m->ench[i + 1], (size_t)(m->nench - i - 1) * sizeof m->ench[0]);
            m->nench--;
            memset(&m->ench[m->nench], 0, sizeof m->ench[0]); /* equal states, equal bytes */
            return;
        }
}

static void ench_add(cd_minion *m, int src, int kind, int atk, int hp)
{
    if (m->nench == CD_ENCH_MAX) { /* keep the totals; only the list's detail is lost */
        m->ench[CD_ENCH_MAX - 1].atk = (int8_t)(m->ench[CD_ENCH_MAX - 1].atk + atk);
        m->ench[CD_ENCH_MAX - 1].hp = (int8_t)(m->ench[CD_ENCH_MAX - 1].hp + hp);
        return;
    }
    cd_ench *e = &m->ench[m->nench++];
    e->src = (uint8_t)src;
    e->kind = (uint8_t)kind;
    e->atk = (int8_t)atk;
    e->hp = (int8_t)hp;
}

static int enraged(const cd_minion *m)
{
    for (int i = 0; i < m->nench; i++)
        if (m->ench[i].kind == 2)
            return 1;
    return 0;
}

static void stats(cd_minion *m)
{
    const cd_card *k = cd_info(m->card);
    int atk = k->atk + m->aura_atk, hp = k->hp + m->aura_hp;
    for (int i = 0; i < m->nench; i++) {
        atk += m->ench[i].atk;
        hp += m->ench[i].hp;
    }
    m->atk = (int16_t)(atk < 0 ? 0 : atk);
    m->max_hp = (int16_t)hp;
}

/* An active enrage is an enchantment of kind 2 holding the enrage's BUFF, appended when the
 * minion becomes damaged and removed when it is whole again (the traces list it so); the
 * keywords it gives (Raging Worgen's Windfury) are in ekw while it is active. */
static void update_enrage(cd_minion *m)
{
    const cd_card *k = cd_info(m->card);
    int want = !m->silenced && m->hp < m->max_hp && has_trigger(m->card, CD_TR_ENRAGE);
    m->ekw = (uint8_t)(want ? k->enrage_kw : 0);
    if (want == enraged(m))
        return;
    if (want)
        ench_add(m, m->card, 2, k->enrage_atk, k->enrage_hp);
    else
        ench_remove_enrage(m);
}

/* What one minion's aura gives each other friendly minion (0, 0 for most). */
static void aura_given(const cd_minion *o, int *atk, int *hp)
{
    const cd_card *k = cd_info(o->card);
    *atk = o->silenced ? 0 : k->aura_atk;
    *hp = o->silenced ? 0 : k->aura_hp;
}

/* What the friendly auras give board[i]: every aura on its side but its own. One pass
 * over the side, then a subtraction, keeps a refresh linear in the board. */
static void aura_of(const cd_player *p, int i, int *atk, int *hp)
{
    int ta = 0, th = 0, a, h;
    for (int j = 0; j < p->nboard; j++) {
        aura_given(&p->board[j], &a, &h);
        ta += a;
        th += h;
    }
    aura_given(&p->board[i], &a, &h);
    *atk = ta - a;
    *hp = th - h;
}

/* Recompute auras, enrage, attack and maximum health. Losing a health aura lowers health
 * to the new maximum but never below 1 by itself; gaining one raises health too. */
static void refresh(cd_state *st)
{
    for (int s = 0; s < 2; s++) {
        cd_player *p = &st->p[s];
        int busy = 0;
        for (int j = 0; j < p->nboard; j++)
            busy |= CD_DERIVED[p->board[j].card] | p->board[j].aura_atk | p->board[j].aura_hp;
        if (!busy)
            continue; /* no aura given or held, no enrage on this side: nothing derived can change */
        int ta = 0, th = 0, a, h;
        for (int j = 0; j < p->nboard; j++) {
            aura_given(&p->board[j], &a, &h);
            ta += a;
            th += h;
        }
        for (int i = 0; i < p->nboard; i++) {
            cd_minion *m = &p->board[i];
            aura_given(m, &a, &h);
            int aa = ta - a, ah = th - h;
            if (aa == m->aura_atk && ah == m->aura_hp && !has_trigger(m->card, CD_TR_ENRAGE))
                continue; /* nothing derived changed: buffs and silences update stats themselves */
            int dh = ah - m->aura_hp;
            m->aura_atk = (int8_t)aa;
            m->aura_hp = (int8_t)ah;
            stats(m);
            if (dh > 0) {
                m->hp = (int16_t)(m->hp + dh);
            } else if (dh < 0 && m->hp > m->max_hp) {
                m->hp = m->max_hp;
            }
            update_enrage(m);
            stats(m);
        }
    }
}

/* A state built by hand states current health with its auras counted: take the auras as
 * they are, then derive the rest. */
void cd_refresh(cd_state *st)
{
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < st->p[s].nboard; i++) {
            int aa, ah;
            aura_of(&st->p[s], i, &aa, &ah);
            st->p[s].board[i].aura_atk = (int8_t)aa;
            st->p[s].board[i].aura_hp = (int8_t)ah;
            stats(&st->p[s].board[i]);
            update_enrage(&st->p[s].board[i]);
            stats(&st->p[s].board[i]);
        }
    refresh(st);
}

/* ---- Applying events -------------------------------------------------------------------- */

static void reveal(cd_player *p, int card)
{
    if (p->revealed[card] < 255)
        p->revealed[card]++;
}

static void remove_secret(cd_player *p, int i)
{
    reveal(p, p->secrets[i]);
    for (int j = i; j + 1 < p->nsecrets; j++) {
        p->secrets[j] = p->secrets[j + 1];
        p->secret_eid[j] = p->secret_eid[j + 1];
    }
    p->nsecrets--;
    p->secrets[p->nsecrets] = 0;
    p->secret_eid[p->nsecrets] = 0;
}

/* The index of `seat`'s secret with this event that may trigger now (on the opponent's
 * turn only), or -1. */
static int secret_for(const cd_state *st, int seat, int event)
{
    if (st->current == seat)
        return -1;
    const cd_player *p = &st->p[seat];
    for (int i = 0; i < p->nsecrets; i++) {
        const cd_card *k = cd_info(p->secrets[i]);
        if (k->nops && CD_OPS[k->first_op].secret == event)
            return i;
    }
    return -1;
}

static void damage(cd_ctx *c, const cd_event *e)
{
    cd_state *st = c->st;
    cd_ref r;
    if (e->n <= 0 || !cd_find(st, e->target, &r))
        return;
    if (r.slot == CD_HERO_SLOT) {
        cd_player *p = &st->p[r.seat];
        if (p->immune)
            return;
        int ib = secret_for(st, r.seat, CD_SEC_PRE_FATAL_DAMAGE_MY_HERO);
        if (ib >= 0 && e->n >= p->hp + p->armor) { /* Ice Block */
            remove_secret(p, ib);
            p->immune = 1;
            return;
        }
        int absorbed = e->n < p->armor ? e->n : p->armor;
        p->armor = (int16_t)(p->armor - absorbed);
        p->hp = (int16_t)(p->hp - (e->n - absorbed));
    } else {
        cd_minion *m = &st->p[r.seat].board[r.slot];
        if (m->kw & CD_KW_DS) {
            m->kw &= (uint8_t)~CD_KW_DS;
            return;
        }
        m->hp = (int16_t)(m->hp - e->n);
    }
    cd_event post = *e;
    post.type = EV_DAMAGED;
    push(c, post);
}

/* Listeners of a damage, in ascending eid: the damaged minion's ON_DAMAGED, the source
 * minion's ON_DEALT_DAMAGE (Water Elemental freezes what it damaged). */
static void damaged(cd_ctx *c, const cd_event *e)
{
    cd_state *st = c->st;
    cd_ref t = {0, 0}, s = {0, 0};
    int have_t = cd_find(st, e->target, &t) && t.slot != CD_HERO_SLOT;
    int have_s = e->src > 2 && cd_find(st, e->src, &s) && s.slot != CD_HERO_SLOT;
    int target_first = !have_s || e->target < e->src;
    for (int step = 0; step < 2; step++) {
        int on_target = step == 0 ? target_first : !target_first;
        if (on_target && have_t) {
            const cd_minion *m = &st->p[t.seat].board[t.slot];
            if (!m->silenced)
                emit_trigger(c, m->card, CD_TR_ON_DAMAGED, t.seat, m->eid, 0, NULL);
        } else if (!on_target && have_s) {
            const cd_minion *m = &st->p[s.seat].board[s.slot];
            if (!m->silenced && has_trigger(m->card, CD_TR_ON_DEALT_DAMAGE))
                push(c, ev(EV_FREEZE, s.seat, m->eid, e->target, 0, 0, m->card));
        }
    }
}

static void random_hit(cd_ctx *c, const cd_event *e)
{
    cd_state *st = c->st;
    uint16_t cand[2 * (CD_BOARD_MAX + 1)];
    int n = 0;
    for (int k = 0; k < 2; k++) {
        int s = st->current ^ k;
        if (e->arg == CD_S_ENEMIES && s == e->seat)
            continue;
        if (st->p[s].hp > 0 && !(e->arg == CD_S_OTHERS && CD_HERO_EID(s) == e->src))
            cand[n++] = CD_HERO_EID(s);
        for (int i = 0; i < st->p[s].nboard; i++) {
            const cd_minion *m = &st->p[s].board[i];
            if (m->hp > 0 && m->eid != e->src)
                cand[n++] = m->eid;
        }
    }
    if (n == 0)
        return;
    uint16_t pick = cand[n > 1 ? mg_rng_below(c->rng, (uint32_t)n) : 0];
    cd_event d = ev(EV_DAMAGE, e->seat, e->src, pick, 1, 0, e->card);
    damage(c, &d);
}

static void draw(cd_ctx *c, int seat)
{
    cd_player *p = &c->st->p[seat];
    if (p->ndeck == 0) { /* fatigue: 1, 2, 3, ... */
        p->fatigue++;
        push(c, ev(EV_DAMAGE, seat, 0, CD_HERO_EID(seat), p->fatigue, 0, 0));
        return;
    }
    int card = p->deck[0];
    memmove(p->deck, p->deck + 1, (size_t)(p->ndeck - 1));
    p->deck[--p->ndeck] = 0;
    if (p->nhand >= CD_HAND_MAX) {
        reveal(p, card); /* burned, shown to both */
        return;
    }
    p->hand[p->nhand++] = (uint8_t)card;
}

static void minion_init(cd_state *st, cd_minion *m, int card)
{
    const cd_card *k = cd_info(card);
    memset(m, 0, sizeof *m);
    m->eid = st->next_eid++;
    m->card = (uint8_t)card;
    m->kw = k->kw;
    m->hp = m->max_hp = k->hp;
    m->atk = k->atk;
    m->fresh = 1;
}

/* Put a new minion at `slot` (clamped to the board) and queue its POST event. */
static int place(cd_ctx *c, int seat, int card, int slot)
{
    cd_player *p = &c->st->p[seat];
    if (p->nboard >= CD_BOARD_MAX)
        return 0; /* summons beyond 7 minions fail silently */
    if (slot > p->nboard)
        slot = p->nboard;
    memmove(&p->board[slot + 1], &p->board[slot], (size_t)(p->nboard - slot) * sizeof p->board[0]);
    p->nboard++;
    minion_init(c->st, &p->board[slot], card);
    refresh(c->st);
    return p->board[slot].eid;
}

static void summon(cd_ctx *c, const cd_event *e)
{
    int slot = e->slot, seat = e->seat;
    int from_dr = slot < SLOT_RIGHT_OF_SRC;
    cd_ref s;
    if (slot == SLOT_RIGHT_OF_SRC)
        slot = cd_find(c->st, e->src, &s) && s.seat == seat ? s.slot + 1 : SLOT_END;
    if (from_dr) /* a deathrattle's: its source's place among the survivors (spec §3.1), right
                    of the summons of this death phase whose sources stood left of it */
        for (int i = 0; i < c->ndr[seat]; i++)
            slot += c->dr_from[seat][i] <= e->n;
    int eid = place(c, seat, e->arg, slot);
    if (!eid)
        return;
    if (from_dr && c->ndr[seat] < CD_BOARD_MAX)
        c->dr_from[seat][c->ndr[seat]++] = (uint8_t)e->n;
    push(c, ev(EV_SUMMONED, seat, 0, (uint16_t)eid, 0, 0, e->arg));
}

/* Knife Juggler: after its controller summons another minion (ascending eid). */
static void summoned(cd_ctx *c, const cd_event *e)
{
    const cd_player *p = &c->st->p[e->seat];
    uint16_t order[CD_BOARD_MAX];
    int n = 0;
    for (int i = 0; i < p->nboard; i++) {
        const cd_minion *m = &p->board[i];
        if (m->eid != e->target && !m->silenced && has_trigger(m->card, CD_TR_ON_SUMMON_FRIENDLY)) {
            int j = n++;
            while (j > 0 && order[j - 1] > m->eid) {
                order[j] = order[j - 1];
                j--;
            }
            order[j] = m->eid;
        }
    }
    for (int i = 0; i < n; i++) {
        cd_ref r;
        if (cd_find(c->st, order[i], &r)) {
            const cd_minion *m = &c->st->p[r.seat].board[r.slot];
            emit_trigger(c, m->card, CD_TR_ON_SUMMON_FRIENDLY, r.seat, m->eid, 0, NULL);
        }
    }
}

static void silence(cd_state *st, cd_minion *m)
{
    (void)st;
    memset(m->ench, 0, sizeof m->ench);
    m->nench = 0;
    m->kw = 0;
    m->ekw = 0;
    m->frozen = 0;
    m->silenced = 1;
    stats(m);
    if (m->hp > m->max_hp)
        m->hp = m->max_hp;
}

static void destroy_weapon(cd_player *p)
{
    p->weapon = 0;
    p->weapon_atk = 0;
    p->weapon_dur = 0;
    p->weapon_eid = 0;
}

static void equip(cd_state *st, cd_player *p, int card)
{
    destroy_weapon(p); /* no weapon of the pool has a deathrattle */
    p->weapon = (uint8_t)card;
    p->weapon_atk = (int8_t)cd_info(card)->atk;
    p->weapon_dur = (int8_t)cd_info(card)->hp;
    p->weapon_eid = st->next_eid++;
}

/* Reverse q[i..j). */
static void reverse(cd_event *q, int i, int j)
{
    for (j--; i < j; i++, j--) {
        cd_event t = q[i];
        q[i] = q[j];
        q[j] = t;
    }
}

/* A deathrattle's turn in the queue (spec §5.7): its effects are chosen now, so a minion
 * summoned by an earlier deathrattle of the death phase can be hit, and they resolve before
 * the later deathrattles (they take its place at the front of the queue); what they cause
 * in turn (POST listeners) goes to the back as usual. */
static void deathrattle(cd_ctx *c, const cd_event *e)
{
    int before = c->tail - c->head;
    emit_trigger(c, e->card, CD_TR_DR, e->seat, e->src, 0, e);
    int added = c->tail - c->head - before;
    if (added > 0 && before > 0) { /* rotate the new events to the front */
        reverse(c->q, c->head, c->tail - added);
        reverse(c->q, c->tail - added, c->tail);
        reverse(c->q, c->head, c->tail);
    }
}

static void apply_event(cd_ctx *c, const cd_event *e)
{
    cd_state *st = c->st;
    cd_ref r;
    switch (e->type) {
    case EV_DAMAGE: damage(c, e); break;
    case EV_DAMAGED: damaged(c, e); break;
    case EV_HIT: random_hit(c, e); break;
    case EV_HEAL:
        if (cd_find(st, e->target, &r)) {
            if (r.slot == CD_HERO_SLOT) {
                cd_player *p = &st->p[r.seat];
                p->hp = (int16_t)(p->hp + e->n > CD_HERO_HP ? CD_HERO_HP : p->hp + e->n);
            } else {
                cd_minion *m = &st->p[r.seat].board[r.slot];
                m->hp = (int16_t)(m->hp + e->n > m->max_hp ? m->max_hp : m->hp + e->n);
            }
        }
        break;
    case EV_FREEZE:
        if (cd_find(st, e->target, &r)) {
            if (r.slot == CD_HERO_SLOT)
                st->p[r.seat].frozen = 1;
            else
                st->p[r.seat].board[r.slot].frozen = 1;
        }
        break;
    case EV_DRAW: draw(c, e->seat); break;
    case EV_SUMMON: summon(c, e); break;
    case EV_SUMMONED: summoned(c, e); break;
    case EV_BUFF:
        if (cd_find(st, e->target, &r) && r.slot != CD_HERO_SLOT) {
            cd_minion *m = &st->p[r.seat].board[r.slot];
            ench_add(m, e->card, 1, e->n, e->arg);
            m->hp = (int16_t)(m->hp + e->arg);
            stats(m);
        }
        break;
    case EV_GIVE:
        if (cd_find(st, e->target, &r) && r.slot != CD_HERO_SLOT)
            st->p[r.seat].board[r.slot].kw |= (uint8_t)(1u << e->arg);
        break;
    case EV_SILENCE:
        if (cd_find(st, e->target, &r) && r.slot != CD_HERO_SLOT)
            silence(st, &st->p[r.seat].board[r.slot]);
        break;
    case EV_TRANSFORM:
        if (cd_find(st, e->target, &r) && r.slot != CD_HERO_SLOT)
            minion_init(st, &st->p[r.seat].board[r.slot], e->arg); /* not a summon: no POST */
        break;
    case EV_KILL_WEAPON: destroy_weapon(&st->p[e->seat]); break;
    case EV_EQUIP: equip(st, &st->p[e->seat], e->arg); break;
    case EV_OVERLOAD: {
        cd_player *p = &st->p[e->seat];
        p->overload_pending = (uint8_t)(p->overload_pending + e->n);
        break;
    }
    case EV_GAIN_MANA: {
        cd_player *p = &st->p[e->seat];
        int m = p->mana + e->n;
        p->mana = (uint8_t)(m > CD_MANA_MAX ? (p->mana > CD_MANA_MAX ? p->mana : CD_MANA_MAX) : m);
        break;
    }
    case EV_ARMOR: st->p[e->seat].armor = (int16_t)(st->p[e->seat].armor + e->n); break;
    case EV_IMMUNE: st->p[e->seat].immune = 1; break;
    case EV_DEATHRATTLE: deathrattle(c, e); break;
    default: break;
    }
}

/* ---- The death phase and the end of the game (spec §5.7) --------------------------------- */

static int hero_dead(const cd_state *st) { return st->p[0].hp <= 0 || st->p[1].hp <= 0; }

static void game_over(cd_state *st)
{
    int d0 = st->p[0].hp <= 0, d1 = st->p[1].hp <= 0;
    st->terminal = 1;
    st->winner = (int8_t)(d0 && d1 ? -1 : d0 ? 1 : 0);
}

/* Remove the dead all at once (spec §5.7), then queue their deathrattles in ascending eid,
 * each remembering its source's slot among the survivors; returns whether anything died. */
static int death_phase(cd_ctx *c)
{
    cd_state *st = c->st;
    int any = 0;
    for (int s = 0; s < 2; s++) {
        cd_player *p = &st->p[s];
        if (p->weapon && p->weapon_dur <= 0) {
            destroy_weapon(p);
            any = 1;
        }
    }
    cd_event dr[2 * CD_BOARD_MAX];
    int ndr = 0;
    for (int s = 0; s < 2; s++) {
        cd_player *p = &st->p[s];
        int n = p->nboard, i = 0;
        while (i < n && p->board[i].hp > 0)
            i++;
        if (i == n)
            continue; /* nobody died on this side */
        int kept = i;
        for (; i < n; i++) {
            cd_minion *m = &p->board[i];
            if (m->hp > 0) {
                p->board[kept++] = *m;
                continue;
            }
            if (!m->silenced && has_trigger(m->card, CD_TR_DR)) { /* ascending eid: insertion */
                cd_event e = ev(EV_DEATHRATTLE, s, m->eid, 0, i, 0, m->card);
                e.slot = (uint8_t)kept;
                int j = ndr++;
                while (j > 0 && dr[j - 1].src > e.src) {
                    dr[j] = dr[j - 1];
                    j--;
                }
                dr[j] = e;
            }
        }
        memset(&p->board[kept], 0, (size_t)(n - kept) * sizeof p->board[0]);
        p->nboard = (uint8_t)kept;
        any = 1;
    }
    if (any) {
        c->ndr[0] = c->ndr[1] = 0;
        for (int i = 0; i < ndr; i++)
            push(c, dr[i]);
    }
    refresh(st);
    return any;
}

/* Whether an event can change what refresh() derives (health for enrage, minions and their
 * silence for auras). The others only push events (POST listeners) or touch heroes, hands,
 * weapons and mana; skipping refresh() after them is a third of the time of an action. */
static int changes_board(int type)
{
    switch (type) {
    case EV_DRAW: case EV_SUMMONED: case EV_DAMAGED: case EV_FREEZE: case EV_GIVE:
    case EV_KILL_WEAPON: case EV_EQUIP: case EV_OVERLOAD: case EV_GAIN_MANA: case EV_ARMOR:
    case EV_IMMUNE: case EV_DEATHRATTLE:
        return 0;
    default:
        return 1;
    }
}

/* Run the queue dry, with death phases, until nothing more happens or a hero dies. */
static void resolve(cd_ctx *c)
{
    refresh(c->st); /* what the action did before its first event */
    for (;;) {
        while (c->head < c->tail && !c->st->terminal) {
            cd_event e = c->q[c->head++];
            apply_event(c, &e);
            if (changes_board(e.type))
                refresh(c->st);
        }
        if (c->st->terminal)
            break;
        int died = death_phase(c);
        if (hero_dead(c->st)) {
            game_over(c->st); /* the game stops: what is still queued is dropped */
            break;
        }
        if (!died && c->head == c->tail)
            break;
    }
    c->head = c->tail = 0;
}

/* ---- Actions -------------------------------------------------------------------------------- */

static uint16_t target_eid(const cd_state *st, int code)
{
    if (code == 0)
        return 0;
    cd_ref r = {(code - 1) / 8, (code - 1) % 8};
    return (uint16_t)cd_eid_of(st, r);
}

static void play(cd_ctx *c, int h, int tcode)
{
    cd_state *st = c->st;
    int seat = st->current;
    cd_player *p = &st->p[seat];
    int card = p->hand[h];
    const cd_card *k = cd_info(card);
    uint16_t chosen = target_eid(st, tcode);
    int trig = play_trigger(st, seat, card);
    p->mana = (uint8_t)(p->mana - k->cost);
    p->cards_played++; /* after the combo check (play_trigger) */
    memmove(&p->hand[h], &p->hand[h + 1], (size_t)(p->nhand - h - 1));
    p->hand[--p->nhand] = 0;
    if (k->type != CD_TYPE_SE)
        reveal(p, card);
    if (k->type == CD_TYPE_SP || k->type == CD_TYPE_SE) {
        int cs = secret_for(st, seat ^ 1, CD_SEC_PRE_CAST_SPELL_OPP);
        if (cs >= 0) { /* Counterspell: the mana is spent and the card is gone */
            if (k->type == CD_TYPE_SE)
                reveal(p, card);
            remove_secret(&st->p[seat ^ 1], cs);
            return;
        }
        if (k->type == CD_TYPE_SE) {
            p->secrets[p->nsecrets] = (uint8_t)card;
            p->secret_eid[p->nsecrets++] = st->next_eid++;
            return;
        }
        emit_trigger(c, card, trig, seat, 0, chosen, NULL);
        resolve(c);
        return;
    }
    if (k->type == CD_TYPE_WE) {
        equip(st, p, card);
        emit_trigger(c, card, trig, seat, 0, chosen, NULL);
        resolve(c);
        return;
    }
    /* A played minion goes to the right end; its POST waits for the battlecry's own
     * sub-queue and death phase (REAL, spec §5.3). */
    int eid = place(c, seat, card, CD_BOARD_MAX);
    emit_trigger(c, card, trig, seat, (uint16_t)eid, chosen, NULL);
    resolve(c);
    if (st->terminal)
        return;
    push(c, ev(EV_SUMMONED, seat, 0, (uint16_t)eid, 0, 0, card));
    resolve(c);
}

static void power(cd_ctx *c, int tcode)
{
    cd_state *st = c->st;
    int seat = st->current;
    cd_player *p = &st->p[seat];
    p->mana = (uint8_t)(p->mana - CD_POWER_COST);
    p->power_used = 1;
    if (p->hero_class == CD_MAGE) /* Fireblast: deal 1 damage */
        push(c, ev(EV_DAMAGE, seat, CD_HERO_EID(seat), target_eid(st, tcode), 1, 0, 0));
    else /* Reinforce: summon a 1/1 Silver Hand Recruit at the right end */
        push(c, ev(EV_SUMMON, seat, CD_HERO_EID(seat), 0, 0, CD_T_RECRUIT, 0));
    resolve(c);
}

/* The PRE ATTACK triggers (spec §6.3), in play order (eid): the defender's Noble Sacrifice
 * (when its board has room) and the attacking hero's Truesilver Champion. Each resolves
 * completely. Returns the attack's target after a possible retarget. */
static uint16_t before_attack(cd_ctx *c, int seat, int from_hero, uint16_t target)
{
    cd_state *st = c->st;
    cd_player *def = &st->p[seat ^ 1], *att = &st->p[seat];
    int ns = secret_for(st, seat ^ 1, CD_SEC_PRE_ATTACK_OPP);
    if (ns >= 0 && def->nboard >= CD_BOARD_MAX)
        ns = -1; /* REAL: with a full board the secret waits */
    int ts = from_hero && att->weapon && has_trigger(att->weapon, CD_TR_ON_HERO_ATTACK);
    int ns_first = ns >= 0 && (!ts || def->secret_eid[ns] < att->weapon_eid);
    for (int step = 0; step < 2 && !st->terminal; step++) {
        int noble = step == 0 ? ns_first : !ns_first;
        if (noble && ns >= 0) {
            ns = secret_for(st, seat ^ 1, CD_SEC_PRE_ATTACK_OPP);
            if (ns < 0 || def->nboard >= CD_BOARD_MAX)
                continue;
            remove_secret(def, ns);
            int eid = place(c, seat ^ 1, CD_T_DEFENDER, CD_BOARD_MAX);
            push(c, ev(EV_SUMMONED, seat ^ 1, 0, (uint16_t)eid, 0, 0, CD_T_DEFENDER));
            resolve(c);
            cd_ref r;
            if (cd_find(st, (uint16_t)eid, &r))
                target = (uint16_t)eid; /* RETARGET(NEW) */
        } else if (!noble && ts && att->weapon) {
            emit_trigger(c, att->weapon, CD_TR_ON_HERO_ATTACK, seat, 0, 0, NULL);
            resolve(c);
        }
    }
    return target;
}

static void attack(cd_ctx *c, int src, int tcode)
{
    cd_state *st = c->st;
    int seat = st->current;
    int from_hero = src == CD_HERO_SLOT;
    uint16_t a_eid = from_hero ? CD_HERO_EID(seat) : st->p[seat].board[src].eid;
    uint16_t t_eid = before_attack(c, seat, from_hero, target_eid(st, tcode));
    cd_ref a, t;
    if (st->terminal || !cd_find(st, a_eid, &a) || !alive(st, a) || !cd_find(st, t_eid, &t))
        return; /* the attacker died before combat: the attack is cancelled */
    cd_player *p = &st->p[seat];
    int atk;
    if (from_hero) {
        atk = p->weapon_atk;
        p->attacks_used++;
    } else {
        cd_minion *m = &p->board[a.slot];
        m->kw &= (uint8_t)~CD_KW_STEALTH;
        m->attacks_used++;
        atk = m->atk;
    }
    push(c, ev(EV_DAMAGE, seat, a_eid, t_eid, atk, 0, 0));
    if (t.slot != CD_HERO_SLOT) /* heroes never strike back */
        push(c, ev(EV_DAMAGE, seat ^ 1, t_eid, a_eid, st->p[t.seat].board[t.slot].atk, 0, 0));
    if (from_hero && p->weapon)
        p->weapon_dur--;
    resolve(c);
}

/* Thaw at the end of its controller's turn (spec §6.6): a frozen character thaws iff it
 * did not attack this turn and is not a minion that arrived this turn without Charge. */
static void thaw(cd_player *p)
{
    if (p->frozen && p->attacks_used == 0)
        p->frozen = 0;
    for (int i = 0; i < p->nboard; i++) {
        cd_minion *m = &p->board[i];
        if (m->frozen && m->attacks_used == 0 && !(m->fresh && !cd_has_kw(m, CD_KW_CHARGE)))
            m->frozen = 0;
    }
}

/* Start of a ply (spec §5.2): counters, mana and overload, resets, the draw. */
void cd_start_turn(cd_state *st, mg_rng *rng)
{
    cd_player *p = &st->p[st->current];
    st->ply++;
    if (p->max_mana < CD_MANA_MAX)
        p->max_mana++;
    p->overload_locked = p->overload_pending;
    p->overload_pending = 0;
    p->mana = (uint8_t)(p->max_mana > p->overload_locked ? p->max_mana - p->overload_locked : 0);
    p->power_used = 0;
    p->cards_played = 0;
    p->attacks_used = 0;
    for (int i = 0; i < p->nboard; i++) {
        p->board[i].attacks_used = 0;
        p->board[i].fresh = 0;
    }
    cd_ctx c;
    c.st = st;
    c.rng = rng;
    c.head = c.tail = 0;
    c.ndr[0] = c.ndr[1] = 0;
    push(&c, ev(EV_DRAW, st->current, 0, 0, 0, 0, 0));
    resolve(&c);
}

static void end_turn(cd_state *st, mg_rng *rng)
{
    cd_player *p = &st->p[st->current];
    st->p[0].immune = st->p[1].immune = 0; /* Ice Block lasts the current turn */
    thaw(p);
    if (st->ply >= st->ply_limit) { /* spec §1: a tie after the last ply */
        st->terminal = 1;
        st->winner = -1;
        st->capped = 1;
        return;
    }
    st->current ^= 1;
    cd_start_turn(st, rng);
}

/* Apply a legal action (the caller checked it). */
void cd_do_action(cd_state *st, mg_action a, mg_rng *rng)
{
    cd_ctx c;
    c.st = st;
    c.rng = rng;
    c.head = c.tail = 0;
    c.ndr[0] = c.ndr[1] = 0;
    switch (CD_A_TYPE(a)) {
    case CD_A_END_TURN: end_turn(st, rng); break;
    case CD_A_PLAY: play(&c, CD_A_SRC(a), CD_A_TARGET(a)); break;
    case CD_A_ATTACK: attack(&c, CD_A_SRC(a), CD_A_TARGET(a)); break;
    case CD_A_POWER: power(&c, CD_A_TARGET(a)); break;
    default: break;
    }
}
