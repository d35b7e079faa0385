/* bench_bot.c: the bots of `maag bench server --c-bots`, every connection of one client
 * process in one epoll loop, speaking the msgpack framing.
 *
 * Why C: on a 2-core machine Python bots take as much CPU per action as the referee they
 * load, so what a second referee process gains (issue 44: "two processes play at least 1.6
 * times the actions per second of one") cannot show; these bots spend about 15 µs per action,
 * nearly all of it the kernel's (a send that wakes the referee, a read or two). They do what the Python act bots do (server/bench/server.py _Bot): hello with
 * want_legal, one random legal action per your_turn sent back as an act, the counts and the
 * round trips of the measured window printed as JSON; and to stay cheap they never decode
 * the observation or the legal maps: a frame is walked once, the picked action's packed
 * bytes are copied into the act as they came.
 *
 *   cc -O2 -Wall -Wextra -o bench_bot bench_bot.c
 *   bench_bot PORT TOKENS_FILE WARMUP_S SECONDS_S
 *
 * TOKENS_FILE: one bot token per line. Prints "measuring" when the window opens (after every
 * bot is welcomed, or 60 s, then the warm-up), "stopped" when it closes, then one JSON line:
 * {"actions", "messages", "seconds", "rtt" (ms, one per answered act), "errors"}. Exit 1 on a
 * connection that cannot be made or a frame it cannot read. The round trips include the
 * loop's pauses (below), and a result read with a later your_turn (SO_RCVLOWAT, below) is
 * counted when it is read: the figures of record are the referee's, not these. */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_FRAME (1u << 20) /* above the referee's largest frame (welcome.max_frame) */
#define MAX_GAMES 8          /* games a bench bot plays at once (the referee gives it one) */
#define MAX_ID 64            /* game ids are short strings */
#define LOGIN_TIMEOUT_S 60.0
#define RCVLOWAT 512 /* bytes: below any your_turn with its legal list, above a few events */
#define BATCH 16        /* ready connections per wake-up below which the loop pauses... */
#define PAUSE_NS 500000 /* ...this long, when it has at least 8 * BATCH connections */

typedef struct {
    char id[MAX_ID];
    size_t len;
    double sent; /* when its last act was written; 0: none waiting */
} game_slot;

typedef struct {
    int fd;
    unsigned char *in; /* bytes read, not yet framed */
    size_t have;
    game_slot games[MAX_GAMES];
} bot;

static struct {
    int measuring;
    long actions, messages, errors, welcomed;
    double *rtt;
    size_t nrtt, rtt_cap;
    uint64_t rng;
} g = {.rng = 0x9E3779B97F4A7C15ull};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t next_random(void) /* xorshift64*: enough to pick among legal actions */
{
    g.rng ^= g.rng >> 12;
    g.rng ^= g.rng << 25;
    g.rng ^= g.rng >> 27;
    return g.rng * 2685821657736338717ull;
}

static void die(const char *what)
{
    fprintf(stderr, "bench_bot: %s: %s\n", what, errno ? strerror(errno) : "bad input");
    exit(1);
}

/* -- reading msgpack without decoding it ------------------------------------------------ */

typedef struct {
    const unsigned char *p, *end;
    int bad;
} reader;

static uint64_t be(reader *r, int n)
{
    if (r->end - r->p < n) {
        r->bad = 1;
        return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | r->p[i];
    r->p += n;
    return v;
}

static void skip_bytes(reader *r, uint64_t n)
{
    if ((uint64_t)(r->end - r->p) < n)
        r->bad = 1;
    else
        r->p += n;
}

/* The header of the next object: its kind ('m' map, 'a' array, 's' string, 'b' bin or ext,
 * 'i' integer, 'o' other scalar) and its count (entries, bytes, or the integer's value). */
static char header(reader *r, uint64_t *n)
{
    if (r->p >= r->end) {
        r->bad = 1;
        return 'o';
    }
    unsigned c = *r->p++;
    *n = 0;
    if (c <= 0x7f) { *n = c; return 'i'; }
    if (c >= 0xe0) return 'i';
    if ((c & 0xf0) == 0x80) { *n = c & 0x0f; return 'm'; }
    if ((c & 0xf0) == 0x90) { *n = c & 0x0f; return 'a'; }
    if ((c & 0xe0) == 0xa0) { *n = c & 0x1f; return 's'; }
    switch (c) {
    case 0xc0: case 0xc2: case 0xc3: return 'o';
    case 0xc4: *n = be(r, 1); return 'b';
    case 0xc5: *n = be(r, 2); return 'b';
    case 0xc6: *n = be(r, 4); return 'b';
    case 0xc7: *n = be(r, 1) + 1; return 'b';
    case 0xc8: *n = be(r, 2) + 1; return 'b';
    case 0xc9: *n = be(r, 4) + 1; return 'b';
    case 0xca: skip_bytes(r, 4); return 'o';
    case 0xcb: skip_bytes(r, 8); return 'o';
    case 0xcc: *n = be(r, 1); return 'i';
    case 0xcd: *n = be(r, 2); return 'i';
    case 0xce: *n = be(r, 4); return 'i';
    case 0xcf: *n = be(r, 8); return 'i';
    case 0xd0: skip_bytes(r, 1); return 'o';
    case 0xd1: skip_bytes(r, 2); return 'o';
    case 0xd2: skip_bytes(r, 4); return 'o';
    case 0xd3: skip_bytes(r, 8); return 'o';
    case 0xd4: skip_bytes(r, 2); return 'o';
    case 0xd5: skip_bytes(r, 3); return 'o';
    case 0xd6: skip_bytes(r, 5); return 'o';
    case 0xd7: skip_bytes(r, 9); return 'o';
    case 0xd8: skip_bytes(r, 17); return 'o';
    case 0xd9: *n = be(r, 1); return 's';
    case 0xda: *n = be(r, 2); return 's';
    case 0xdb: *n = be(r, 4); return 's';
    case 0xdc: *n = be(r, 2); return 'a';
    case 0xdd: *n = be(r, 4); return 'a';
    case 0xde: *n = be(r, 2); return 'm';
    case 0xdf: *n = be(r, 4); return 'm';
    default: r->bad = 1; return 'o'; /* 0xc1: never used */
    }
}

static void skip(reader *r, int depth)
{
    uint64_t n;
    char k = header(r, &n);
    if (depth > 64)
        r->bad = 1;
    if (r->bad)
        return;
    if (k == 's' || k == 'b')
        skip_bytes(r, n);
    else if (k == 'a' || k == 'm')
        for (uint64_t i = 0; i < (k == 'm' ? 2 * n : n) && !r->bad; i++)
            skip(r, depth + 1);
}

/* A string object: its bytes and length, or NULL. */
static const unsigned char *string(reader *r, uint64_t *n)
{
    const unsigned char *at;
    if (header(r, n) != 's' || r->bad || (uint64_t)(r->end - r->p) < *n) {
        r->bad = 1;
        return NULL;
    }
    at = r->p;
    r->p += *n;
    return at;
}

/* -- one message ------------------------------------------------------------------------- */

typedef struct {
    const unsigned char *type, *gid, *act; /* the picked legal action's packed bytes */
    uint64_t type_len, gid_len, accepted;
    size_t act_len;
} message;

static int key_is(const unsigned char *k, uint64_t n, const char *s)
{
    return n == strlen(s) && memcmp(k, s, n) == 0;
}

static int read_message(const unsigned char *frame, size_t len, message *m)
{
    reader r = {frame, frame + len, 0};
    uint64_t entries, n;
    memset(m, 0, sizeof *m);
    if (header(&r, &entries) != 'm')
        return -1;
    for (uint64_t i = 0; i < entries && !r.bad; i++) {
        const unsigned char *k = string(&r, &n);
        if (r.bad)
            break;
        if (key_is(k, n, "type")) {
            m->type = string(&r, &m->type_len);
        } else if (key_is(k, n, "game_id")) {
            m->gid = string(&r, &m->gid_len);
        } else if (key_is(k, n, "accepted")) {
            if (header(&r, &m->accepted) != 'i')
                r.bad = 1;
        } else if (key_is(k, n, "legal")) {
            uint64_t count;
            if (header(&r, &count) != 'a' || r.bad) {
                r.bad = 1;
                break;
            }
            uint64_t pick = count ? next_random() % count : 0;
            for (uint64_t j = 0; j < count && !r.bad; j++) {
                const unsigned char *at = r.p;
                skip(&r, 0);
                if (j == pick) {
                    m->act = at;
                    m->act_len = (size_t)(r.p - at);
                }
            }
        } else {
            skip(&r, 0);
        }
    }
    return r.bad || m->type == NULL ? -1 : 0;
}

/* -- writing ----------------------------------------------------------------------------- */

static void write_all(int fd, const unsigned char *p, size_t n)
{
    while (n > 0) { /* a few hundred bytes into an idle socket: blocking until written is fine */
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            die("write");
        p += w;
        n -= (size_t)w;
    }
}

static size_t put_str(unsigned char *o, const void *s, size_t n)
{
    size_t h;
    if (n < 32) { o[0] = (unsigned char)(0xa0 | n); h = 1; }
    else if (n < 256) { o[0] = 0xd9; o[1] = (unsigned char)n; h = 2; }
    else { o[0] = 0xda; o[1] = (unsigned char)(n >> 8); o[2] = (unsigned char)n; h = 3; }
    memcpy(o + h, s, n);
    return h + n;
}

/* A frame: the 4-byte big-endian length, then the body o[4..4+n). */
static void send_frame(int fd, unsigned char *o, size_t n)
{
    o[0] = (unsigned char)(n >> 24); o[1] = (unsigned char)(n >> 16);
    o[2] = (unsigned char)(n >> 8); o[3] = (unsigned char)n;
    write_all(fd, o, n + 4);
}

/* hello (protocol version 2): `events` "turn" (the opponent's actions in one turn_events
 * when its turn ends, the default) or "action" (one event per action, as applied). */
static void send_hello(int fd, const char *token, const char *events)
{
    static unsigned char o[4096];
    size_t n = 4, t = strlen(token);
    if (t > 1024)
        die("token too long");
    o[n++] = 0x87;
    n += put_str(o + n, "type", 4); n += put_str(o + n, "hello", 5);
    n += put_str(o + n, "v", 1); o[n++] = 2;
    n += put_str(o + n, "events", 6); n += put_str(o + n, events, strlen(events));
    n += put_str(o + n, "name", 4); n += put_str(o + n, "bench", 5);
    n += put_str(o + n, "token", 5); n += put_str(o + n, token, t);
    n += put_str(o + n, "games", 5); o[n++] = 0x91; n += put_str(o + n, "heroes", 6);
    n += put_str(o + n, "want_legal", 10); o[n++] = 0xc3;
    send_frame(fd, o, n - 4);
}

static game_slot *slot(bot *b, const unsigned char *gid, size_t len, int make)
{
    game_slot *free_slot = NULL;
    if (len >= MAX_ID)
        return NULL;
    for (int i = 0; i < MAX_GAMES; i++) {
        game_slot *s = &b->games[i];
        if (s->len == len && memcmp(s->id, gid, len) == 0 && len > 0)
            return s;
        if (s->len == 0 && free_slot == NULL)
            free_slot = s;
    }
    if (!make || free_slot == NULL)
        return NULL;
    memcpy(free_slot->id, gid, len);
    free_slot->len = len;
    free_slot->sent = 0;
    return free_slot;
}

static void on_message(bot *b, const message *m, double now)
{
    static unsigned char o[MAX_FRAME + 256];
    if (key_is(m->type, m->type_len, "your_turn")) {
        if (m->gid == NULL || m->act == NULL || m->act_len > MAX_FRAME)
            die("a your_turn without game_id or legal actions");
        game_slot *s = slot(b, m->gid, m->gid_len, 1);
        if (s && s->sent > 0 && g.measuring) {
            if (g.nrtt == g.rtt_cap) {
                g.rtt_cap = g.rtt_cap ? 2 * g.rtt_cap : 4096;
                if (!(g.rtt = realloc(g.rtt, g.rtt_cap * sizeof *g.rtt)))
                    die("memory");
            }
            g.rtt[g.nrtt++] = (now - s->sent) * 1000.0;
        }
        if (g.measuring)
            g.messages++;
        size_t n = 4;
        o[n++] = 0x84;
        n += put_str(o + n, "type", 4); n += put_str(o + n, "act", 3);
        n += put_str(o + n, "v", 1); o[n++] = 2;
        n += put_str(o + n, "game_id", 7); n += put_str(o + n, m->gid, m->gid_len);
        n += put_str(o + n, "action", 6);
        memcpy(o + n, m->act, m->act_len);
        n += m->act_len;
        send_frame(b->fd, o, n - 4);
        if (s)
            s->sent = now_s();
    } else if (key_is(m->type, m->type_len, "result")) {
        if (g.measuring)
            g.actions += (long)m->accepted;
    } else if (key_is(m->type, m->type_len, "welcome")) {
        g.welcomed++;
        /* From now on the socket wakes the loop only once it holds RCVLOWAT bytes, a
         * your_turn's worth: the opponent's events (tens of bytes, one write each) wait in the
         * socket and are read with the next your_turn, not one wake-up and read apiece. */
        int low = RCVLOWAT;
        setsockopt(b->fd, SOL_SOCKET, SO_RCVLOWAT, &low, sizeof low);
    } else if (key_is(m->type, m->type_len, "game_over")) {
        game_slot *s = m->gid ? slot(b, m->gid, m->gid_len, 0) : NULL;
        if (s)
            s->len = 0;
    } else if (key_is(m->type, m->type_len, "error")) {
        g.errors++;
    }
}

/* Reads what the socket has and acts on every whole frame; 0 when the peer closed. */
static int on_readable(bot *b)
{
    for (;;) {
        size_t room = MAX_FRAME + 4 - b->have;
        ssize_t r = recv(b->fd, b->in + b->have, room, MSG_DONTWAIT);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 1;
        if (r <= 0)
            return 0;
        b->have += (size_t)r;
        double now = now_s(); /* (per read: a reply can arrive while the last batch is handled) */
        size_t off = 0;
        while (b->have - off >= 4) {
            const unsigned char *h = b->in + off;
            size_t n = (size_t)h[0] << 24 | (size_t)h[1] << 16 | (size_t)h[2] << 8 | h[3];
            if (n > MAX_FRAME)
                die("a frame above the limit");
            if (b->have - off - 4 < n)
                break;
            message m;
            if (read_message(h + 4, n, &m) != 0)
                die("a frame that is not a msgpack message");
            on_message(b, &m, now);
            off += 4 + n;
        }
        memmove(b->in, b->in + off, b->have - off);
        b->have -= off;
        if ((size_t)r < room)
            return 1; /* drained (a recv to hear EAGAIN would cost a system call per message) */
    }
}

static int dial(int port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0)
        die("connect");
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

int main(int argc, char **argv)
{
    if (argc != 5 && argc != 6) {
        fprintf(stderr, "usage: bench_bot PORT TOKENS_FILE WARMUP_S SECONDS_S [turn|action]\n");
        return 2;
    }
    const char *events = argc == 6 && strcmp(argv[5], "action") == 0 ? "action" : "turn";
    int port = atoi(argv[1]);
    double warmup = atof(argv[3]), seconds = atof(argv[4]);
    FILE *f = fopen(argv[2], "r");
    if (!f)
        die(argv[2]);
    bot *bots = NULL;
    size_t nbots = 0;
    char line[2048];
    int ep = epoll_create1(0);
    if (ep < 0)
        die("epoll");
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (!line[0])
            continue;
        if (!(bots = realloc(bots, (nbots + 1) * sizeof *bots)))
            die("memory");
        bot *b = &bots[nbots++];
        memset(b, 0, sizeof *b);
        if (!(b->in = malloc(MAX_FRAME + 4)))
            die("memory");
        b->fd = dial(port);
        write_all(b->fd, (const unsigned char *)"MAAG 2 msgpack\n", 15);
        send_hello(b->fd, line, events);
    }
    fclose(f);
    for (size_t i = 0; i < nbots; i++) { /* (bots no longer moves: pointers are stable) */
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &bots[i]};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, bots[i].fd, &ev) != 0)
            die("epoll_ctl");
    }
    double start = now_s(), open_at = 0, close_at = 0, opened = 0;
    struct epoll_event evs[256];
    for (;;) {
        double now = now_s();
        if (open_at == 0 && ((size_t)g.welcomed >= nbots || now - start > LOGIN_TIMEOUT_S))
            open_at = now + warmup;
        if (open_at > 0 && !g.measuring && close_at == 0 && now >= open_at) {
            g.measuring = 1;
            opened = now;
            close_at = now + seconds;
            printf("measuring\n");
            fflush(stdout);
        }
        if (g.measuring && now >= close_at) {
            g.measuring = 0;
            printf("stopped\n");
            break;
        }
        int k = epoll_wait(ep, evs, 256, 10);
        if (k < 0 && errno != EINTR)
            die("epoll_wait");
        for (int i = 0; i < k; i++) {
            bot *b = evs[i].data.ptr;
            if (!on_readable(b)) {
                epoll_ctl(ep, EPOLL_CTL_DEL, b->fd, NULL);
            }
        }
        if (k < BATCH && nbots >= 8 * BATCH) {
            /* Many games in flight: let their replies gather for half a millisecond, so that
             * one wake-up reads many (a quarter less CPU per action than waking for each; the
             * games wait on the referees, not on this pause). */
            struct timespec pause = {0, PAUSE_NS};
            nanosleep(&pause, NULL);
        }
    }
    double elapsed = now_s() - opened;
    printf("{\"actions\": %ld, \"messages\": %ld, \"seconds\": %.6f, \"errors\": %ld, \"rtt\": [",
           g.actions, g.messages, elapsed, g.errors);
    for (size_t i = 0; i < g.nrtt; i++)
        printf(i ? ", %.4f" : "%.4f", g.rtt[i]);
    printf("]}\n");
    for (size_t i = 0; i < nbots; i++) {
        close(bots[i].fd);
        free(bots[i].in);
    }
    free(bots);
    free(g.rtt);
    close(ep);
    return 0;
}
