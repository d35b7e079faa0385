/* mg_eval_net.h: a feed-forward network as NEAT (neat-python) makes it, used as the search
 * kernels' evaluation instead of the game's `evaluate` (mg_search_params.eval_net).
 *
 * The network reads the game's feature vector (mg_game_vt.features) and computes, node by
 * node in evaluation order, value = act(bias + response * agg(w_i * v_i)) over its input
 * links, each link from a feature or an earlier node: neat-python's FeedForwardNetwork,
 * with its activation and aggregation functions (same clamps). The output node's value o,
 * clamped to [-1, 1], becomes the evaluation o * value_scale / 2 of a state that is not
 * terminal (half the game's win value, so a won game still outranks every position); a
 * finished game keeps the game's own evaluation (win, loss or draw).
 *
 * The struct is fixed-size and pointer-free; the caller fills it (maag.engine.evalnet reads
 * neat-python's network JSON into it) and mg_net_check validates it. Evaluation allocates
 * nothing and only reads the struct, so threads may share one network. */
#ifndef MG_EVAL_NET_H
#define MG_EVAL_NET_H

#include "mg_game.h"

#define MG_NET_MAX_NODES 512  /* evaluated nodes (hidden and output) */
#define MG_NET_MAX_LINKS 8192 /* weighted connections */

/* Activation functions (neat-python's names without "_activation"). */
enum {
    MG_ACT_SIGMOID = 0, MG_ACT_TANH, MG_ACT_SIN, MG_ACT_GAUSS, MG_ACT_RELU, MG_ACT_ELU,
    MG_ACT_LELU, MG_ACT_SELU, MG_ACT_SOFTPLUS, MG_ACT_IDENTITY, MG_ACT_CLAMPED, MG_ACT_INV,
    MG_ACT_LOG, MG_ACT_EXP, MG_ACT_ABS, MG_ACT_HAT, MG_ACT_SQUARE, MG_ACT_CUBE, MG_ACT_COUNT
};

/* Aggregation functions (neat-python's; median is not offered). */
enum { MG_AGG_SUM = 0, MG_AGG_PRODUCT, MG_AGG_MAX, MG_AGG_MIN, MG_AGG_MAXABS, MG_AGG_MEAN, MG_AGG_COUNT };

/* One evaluated node: its links are link_src/link_w[first .. first + count). */
typedef struct mg_net_node {
    int act;         /* MG_ACT_* */
    int agg;         /* MG_AGG_* */
    int first;       /* its first link */
    int count;       /* its number of links */
    double bias;
    double response;
} mg_net_node;

/* A network. Values are indexed: 0 .. n_inputs-1 the features, n_inputs + i node i. */
typedef struct mg_net {
    int n_inputs;    /* must equal the game's n_features */
    int n_nodes;     /* evaluated nodes, in evaluation order */
    int n_links;
    int output;      /* the node (0 .. n_nodes-1) whose value is the network's output */
    mg_net_node node[MG_NET_MAX_NODES];
    int link_src[MG_NET_MAX_LINKS];      /* a value index: a feature or an earlier node */
    double link_w[MG_NET_MAX_LINKS];
} mg_net;

/* MG_OK if `net` is well formed and fits game `vt` (vt may be NULL: no game check); else
 * MG_ERR_CONFIG with the reason in err (MG_ERR_LEN bytes, may be NULL). */
int mg_net_check(const mg_net *net, const mg_game_vt *vt, char *err);

/* The output of `net` on the input vector in[0 .. n_inputs) (no clamp, no scaling). */
double mg_net_activate(const mg_net *net, const double *in);

/* The evaluation of st for `player` by `net` (checked with mg_net_check against vt), on the
 * game's scale, as described above. */
double mg_net_evaluate(const mg_net *net, const mg_game_vt *vt, const void *st, int player);

#endif
