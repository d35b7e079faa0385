/* mg_wire.h: a msgpack writer for the games' `write_msgpack` entry (mg_game.h), header only,
 * and the table of action codes' packed maps behind mg_legal_msgpack (src/mg_wire.c).
 *
 * A game's `write_msgpack` is the only writer of its states' JSON form: the referee sends its
 * bytes as they are, and State.to_json decodes them (issue 57: no second writer in Python).
 * The bytes must be the ones msgpack-python's packb(obj, use_bin_type=True) makes of the
 * decoded form (the suite checks it for every game), so every value takes its smallest
 * form, as packb chooses it: fixint / uint8..64 / int8..64, fixstr / str8..32,
 * fixmap / map16 / map32, fixarray / array16 / array32, float64.
 *
 * The writer never fails: past `cap` it only counts, so a caller whose buffer was too small
 * sees len > cap, grows the buffer to len and writes again. */
#ifndef MG_WIRE_H
#define MG_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The writers below are inlined into every caller, whatever the compiler's own guess: a
 * string literal's length and a constant's form are then worked out at compile time (no
 * strlen, no call per key; heroes' your_turn: about a third fewer instructions). */
#if defined(__GNUC__)
#define MW_INLINE(type) static inline __attribute__((always_inline)) type
#else
#define MW_INLINE(type) static inline type
#endif

typedef struct mg_wire {
    uint8_t *buf; /* caller-owned, cap bytes */
    size_t cap;
    size_t len;   /* bytes the value needs so far (may exceed cap) */
} mg_wire;

MW_INLINE(void) mw_raw(mg_wire *w, const void *p, size_t n) {
    if (w->len + n <= w->cap) memcpy(w->buf + w->len, p, n);
    w->len += n;
}

MW_INLINE(void) mw_byte(mg_wire *w, uint8_t b) {
    if (w->len < w->cap) w->buf[w->len] = b;
    w->len++;
}

/* A marker byte then v in n big-endian bytes. */
MW_INLINE(void) mw_be(mg_wire *w, uint8_t marker, uint64_t v, int n) {
    uint8_t b[9];
    b[0] = marker;
    for (int i = 0; i < n; i++) b[1 + i] = (uint8_t)(v >> (8 * (n - 1 - i)));
    mw_raw(w, b, (size_t)n + 1);
}

MW_INLINE(void) mw_nil(mg_wire *w) { mw_byte(w, 0xc0); }
MW_INLINE(void) mw_bool(mg_wire *w, int v) { mw_byte(w, v ? 0xc3 : 0xc2); }

MW_INLINE(void) mw_int(mg_wire *w, int64_t v) {
    if (v >= 0) {
        uint64_t u = (uint64_t)v;
        if (u < 128) mw_byte(w, (uint8_t)u);
        else if (u <= 0xff) mw_be(w, 0xcc, u, 1);
        else if (u <= 0xffff) mw_be(w, 0xcd, u, 2);
        else if (u <= 0xffffffffu) mw_be(w, 0xce, u, 4);
        else mw_be(w, 0xcf, u, 8);
    } else if (v >= -32) {
        mw_byte(w, (uint8_t)(0xe0 | (uint8_t)(v + 32)));
    } else if (v >= -128) {
        mw_be(w, 0xd0, (uint64_t)v, 1);
    } else if (v >= -32768) {
        mw_be(w, 0xd1, (uint64_t)v, 2);
    } else if (v >= -2147483647LL - 1) {
        mw_be(w, 0xd2, (uint64_t)v, 4);
    } else {
        mw_be(w, 0xd3, (uint64_t)v, 8);
    }
}

MW_INLINE(void) mw_double(mg_wire *w, double d) {
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    mw_be(w, 0xcb, u, 8);
}

/* A header of n entries: small | n below 16, else the 16- or 32-bit form at b16, b16 + 1. */
MW_INLINE(void) mw_header(mg_wire *w, uint32_t n, uint8_t small, uint8_t b16) {
    if (n < 16) mw_byte(w, (uint8_t)(small | n));
    else if (n <= 0xffff) mw_be(w, b16, n, 2);
    else mw_be(w, (uint8_t)(b16 + 1), n, 4);
}

MW_INLINE(void) mw_map(mg_wire *w, uint32_t n) { mw_header(w, n, 0x80, 0xde); }
MW_INLINE(void) mw_array(mg_wire *w, uint32_t n) { mw_header(w, n, 0x90, 0xdc); }

MW_INLINE(void) mw_strn(mg_wire *w, const char *s, size_t n) {
    if (n < 32) mw_byte(w, (uint8_t)(0xa0 | n));
    else if (n <= 0xff) mw_be(w, 0xd9, n, 1);
    else if (n <= 0xffff) mw_be(w, 0xda, n, 2);
    else mw_be(w, 0xdb, n, 4);
    mw_raw(w, s, n);
}

MW_INLINE(void) mw_str(mg_wire *w, const char *s) { mw_strn(w, s, strlen(s)); }

/* The decimal text of a small non-negative number as a string ("1", "2": JSON map keys). */
MW_INLINE(void) mw_numstr(mg_wire *w, int v) {
    char t[12];
    int n = 0;
    char r[12];
    if (v < 0) v = 0;
    do { r[n++] = (char)('0' + v % 10); v /= 10; } while (v > 0 && n < 11);
    for (int i = 0; i < n; i++) t[i] = r[n - 1 - i];
    mw_strn(w, t, (size_t)n);
}

/* ---- Legal lists as msgpack ------------------------------------------------------------
 * The referee sends a seat's legal actions as a msgpack array of the actions' maps. Each
 * map's bytes are made once, by the game's Python codec (Action.to_dict, packed), and kept
 * here by code; mg_legal_msgpack then writes a state's whole legal list in one call, as
 * msgpack-python's packb([maps...]) would. A table is owned by one thread at a time. */
typedef struct mg_codebytes mg_codebytes;
struct mg_game_vt; /* mg_game.h */

/* A new empty table (NULL if out of memory). */
mg_codebytes *mg_codebytes_new(void);
void mg_codebytes_free(mg_codebytes *t);
/* A copy of t (NULL if out of memory): a new owner starts with what t has learnt. */
mg_codebytes *mg_codebytes_clone(const mg_codebytes *t);
/* Remember code's bytes (copied). Returns 0, or -1 if out of memory (the table is unchanged). */
int mg_codebytes_put(mg_codebytes *t, uint32_t code, const uint8_t *bytes, size_t n);
/* Write the legal list of the game state st into w. The codes the
 * table does not hold yet are written to missing[] (room for MG_MAX_ACTIONS) and counted
 * in *n_missing; while it is not 0, w holds no valid list: put them, and call again.
 * Returns the number of legal actions. */
int mg_legal_msgpack(const struct mg_game_vt *vt, const void *st, const mg_codebytes *t, mg_wire *w,
                     uint32_t *missing, int *n_missing);
/* The referee's `your_turn` frame in one call (the game's write_msgpack is required),
 * written from the start of w (w->len is set to 0 first): the 4-byte big-endian length of
 * the rest, head, the observation of st for seat (observed into scratch, a state-sized
 * buffer, then written with names as write_msgpack's), mid, the legal list of st when t is
 * not NULL (as mg_legal_msgpack, missing codes likewise), tail. A part of length 0 may be
 * NULL. Returns the frame's length in w, or -1 when it is not whole there: codes missing
 * (*n_missing > 0: put them, and call again) or w too small (w->len > w->cap: the length
 * it needs; grow w, and call again). */
int mg_prompt_msgpack(const struct mg_game_vt *vt, const void *st, int seat, void *scratch,
                      const char *const *names, const uint8_t *head, size_t head_len, const uint8_t *mid,
                      size_t mid_len, const uint8_t *tail, size_t tail_len, const mg_codebytes *t,
                      mg_wire *w, uint32_t *missing, int *n_missing);

#endif
