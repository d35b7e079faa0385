"""cffi build script for the C rules core (out-of-line API mode). It only builds.

Wired in two places that must agree: setup.py's ``cffi_modules`` names this file, and
pyproject.toml's ``[build-system] requires`` lists cffi. The games come from
games/games.def: each registered game's folder gives its C sources, its public header
mg_<name>.h and its cffi declarations cdef.h.

Environment switches:
  MAAG_CFLAGS  extra compiler flags (the tests use it for -fsanitize=address,undefined).
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

from cffi import FFI

HERE = Path(__file__).resolve().parent
GAMES_DEF = HERE / "games" / "games.def"
# -ffp-contract=off: the rules' double arithmetic must match the Java reference bit for bit.
# -fvisibility=hidden: the module exports only PyInit__core (cffi reaches the C functions from
# inside the module), so a call from one source file to another (hr_set_unit, hr_max_hp,
# mg_rng_below, ms_actions) is a direct call instead of one through the PLT, and a function
# may be inlined within its file (a default-visibility one could be interposed).
CFLAGS = ["-std=c99", "-O2", "-Wall", "-Wextra", "-ffp-contract=off", "-fvisibility=hidden"]


def game_names(games_def: Path = GAMES_DEF) -> list[str]:
    """The registered games, in games.def order (its `MG_GAME(name)` lines)."""
    names = re.findall(r"^MG_GAME\((\w+)\)", games_def.read_text(), flags=re.M)
    if not names:
        raise RuntimeError(f"{games_def}: no MG_GAME(name) line")
    return names


def sources(root: Path = HERE) -> list[Path]:
    """Every C source of the core: the generic ones (src/), then each game's folder."""
    out = sorted((root / "src").glob("*.c"))
    for name in game_names(root / "games" / "games.def"):
        out += sorted((root / "games" / name).glob("*.c"))
    return out


def include_dirs(root: Path = HERE) -> list[Path]:
    """The generic headers, games.def's folder, and each game's folder (its public header
    mg_<name>.h and private ones)."""
    games = root / "games"
    return [root / "include", games] + [games / n for n in game_names(games / "games.def")]


CDEF = """
typedef uint32_t mg_action;
typedef struct mg_rng { uint64_t s[4]; } mg_rng;
typedef struct mg_wire { uint8_t *buf; size_t cap; size_t len; } mg_wire;

#define MG_OK ...
#define MG_ERR_CONFIG ...
#define MG_ERR_ILLEGAL ...
#define MG_ERR_TERMINAL ...
#define MG_ERR_DECODE ...
#define MG_ERR_STATE ...
#define MG_ERR_LEN ...
#define MG_MAX_ACTIONS ...
#define MG_MAX_STATE_SIZE ...
#define MG_MAX_FEATURES ...

typedef struct mg_game_vt {
    int version;
    const char *name;
    size_t state_size;
    size_t config_size;
    int max_actions;
    void (*default_config)(void *cfg);
    int (*init)(void *st, const void *cfg, uint64_t seed, char *err);
    int (*legal)(const void *st, mg_action *out);
    int (*check)(const void *st, mg_action a);
    int (*apply)(void *st, mg_action a, mg_rng *rng);
    int (*current)(const void *st);
    int (*terminal)(const void *st, int *winner);
    double (*evaluate)(const void *st, int player);
    uint64_t (*hash)(const void *st);
    int (*rate)(const void *st, mg_action a);
    int (*prune)(const void *st, mg_action *acts, int n);
    void (*observe)(const void *st, int seat, void *obs);
    void (*determinize)(const void *obs, mg_rng *rng, void *out);
    int (*is_end_turn)(mg_action a);
    const char *(*errstr)(int code);
    int (*action_groups)(const void *st, const mg_action *acts, int n, int *start, int *group);
    int (*legal_groups)(const void *st, int *group);
    int (*group_legal)(const void *st, int group, mg_action *out);
    int (*apply_legal)(void *st, mg_action a, mg_rng *rng);
    int (*observer)(const void *st);
    double value_scale;
    int n_features;
    void (*features)(const void *st, int player, double *out);
    void (*write_msgpack)(const void *st, const char *const *names, struct mg_wire *w);
    ...;
} mg_game_vt;

const char *mg_errstr(int code);
const mg_game_vt *mg_game_find(const char *name);

void mg_rng_seed(mg_rng *r, uint64_t seed);
uint64_t mg_rng_next(mg_rng *r);
uint32_t mg_rng_below(mg_rng *r, uint32_t n);

long mg_random_playout(const mg_game_vt *vt, void *st, mg_rng *rng, long max_actions);
int mg_bench_playouts(const mg_game_vt *vt, const void *start, double seconds, uint64_t seed,
                      long *games, long *actions, double *elapsed);
int mg_bench_legal(const mg_game_vt *vt, const void *states, int n, double seconds, long *calls,
                   double *elapsed);
int mg_bench_clone_apply(const mg_game_vt *vt, const void *states, int n, double seconds,
                         uint64_t seed, long *count, double *elapsed);

/* search (mg_search.h) */
#define MG_ERR_NOMEM ...
#define MG_SEARCH_MAX_PLAN ...
enum { MG_ALGO_POLICY, MG_ALGO_GREEDY_ACTION, MG_ALGO_GREEDY_TURN, MG_ALGO_MCTS, MG_ALGO_OEP,
       MG_ALGO_UCB, MG_ALGO_RMP, MG_ALGO_UCT, MG_ALGO_EMCTS, MG_ALGO_REPLY,
       MG_ALGO_COUNT };
enum { MG_POLICY_RANDOM, MG_POLICY_META, MG_POLICY_EGREEDY, MG_POLICY_GREEDY, MG_POLICY_RAP,
       MG_POLICY_RAP_GREEDY, MG_POLICY_COUNT };
enum { MG_MOVES_SAMPLE, MG_MOVES_DFS, MG_MOVES_COUNT };
enum { MG_POST_NONE, MG_POST_RAP, MG_POST_RMP, MG_POST_RMPMAX, MG_POST_COUNT };
enum { MG_SELECT_MAX, MG_SELECT_ROBUST, MG_SELECT_MAXWINS, MG_SELECT_COUNT };
enum { MG_STOP_DONE, MG_STOP_TIME, MG_STOP_ITERATIONS, MG_STOP_MEMORY };
/* evaluation networks (mg_eval_net.h) */
#define MG_NET_MAX_NODES ...
#define MG_NET_MAX_LINKS ...
enum { MG_ACT_SIGMOID, MG_ACT_TANH, MG_ACT_SIN, MG_ACT_GAUSS, MG_ACT_RELU, MG_ACT_ELU,
       MG_ACT_LELU, MG_ACT_SELU, MG_ACT_SOFTPLUS, MG_ACT_IDENTITY, MG_ACT_CLAMPED, MG_ACT_INV,
       MG_ACT_LOG, MG_ACT_EXP, MG_ACT_ABS, MG_ACT_HAT, MG_ACT_SQUARE, MG_ACT_CUBE, MG_ACT_COUNT };
enum { MG_AGG_SUM, MG_AGG_PRODUCT, MG_AGG_MAX, MG_AGG_MIN, MG_AGG_MAXABS, MG_AGG_MEAN, MG_AGG_COUNT };
typedef struct mg_net_node {
    int act; int agg; int first; int count; double bias; double response;
} mg_net_node;
typedef struct mg_net {
    int n_inputs; int n_nodes; int n_links; int output;
    mg_net_node node[512];
    int link_src[8192];
    double link_w[8192];
} mg_net;
int mg_net_check(const mg_net *net, const mg_game_vt *vt, char *err);
double mg_net_activate(const mg_net *net, const double *in);
double mg_net_evaluate(const mg_net *net, const mg_game_vt *vt, const void *st, int player);

typedef struct mg_search_params {
    int algo; double budget_ms; long iterations; double value_scale; int prune; int early_end;
    int legal_order;
    int policy; double epsilon; double p_card; int rollout_turns;
    double c; int transpositions; int bridge_burning; int collapse_k; int horizon_root; int robust;
    int complete;
    long max_nodes; int threads;
    int population; double survival; double mutation; int history; int fitness_rollouts;
    int islands; int migration_interval; int migrants;
    int arms; int select; int moves; long max_moves; int longest; int post;
    const struct mg_net *eval_net;
    int branching; int tree_depth; int horizon; int model_k; int backup_max;
    ...;
} mg_search_params;
typedef struct mg_search_stats {
    long iterations; long evaluations; long nodes; double elapsed_ms; double value; int stop;
    ...;
} mg_search_stats;
int mg_search_defaults(int algo, mg_search_params *p);
int mg_search_check(const mg_search_params *p, char *err);
int mg_search(const mg_game_vt *vt, const void *st, const mg_search_params *p, mg_rng *rng,
              mg_action *plan, int *plan_len, mg_search_stats *stats, char *err);
long mg_count_moves(const mg_game_vt *vt, const void *st, long max_moves, int prune, mg_rng *rng,
                    int *longest);

/* hidden information (mg_game.h MG_DET_*, mg_hidden.h) */
#define MG_DET_UNIFORM ...
#define MG_DET_MOST_PROBABLE ...
#define MG_DET_ALL_UNSEEN ...
#define MG_DET_COUNT ...
#define MG_PIMC_MAX_K ...
enum { MG_COMBINE_VOTE, MG_COMBINE_SUM, MG_COMBINE_VISITS, MG_COMBINE_COUNT };
typedef struct mg_det_params { int k; int mode; int combine; ...; } mg_det_params;
int mg_determinize(const mg_game_vt *vt, const void *obs, int mode, mg_rng *rng, void *out);
int mg_det_check(const mg_det_params *d, char *err);
enum { MG_HIDDEN_PIMC, MG_HIDDEN_ISMCTS, MG_HIDDEN_OEP, MG_HIDDEN_MCTS, MG_HIDDEN_REPLY,
       MG_HIDDEN_COUNT };
int mg_search_hidden(int kind, const mg_game_vt *vt, const void *obs, const mg_search_params *p,
                     const mg_det_params *d, mg_rng *rng, mg_action *plan, int *plan_len,
                     mg_search_stats *stats, char *err);
"""

VERSION_GUARD = '\nconst char *mg_build_version(void) { return "%s"; }\n'


def _version() -> str:
    for line in (HERE.parent / "pyproject.toml").read_text().splitlines():
        if line.startswith("version"):
            return line.split("=", 1)[1].strip().strip('"')
    return "0"


def make_ffi(module: str = "maag.engine._core", extra_cflags: list[str] | None = None) -> FFI:
    """Build the FFI object; `module` and `extra_cflags` let tests build variants."""
    ffi = FFI()
    names = game_names()
    game_cdefs = "".join((HERE / "games" / n / "cdef.h").read_text() for n in names)
    ffi.cdef(CDEF + game_cdefs + "const char *mg_build_version(void);")
    flags = CFLAGS + shlex.split(os.environ.get("MAAG_CFLAGS", "")) + (extra_cflags or [])
    headers = ["mg_game.h", "mg_wire.h", "mg_kernels.h", "mg_search.h", "mg_hidden.h", "mg_eval_net.h"]
    headers += [f"mg_{n}.h" for n in names]
    ffi.set_source(
        module,
        "".join(f'#include "{h}"\n' for h in headers) + VERSION_GUARD % _version(),
        # setuptools wants source paths relative to the project root (the build's cwd).
        sources=[os.path.relpath(s) for s in sources()],
        include_dirs=[str(d) for d in include_dirs()],
        extra_compile_args=flags + ["-pthread"],  # OEP islands run on threads
        extra_link_args=[f for f in flags if f.startswith("-fsanitize")] + ["-pthread"],
    )
    return ffi


ffi = make_ffi()

if __name__ == "__main__":
    ffi.compile(verbose=True)
