/* mg_eval_net.c: NEAT feed-forward networks as a search evaluation (mg_eval_net.h). The
 * activation and aggregation functions are neat-python's (activations.py, aggregations.py),
 * clamps included, so a network gives here what it gives there. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "mg_eval_net.h"

static double activate(int act, double z)
{
    switch (act) {
    case MG_ACT_SIGMOID:
        z = fmax(-60.0, fmin(60.0, 5.0 * z));
        return 1.0 / (1.0 + exp(-z));
    case MG_ACT_TANH:
        return tanh(fmax(-60.0, fmin(60.0, 2.5 * z)));
    case MG_ACT_SIN:
        return sin(fmax(-60.0, fmin(60.0, 5.0 * z)));
    case MG_ACT_GAUSS:
        z = fmax(-3.4, fmin(3.4, z));
        return exp(-5.0 * z * z);
    case MG_ACT_RELU:
        return z > 0.0 ? z : 0.0;
    case MG_ACT_ELU:
        return z > 0.0 ? z : exp(z) - 1;
    case MG_ACT_LELU:
        return z > 0.0 ? z : 0.005 * z;
    case MG_ACT_SELU: {
        const double lam = 1.0507009873554804934193349852946;
        const double alpha = 1.6732632423543772848170429916717;
        return z > 0.0 ? lam * z : lam * alpha * (exp(z) - 1);
    }
    case MG_ACT_SOFTPLUS:
        z = fmax(-60.0, fmin(60.0, 5.0 * z));
        return 0.2 * log(1 + exp(z));
    case MG_ACT_CLAMPED:
        return fmax(-1.0, fmin(1.0, z));
    case MG_ACT_INV:
        return z == 0.0 ? 0.0 : 1.0 / z; /* Python's ZeroDivisionError gives 0 */
    case MG_ACT_LOG:
        return log(fmax(1e-7, z));
    case MG_ACT_EXP:
        return exp(fmax(-60.0, fmin(60.0, z)));
    case MG_ACT_ABS:
        return fabs(z);
    case MG_ACT_HAT:
        return fmax(0.0, 1 - fabs(z));
    case MG_ACT_SQUARE:
        return z * z;
    case MG_ACT_CUBE:
        return z * z * z;
    default: /* MG_ACT_IDENTITY */
        return z;
    }
}

/* agg(w_i * v_i) over the node's links, as neat-python folds its list. */
static double aggregate(const mg_net *net, const mg_net_node *n, const double *v)
{
    const int *src = net->link_src + n->first;
    const double *w = net->link_w + n->first;
    int k = n->count;
    if (n->agg == MG_AGG_PRODUCT) {
        double r = 1.0;
        for (int i = 0; i < k; i++)
            r *= v[src[i]] * w[i];
        return r;
    }
    if (k == 0)
        return 0.0;
    double r = n->agg == MG_AGG_MAXABS ? v[src[0]] * w[0] : 0.0;
    switch (n->agg) {
    case MG_AGG_MAX:
    case MG_AGG_MIN:
        r = v[src[0]] * w[0];
        for (int i = 1; i < k; i++) {
            double x = v[src[i]] * w[i];
            if (n->agg == MG_AGG_MAX ? x > r : x < r)
                r = x;
        }
        return r;
    case MG_AGG_MAXABS:
        for (int i = 1; i < k; i++) {
            double x = v[src[i]] * w[i];
            if (fabs(x) > fabs(r))
                r = x;
        }
        return r;
    default: /* SUM, MEAN */
        for (int i = 0; i < k; i++)
            r += v[src[i]] * w[i];
        return n->agg == MG_AGG_MEAN ? r / k : r;
    }
}

/* Run the nodes over v, whose first n_inputs entries hold the inputs; the output. */
static double run(const mg_net *net, double *v)
{
    for (int j = 0; j < net->n_nodes; j++) {
        const mg_net_node *n = &net->node[j];
        v[net->n_inputs + j] = activate(n->act, n->bias + n->response * aggregate(net, n, v));
    }
    return v[net->n_inputs + net->output];
}

double mg_net_activate(const mg_net *net, const double *in)
{
    double v[MG_MAX_FEATURES + MG_NET_MAX_NODES];
    for (int i = 0; i < net->n_inputs; i++)
        v[i] = in[i];
    return run(net, v);
}

double mg_net_evaluate(const mg_net *net, const mg_game_vt *vt, const void *st, int player)
{
    if (vt->terminal(st, NULL))
        return vt->evaluate(st, player);
    double v[MG_MAX_FEATURES + MG_NET_MAX_NODES];
    vt->features(st, player, v); /* the inputs are the first n_features values */
    double o = run(net, v);
    o = o != o ? 0.0 : fmax(-1.0, fmin(1.0, o)); /* NaN (e.g. inf * 0): neutral */
    return o * 0.5 * vt->value_scale;
}

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 2, 3)))
#endif
static int net_error(char *err, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, MG_ERR_LEN, fmt, ap);
        va_end(ap);
    }
    return MG_ERR_CONFIG;
}

int mg_net_check(const mg_net *net, const mg_game_vt *vt, char *err)
{
    if (vt && (vt->version < 6 || vt->n_features <= 0 || !vt->features))
        return net_error(err, "this game has no feature vector, so it cannot use an evaluation "
                              "network");
    if (net->n_inputs < 1 || net->n_inputs > MG_MAX_FEATURES)
        return net_error(err, "the network has %d inputs; 1 to %d are possible", net->n_inputs,
                         MG_MAX_FEATURES);
    if (vt && net->n_inputs != vt->n_features)
        return net_error(err, "the network has %d inputs but the game has %d features",
                         net->n_inputs, vt->n_features);
    if (net->n_nodes < 1 || net->n_nodes > MG_NET_MAX_NODES)
        return net_error(err, "the network has %d nodes; 1 to %d are possible", net->n_nodes,
                         MG_NET_MAX_NODES);
    if (net->n_links < 0 || net->n_links > MG_NET_MAX_LINKS)
        return net_error(err, "the network has %d connections; at most %d are possible",
                         net->n_links, MG_NET_MAX_LINKS);
    if (net->output < 0 || net->output >= net->n_nodes)
        return net_error(err, "the output node %d is not one of the %d nodes", net->output,
                         net->n_nodes);
    for (int j = 0; j < net->n_nodes; j++) {
        const mg_net_node *n = &net->node[j];
        if (n->act < 0 || n->act >= MG_ACT_COUNT || n->agg < 0 || n->agg >= MG_AGG_COUNT)
            return net_error(err, "node %d has an unknown activation or aggregation (%d)", j,
                             n->act);
        if (n->first < 0 || n->count < 0 || n->first > net->n_links - n->count)
            return net_error(err, "node %d's connections lie outside the %d connections", j,
                             net->n_links);
        if (!isfinite(n->bias) || !isfinite(n->response))
            return net_error(err, "node %d has a bias or response that is not finite", j);
        for (int i = n->first; i < n->first + n->count; i++) {
            int s = net->link_src[i];
            if (s < 0 || s >= net->n_inputs + j)
                return net_error(err, "node %d reads value %d, which is neither an input nor an "
                                      "earlier node (the nodes must be in evaluation order)",
                                 j, s);
            if (!isfinite(net->link_w[i]))
                return net_error(err, "connection %d into node %d has a weight that is not finite",
                                 i, j);
        }
    }
    return MG_OK;
}
