/* mg_wire.c: the table of action codes' msgpack bytes behind mg_legal_msgpack (mg_wire.h).
 *
 * Open addressing on the code (a power-of-two slot array, linear probing, never shrinks)
 * over one growing arena of bytes: a lookup is a multiply, a mask and a compare, and the
 * bytes of a legal list are copied from the arena in order. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mg_game.h"
#include "mg_wire.h"

typedef struct {
    uint32_t code;
    uint32_t len;   /* 0: an empty slot (every action's map has at least one byte) */
    size_t off;     /* into arena */
} cb_slot;

struct mg_codebytes {
    cb_slot *slots;
    size_t mask;    /* slots - 1 */
    size_t used;
    uint8_t *arena;
    size_t arena_len, arena_cap;
};

/* Fibonacci hashing: the product's high half, whose bits each depend on every bit of the
 * code. (Its low bits, which the mask keeps, depend only on the code's low bits: heroes'
 * codes differ mostly above bit 8, and a table of them averaged 44 probes a lookup.) */
static size_t cb_hash(uint32_t code) { return (size_t)(((uint64_t)code * 0x9E3779B97F4A7C15ull) >> 32); }

mg_codebytes *mg_codebytes_new(void) {
    mg_codebytes *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->slots = calloc(256, sizeof *t->slots);
    if (!t->slots) {
        free(t);
        return NULL;
    }
    t->mask = 255;
    return t;
}

void mg_codebytes_free(mg_codebytes *t) {
    if (!t) return;
    free(t->slots);
    free(t->arena);
    free(t);
}

mg_codebytes *mg_codebytes_clone(const mg_codebytes *t) {
    mg_codebytes *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->slots = malloc((t->mask + 1) * sizeof *c->slots);
    c->arena = t->arena_len ? malloc(t->arena_len) : NULL;
    if (!c->slots || (t->arena_len && !c->arena)) {
        mg_codebytes_free(c);
        return NULL;
    }
    memcpy(c->slots, t->slots, (t->mask + 1) * sizeof *c->slots);
    if (t->arena_len) memcpy(c->arena, t->arena, t->arena_len);
    c->mask = t->mask;
    c->used = t->used;
    c->arena_len = c->arena_cap = t->arena_len;
    return c;
}

static const cb_slot *cb_find(const mg_codebytes *t, uint32_t code) {
    for (size_t i = cb_hash(code) & t->mask;; i = (i + 1) & t->mask) {
        const cb_slot *s = &t->slots[i];
        if (s->len == 0) return NULL;
        if (s->code == code) return s;
    }
}

static int cb_grow_slots(mg_codebytes *t) {
    size_t n = (t->mask + 1) * 2;
    cb_slot *slots = calloc(n, sizeof *slots);
    if (!slots) return -1;
    for (size_t i = 0; i <= t->mask; i++) {
        cb_slot s = t->slots[i];
        if (s.len == 0) continue;
        size_t j = cb_hash(s.code) & (n - 1);
        while (slots[j].len != 0) j = (j + 1) & (n - 1);
        slots[j] = s;
    }
    free(t->slots);
    t->slots = slots;
    t->mask = n - 1;
    return 0;
}

int mg_codebytes_put(mg_codebytes *t, uint32_t code, const uint8_t *bytes, size_t n) {
    if (n == 0 || n > 0xffffffffu) return -1;
    if (cb_find(t, code)) return 0;
    if ((t->used + 1) * 2 > t->mask + 1 && cb_grow_slots(t) != 0) return -1; /* load <= 1/2 */
    if (t->arena_len + n > t->arena_cap) {
        size_t cap = t->arena_cap ? t->arena_cap : 4096;
        while (cap < t->arena_len + n) cap *= 2;
        uint8_t *a = realloc(t->arena, cap);
        if (!a) return -1;
        t->arena = a;
        t->arena_cap = cap;
    }
    memcpy(t->arena + t->arena_len, bytes, n);
    size_t i = cb_hash(code) & t->mask;
    while (t->slots[i].len != 0) i = (i + 1) & t->mask;
    t->slots[i].code = code;
    t->slots[i].len = (uint32_t)n;
    t->slots[i].off = t->arena_len;
    t->arena_len += n;
    t->used++;
    return 0;
}

int mg_legal_msgpack(const struct mg_game_vt *vt, const void *st, const mg_codebytes *t, mg_wire *out,
                     uint32_t *missing, int *n_missing) {
    mg_action codes[MG_MAX_ACTIONS];
    int n = vt->legal(st, codes);
    int k = 0;
    mg_wire w = *out; /* (a copy no byte written can alias: its fields stay in registers) */
    mw_array(&w, (uint32_t)n);
    for (int i = 0; i < n; i++) {
        const cb_slot *s = cb_find(t, codes[i]);
        if (s) mw_raw(&w, t->arena + s->off, s->len);
        else missing[k++] = codes[i];
    }
    *out = w;
    *n_missing = k;
    return n;
}

int mg_prompt_msgpack(const struct mg_game_vt *vt, const void *st, int seat, void *scratch,
                      const char *const *names, const uint8_t *head, size_t head_len, const uint8_t *mid,
                      size_t mid_len, const uint8_t *tail, size_t tail_len, const mg_codebytes *t,
                      mg_wire *w, uint32_t *missing, int *n_missing) {
    static const uint8_t no_length[4] = {0, 0, 0, 0};
    w->len = 0;
    mw_raw(w, no_length, 4);
    if (head_len) mw_raw(w, head, head_len); /* (memcpy from NULL is undefined, even of 0 bytes) */
    vt->observe(st, seat, scratch);
    vt->write_msgpack(scratch, names, w);
    if (mid_len) mw_raw(w, mid, mid_len);
    *n_missing = 0;
    if (t) mg_legal_msgpack(vt, st, t, w, missing, n_missing);
    if (tail_len) mw_raw(w, tail, tail_len);
    size_t body = w->len - 4;
    if (w->len > w->cap || body > 0xffffffffu || w->len > (size_t)INT_MAX || *n_missing) return -1;
    for (int i = 0; i < 4; i++) w->buf[i] = (uint8_t)(body >> (8 * (3 - i)));
    return (int)w->len;
}
