/* random_bot.c: a complete maag bot in C, written from docs/protocol.md alone. It speaks the
 * JSON-lines framing over a stream socket, asks the referee for the legal actions, and plays
 * a random one each time it is asked, so it knows no game's rules and plays any registered
 * game.
 *
 *   cc -O2 -Wall -Wextra -o random_bot random_bot.c -lcjson      (Debian: libcjson-dev)
 *   ./random_bot [ADDRESS TOKEN [GAMES] [GAME]]
 *
 * ADDRESS: HOST:PORT ([V6]:PORT, or :PORT for 127.0.0.1), unix:PATH (a Unix socket) or fd:N
 * (an already connected socket inherited as file descriptor N, as a sandboxed bot gets its
 * referee connection). ADDRESS and TOKEN left out, or given as "-", are read from
 * $MAAG_CONNECT and $MAAG_TOKEN. GAMES: leave after that many games (the hello says so, so
 * the referee pairs it no more); GAME: the game it offers to play (default $MAAG_GAME, else
 * heroes). Exit status 0 when it has played its games or the referee closed the connection,
 * 1 on an error the referee called fatal or a connection that could not be made, 2 on a bad
 * command line.
 *
 * It speaks protocol version 2 and hears the opponent's actions once its turn ends, in one
 * turn_events message (hello "events": "turn"), unless $MAAG_EVENTS is "action" (each
 * action as it is applied, one event each); either way on_action sees each action once, in
 * order. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define MAX_LINE (1 << 20) /* above the referee's largest frame (welcome.max_frame) */

typedef struct conn {
    int fd;
    char *buf; /* received bytes not yet returned as lines */
    size_t len;
} conn;

/* fd:N: the inherited socket N, if it is an open stream socket. */
static int adopt(const char *address, const char *num)
{
    char *end;
    errno = 0;
    long n = strtol(num, &end, 10);
    if (*num < '0' || *num > '9' || *end != '\0' || errno != 0 || n > INT_MAX) {
        fprintf(stderr, "c-random: fd:N needs a file descriptor number N >= 0, not %s\n", address);
        return -1;
    }
    int type = 0;
    socklen_t len = sizeof type;
    if (getsockopt((int)n, SOL_SOCKET, SO_TYPE, &type, &len) != 0) {
        fprintf(stderr, "c-random: %s is not an open socket: %s\n", address, strerror(errno));
        return -1;
    }
    if (type != SOCK_STREAM) {
        fprintf(stderr, "c-random: %s is not a stream socket\n", address);
        return -1;
    }
    return (int)n;
}

/* unix:PATH: a connection to the Unix stream socket at PATH. */
static int dial_unix(const char *address, const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof sa.sun_path) {
        fprintf(stderr, "c-random: unix:PATH needs a path of 1 to %zu bytes, not %s\n",
                sizeof sa.sun_path - 1, address);
        return -1;
    }
    memcpy(sa.sun_path, path, n + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        fprintf(stderr, "c-random: cannot connect to %s: %s\n", address, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* HOST:PORT, [V6]:PORT or :PORT (127.0.0.1) over TCP. */
static int dial_tcp(const char *address)
{
    char host[256];
    const char *colon = strrchr(address, ':');
    size_t n = colon ? (size_t)(colon - address) : 0;
    if (!colon || n >= sizeof host || colon[1] == '\0') {
        fprintf(stderr, "c-random: the address must be HOST:PORT, unix:PATH or fd:N, not %s\n", address);
        return -1;
    }
    if (n >= 2 && address[0] == '[' && address[n - 1] == ']') { /* [v6]:PORT */
        memcpy(host, address + 1, n - 2);
        host[n - 2] = '\0';
    } else if (n == 0) {
        strcpy(host, "127.0.0.1");
    } else {
        memcpy(host, address, n);
        host[n] = '\0';
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res, *ai;
    int rc = getaddrinfo(host, colon + 1, &hints, &res);
    if (rc != 0) {
        fprintf(stderr, "c-random: %s: %s\n", address, gai_strerror(rc));
        return -1;
    }
    int fd = -1;
    for (ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
        if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0)
        fprintf(stderr, "c-random: cannot connect to %s\n", address);
    return fd;
}

/* A connected stream socket for ADDRESS (see the top of this file), or -1. */
static int dial(const char *address)
{
    if (strncmp(address, "fd:", 3) == 0)
        return adopt(address, address + 3);
    if (strncmp(address, "unix:", 5) == 0)
        return dial_unix(address, address + 5);
    return dial_tcp(address);
}

/* An argument, or the environment variable when it is missing or "-". */
static const char *arg_or_env(int argc, char **argv, int i, const char *var)
{
    const char *v = i < argc ? argv[i] : NULL;
    if (!v || strcmp(v, "-") == 0)
        v = getenv(var);
    return v && *v ? v : NULL;
}

static int send_all(conn *c, const char *data, size_t n)
{
    while (n > 0) {
        ssize_t k = send(c->fd, data, n, MSG_NOSIGNAL);
        if (k <= 0)
            return -1;
        data += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Send a message as one line (JSON-lines framing: one object per line), in one write: a
 * separate write of the newline would wait for the peer's delayed ACK (Nagle), ~40 ms. */
static int send_msg(conn *c, cJSON *msg)
{
    char *text = cJSON_PrintUnformatted(msg);
    size_t n = text ? strlen(text) : 0;
    char *line = text ? realloc(text, n + 2) : NULL;
    if (!line) {
        free(text);
        return -1;
    }
    line[n] = '\n';
    line[n + 1] = '\0';
    int rc = send_all(c, line, n + 1);
    free(line);
    return rc;
}

/* The next line without its newline (the caller frees it), or NULL at the end. */
static char *read_line(conn *c)
{
    for (;;) {
        char *nl = memchr(c->buf, '\n', c->len);
        if (nl) {
            size_t n = (size_t)(nl - c->buf);
            char *line = malloc(n + 1);
            if (!line)
                return NULL;
            memcpy(line, c->buf, n);
            line[n] = '\0';
            memmove(c->buf, nl + 1, c->len - n - 1);
            c->len -= n + 1;
            return line;
        }
        if (c->len == MAX_LINE)
            return NULL;
        ssize_t k = recv(c->fd, c->buf + c->len, MAX_LINE - c->len, 0);
        if (k <= 0)
            return NULL;
        c->len += (size_t)k;
    }
}

static const char *str_of(const cJSON *msg, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(msg, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* For printing: the string, or "?". */
static const char *txt(const cJSON *msg, const char *key)
{
    const char *s = str_of(msg, key);
    return s ? s : "?";
}

/* One action of the other seat, as this seat may see it (from an event of kind "action" or
 * from a turn_events' list): a bot that tracks the game would update its model here. This
 * one only counts them. */
static long actions_seen;

static void on_action(const char *game_id, int seat, const cJSON *action)
{
    (void)game_id;
    (void)seat;
    if (cJSON_IsObject(action))
        actions_seen++;
}

/* event or turn_events: each action of the other seat to on_action. */
static void heard(const cJSON *msg, int many)
{
    const cJSON *seat = cJSON_GetObjectItemCaseSensitive(msg, "seat");
    int who = cJSON_IsNumber(seat) ? seat->valueint : 0;
    if (!many) {
        const char *kind = str_of(msg, "kind");
        if (kind && strcmp(kind, "action") == 0)
            on_action(str_of(msg, "game_id"), who, cJSON_GetObjectItemCaseSensitive(msg, "action"));
        return;
    }
    const cJSON *action;
    cJSON_ArrayForEach(action, cJSON_GetObjectItemCaseSensitive(msg, "actions"))
        on_action(str_of(msg, "game_id"), who, action);
}

/* your_turn: answer with one random legal action. */
static int play(conn *c, const cJSON *msg)
{
    const cJSON *legal = cJSON_GetObjectItemCaseSensitive(msg, "legal");
    int n = cJSON_GetArraySize(legal);
    if (n == 0) {
        fprintf(stderr, "c-random: your_turn without legal actions\n");
        return -1;
    }
    cJSON *act = cJSON_CreateObject();
    cJSON_AddStringToObject(act, "type", "act");
    cJSON_AddNumberToObject(act, "v", 2);
    cJSON_AddStringToObject(act, "game_id", str_of(msg, "game_id"));
    cJSON_AddItemToObject(act, "action", cJSON_Duplicate(cJSON_GetArrayItem(legal, rand() % n), 1));
    int rc = send_msg(c, act);
    cJSON_Delete(act);
    return rc;
}

int main(int argc, char **argv)
{
    const char *address = arg_or_env(argc, argv, 1, "MAAG_CONNECT");
    const char *token = arg_or_env(argc, argv, 2, "MAAG_TOKEN");
    if (!address || !token) {
        fprintf(stderr, "usage: %s [ADDRESS TOKEN [GAMES] [GAME]]\n"
                        "  ADDRESS: HOST:PORT, unix:PATH or fd:N (default $MAAG_CONNECT)\n"
                        "  TOKEN: the bot's token (default $MAAG_TOKEN)\n", argv[0]);
        return 2;
    }
    int want = argc > 3 ? atoi(argv[3]) : 0;
    const char *game = argc > 4 ? argv[4] : getenv("MAAG_GAME");
    if (!game || !*game)
        game = "heroes";
    srand((unsigned)time(NULL) ^ (unsigned)getpid());
    conn c = {.fd = dial(address), .buf = malloc(MAX_LINE), .len = 0};
    if (c.fd < 0 || !c.buf) {
        free(c.buf);
        return 1;
    }

    cJSON *hello = cJSON_CreateObject();
    cJSON_AddStringToObject(hello, "type", "hello");
    cJSON_AddNumberToObject(hello, "v", 2);
    cJSON_AddStringToObject(hello, "name", "c-random");
    cJSON_AddStringToObject(hello, "token", token);
    cJSON *games = cJSON_AddArrayToObject(hello, "games");
    cJSON_AddItemToArray(games, cJSON_CreateString(game));
    cJSON_AddBoolToObject(hello, "want_legal", 1);
    if (want > 0)
        cJSON_AddNumberToObject(hello, "max_games", want);
    const char *events = getenv("MAAG_EVENTS");
    cJSON_AddStringToObject(hello, "events", events && strcmp(events, "action") == 0 ? "action" : "turn");
    int rc = send_all(&c, "MAAG 2 json\n", 12) == 0 ? send_msg(&c, hello) : -1;
    cJSON_Delete(hello);

    int played = 0, decided = 0, status = 0;
    char *line;
    while (rc == 0 && (want == 0 || played < want) && (line = read_line(&c)) != NULL) {
        cJSON *msg = cJSON_Parse(line);
        free(line);
        const char *type = str_of(msg, "type");
        if (!type) {
            fprintf(stderr, "c-random: the referee sent a line that is not a message\n");
            rc = -1;
        } else if (strcmp(type, "your_turn") == 0) {
            rc = play(&c, msg);
        } else if (strcmp(type, "game_start") == 0) {
            const cJSON *seat = cJSON_GetObjectItemCaseSensitive(msg, "seat");
            printf("c-random: game %s as seat %d\n", txt(msg, "game_id"),
                   cJSON_IsNumber(seat) ? seat->valueint : 0);
        } else if (strcmp(type, "event") == 0 || strcmp(type, "turn_events") == 0) {
            heard(msg, type[0] == 't');
        } else if (strcmp(type, "result") == 0 && str_of(msg, "error")) {
            fprintf(stderr, "c-random: refused: %s\n", txt(msg, "message"));
        } else if (strcmp(type, "game_over") == 0) {
            played++;
            const cJSON *winner = cJSON_GetObjectItemCaseSensitive(msg, "winner");
            decided += cJSON_IsNumber(winner); /* null: a draw */
            printf("c-random: game %s over: winner %d (%s)\n", txt(msg, "game_id"),
                   cJSON_IsNumber(winner) ? winner->valueint : 0, txt(msg, "reason"));
        } else if (strcmp(type, "error") == 0) {
            fprintf(stderr, "c-random: error %s: %s\n", txt(msg, "code"), txt(msg, "message"));
            if (!str_of(msg, "game_id"))
                status = 1; /* about the connection: the referee closes it */
        }
        cJSON_Delete(msg);
    }
    printf("c-random: %d games, %d decided, %ld actions of the opponent seen\n", played, decided,
           actions_seen);
    close(c.fd);
    free(c.buf);
    return rc == 0 ? status : 1;
}
