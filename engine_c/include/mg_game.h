/* mg_game.h: the generic game interface every maag game implements, status codes, actions. */
#ifndef MG_GAME_H
#define MG_GAME_H

#include <stddef.h>
#include <stdint.h>

#include "mg_rng.h"

struct mg_wire; /* mg_wire.h */

/* ---- Status codes (SQLite style) ------------------------------------------------------
 * MG_OK is 0. Primary codes say what broke; detail codes are primary | (n << 8), so
 * (code & 0xff) recovers the primary class. Codes may be added later; callers must
 * treat unknown detail codes by their primary class. mg_errstr() gives the text. */
#define MG_OK 0
#define MG_ERR_CONFIG 1   /* a configuration value is unknown or out of range */
#define MG_ERR_ILLEGAL 2  /* the action is not legal in this state (state unchanged) */
#define MG_ERR_TERMINAL 3 /* the game is over; no action is accepted */
#define MG_ERR_DECODE 4   /* the action code does not decode to any action of this game */
#define MG_ERR_STATE 5    /* an imported state is inconsistent */
#define MG_ERR_NOMEM 6    /* a search could not allocate its arena */

#define MG_ERR_LEN 160 /* size of caller-owned error buffers */

/* An action is a small integer whose layout each game defines (heroes: mg_heroes.h). */
typedef uint32_t mg_action;

/* Upper bound on the legal-action list of any game, for caller-owned buffers. */
#define MG_MAX_ACTIONS 1024

/* ---- The game interface -----------------------------------------------------------------
 * A const struct of function pointers. `version` comes first so entries can be appended
 * later without breaking older games (SQLite's io_methods). Every state is a fixed-size,
 * pointer-free struct of `state_size` bytes: cloning is memcpy. No entry allocates.
 *
 * Required entries are never NULL. Optional entries may be NULL; the fallback is given.
 * Players are numbered 0 and 1. */
typedef struct mg_game_vt {
    int version;            /* MG_VT_VERSION */
    const char *name;       /* short name, as in games.def: "heroes" */
    size_t state_size;      /* bytes of one state (and one observation) */
    size_t config_size;     /* bytes of the game's config struct */
    int max_actions;        /* bound on the number of legal actions, <= MG_MAX_ACTIONS */

    /* Required. Fill `cfg` with the game's defaults. */
    void (*default_config)(void *cfg);
    /* Required. Set up a new game from a config and a seed. Returns MG_OK, or
     * MG_ERR_CONFIG with a message in err (the state is then unspecified). */
    int (*init)(void *st, const void *cfg, uint64_t seed, char *err);
    /* Required. Write the legal actions into out[] in the game's documented order and
     * return their number. A non-terminal state has at least one (END_TURN). A terminal
     * state has none. */
    int (*legal)(const void *st, mg_action *out);
    /* Required. MG_OK if the action is legal here; else an error code (state untouched). */
    int (*check)(const void *st, mg_action a);
    /* Required. Check, then apply. On error the state is unchanged. `rng` supplies chance
     * events (draws) for games configured with true randomness; it may be NULL otherwise. */
    int (*apply)(void *st, mg_action a, mg_rng *rng);
    /* Required. The player to act (0 or 1). */
    int (*current)(const void *st);
    /* Required. 1 if the game is over, and then *winner = 0, 1, or -1 for a draw. */
    int (*terminal)(const void *st, int *winner);
    /* Required. Heuristic value of the state for `player` (higher is better). */
    double (*evaluate)(const void *st, int player);
    /* Required. 64-bit position hash (Zobrist). Equal states give equal hashes. */
    uint64_t (*hash)(const void *st);
    /* Optional (NULL: all actions rate 0). Rating used to sort actions, higher first. */
    int (*rate)(const void *st, mg_action a);
    /* Optional (NULL: nothing pruned). Remove dominated actions from acts[0..n) in
     * place, keeping order; return the new count. */
    int (*prune)(const void *st, mg_action *acts, int n);
    /* Required. Write into `obs` what `seat` may see: the state with hidden parts
     * removed. An observation is a state struct with its observer marked. */
    void (*observe)(const void *st, int seat, void *obs);
    /* Required. From an observation, sample a full state consistent with it. */
    void (*determinize)(const void *obs, mg_rng *rng, void *out);
    /* Required. 1 if an action code is the END_TURN action (at most once in a legal list). */
    int (*is_end_turn)(mg_action a);
    /* Optional (NULL: mg_errstr). Text for a game-specific detail code. */
    const char *(*errstr)(int code);
    /* Optional, version >= 2 (NULL: all actions form one group). The groups of the actions
     * acts[0..n) at st, for the "random meta" rollout policy, as runs: acts[start[r] ..
     * start[r+1]) all have group group[r], and neighbouring runs differ; start[runs] = n
     * (start has room for n + 1). A group is MG_GROUP_UNIT | id for the actions of one
     * unit, MG_GROUP_CARD | id for those of one card, 0 for END_TURN. Returns the number
     * of runs. One call per list, so the policy's inner loop makes no calls. */
    int (*action_groups)(const void *st, const mg_action *acts, int n, int *start, int *group);
    /* Optional, version >= 3 (NULL: MG_DET_UNIFORM is `determinize`, the other strategies
     * are refused with MG_ERR_CONFIG). Sample a full state from an observation with a
     * strategy MG_DET_*; a full state is copied. Returns MG_OK or MG_ERR_CONFIG for an
     * unknown strategy (out unspecified). Callers use mg_determinize (mg_hidden.h). */
    int (*determinize_mode)(const void *obs, int mode, mg_rng *rng, void *out);
    /* Optional, version >= 4, both or neither (NULL: the META and EGREEDY policies
     * enumerate with `legal` and group with `action_groups`). legal_groups writes the
     * distinct groups (as action_groups numbers them) of the legal actions at st but
     * END_TURN, in the order of their first action in legal's list, and returns their
     * number: 0 when only END_TURN is legal, and in a terminal state. group has room for
     * max_actions. group_legal writes the legal actions of one of those groups at st, in
     * legal's order, and returns their number; group 0 gives [END_TURN]. A policy step then
     * enumerates one group instead of every action: same choice, same random draws. */
    int (*legal_groups)(const void *st, int *group);
    int (*group_legal)(const void *st, int group, mg_action *out);
    /* Optional, version >= 4 (NULL: apply). apply for an action that the caller took from
     * legal or group_legal at this very state: the legality checks are skipped (anything
     * else is undefined). Rollouts use it. */
    int (*apply_legal)(void *st, mg_action a, mg_rng *rng);
    /* Required, version >= 5. The seat whose observation `st` is (0 or 1), or -1 for a
     * full state. Generic code (the Python wrapper, the determinized kernels) asks this
     * instead of reading a game's struct. */
    int (*observer)(const void *st);
    /* Required, version >= 5. What `evaluate` gives the winner of a finished game: every
     * value lies in [-value_scale, value_scale], and the search kernels turn a value v
     * into the reward (v + value_scale) / (2 value_scale). */
    double value_scale;
    /* Optional, version >= 6, both or neither (n_features 0 and features NULL: the game has
     * no feature vector, and an evaluation network (mg_eval_net.h) is refused for it). A
     * fixed-length vector of n_features (<= MG_MAX_FEATURES) numbers describing st from
     * `player`'s view, made only of what that player may see (st may be a full state or an
     * observation; both give the same vector), for learned evaluations. The game documents
     * each entry. */
    int n_features;
    void (*features)(const void *st, int player, double *out);
    /* Required, version >= 7 (maag.engine refuses a game without it). Write st's JSON form
     * (a full state or an observation) as msgpack into w (mg_wire.h), each value in its
     * smallest form (the bytes msgpack-python's packb gives of the decoded form, which the
     * suite checks for every game): the only serializer of a state. The referee sends every
     * observation this way, with no Python object in between; State.to_json decodes it. `names` is the name table of a game whose names live in its
     * Python codec (conquest's interned names, by number); NULL for the others. */
    void (*write_msgpack)(const void *st, const char *const *names, struct mg_wire *w);
} mg_game_vt;

#define MG_VT_VERSION 7

/* Upper bound on mg_game_vt.n_features. */
#define MG_MAX_FEATURES 256

/* Determinization strategies (mg_game_vt.determinize_mode). */
#define MG_DET_UNIFORM 0       /* hidden cards drawn uniformly from the unseen ones */
#define MG_DET_MOST_PROBABLE 1 /* the most probable hidden hand (deterministic) */
#define MG_DET_ALL_UNSEEN 2    /* every unseen card in the opponent's hand (limit lifted) */
#define MG_DET_COUNT 3

/* Action groups (mg_game_vt.action_groups): a class in bits 16+, an id in bits 0-15. The
 * class tells the generic policies what a group is: the actions of one piece on the board
 * (MG_GROUP_UNIT) or of one card in the hand (MG_GROUP_CARD; the "random meta" policy
 * tries card groups first with probability p_card). A game without cards has no card
 * groups. */
#define MG_GROUP_UNIT (1 << 16)
#define MG_GROUP_CARD (2 << 16)
#define MG_GROUP_CLASS(g) ((g) >> 16)
#define MG_GROUP_IS_CARD(g) (MG_GROUP_CLASS(g) == MG_GROUP_CLASS(MG_GROUP_CARD))

/* Text for a status code (never NULL). */
const char *mg_errstr(int code);

/* The registered game with this short name, or NULL. */
const mg_game_vt *mg_game_find(const char *name);

/* ---- The referee's step -------------------------------------------------------------------
 * One call for what the referee asks of every act (apply, then: was it END_TURN, is the game
 * over, who acts now), instead of one crossing from Python for
 * each. If `seat` is not the player to act, nothing is applied and MG_STEP_NOT_TO_MOVE is
 * returned. Otherwise `a` is applied as vt->apply does; on error the state is unchanged and
 * the status code is returned negated (< 0). On success the flags: MG_STEP_END_TURN if `a`
 * is the END_TURN action, MG_STEP_TERMINAL if the game is over, MG_STEP_CURRENT_1 if
 * player 1 acts next (else player 0). */
#define MG_STEP_END_TURN 1
#define MG_STEP_TERMINAL 2
#define MG_STEP_CURRENT_1 4
#define MG_STEP_NOT_TO_MOVE 8
int mg_step(const mg_game_vt *vt, void *st, int seat, mg_action a, mg_rng *rng);

/* ---- The referee's step of a plan ----------------------------------------------------------
 * mg_step over the actions a[0..n) of one message by `seat`, in order, in one call (a `turn`
 * of five actions: one crossing instead of five): it stops after the first action that ends
 * the turn or the game, or before the first that is not the seat's to play or cannot be
 * applied. Returns how many were applied (the state changed by those only); `*flags` holds the
 * flags mg_step gave the last one applied (0 if none; MG_STEP_NOT_TO_MOVE if the first was
 * not the seat's to play) and `*status` MG_OK, or the status code of the action at index
 * <returned count> that could not be applied (the state as it was before that action). */
int mg_step_plan(const mg_game_vt *vt, void *st, int seat, const mg_action *a, int n, mg_rng *rng,
                 int *flags, int *status);

#endif
