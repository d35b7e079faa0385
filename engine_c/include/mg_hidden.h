/* mg_hidden.h: hidden information: determinization strategies and the search kernels that
 * play from an observation: perfect-information Monte Carlo (PIMC: any mg_search kernel
 * on K determinizations, combined), single-observer information-set MCTS (ISMCTS), and
 * OEP whose rollout fitness is averaged over determinizations of the opponent's reply.
 *
 * Each kernel takes an observation (mg_game_vt.observe) and returns a plan as mg_search
 * does: the actions for the rest of the current player's turn, ending with END_TURN unless
 * the game ends first. Given a full state instead (a "determinization" of a full state is
 * the state itself), the same code searches the true position: that is how experiments
 * build the cheating twin of each agent. Budgets, seeds and memory follow mg_search.h. */
#ifndef MG_HIDDEN_H
#define MG_HIDDEN_H

#include "mg_search.h"

/* Sample a full state consistent with observation `obs` by strategy `mode` (MG_DET_*,
 * mg_game.h) into `out` (a full state is copied). Uses vt->determinize_mode when the game
 * has it; otherwise MG_DET_UNIFORM falls back to vt->determinize. Returns MG_OK, or
 * MG_ERR_CONFIG for a strategy the game does not offer (out unspecified). */
int mg_determinize(const mg_game_vt *vt, const void *obs, int mode, mg_rng *rng, void *out);

/* How determinized searches combine the K searches (mg_det_params.combine). */
enum {
    MG_COMBINE_VOTE = 0, /* majority vote on the plan, one action at a time: the first action
                          * most plans start with, then the next among the plans that share
                          * that prefix, ...; ties go to the larger summed kernel value, then
                          * to the earlier determinization */
    MG_COMBINE_SUM,      /* every distinct plan is scored in every determinization (the
                          * kernel's leaf value: a rollout of rollout_turns turns with its
                          * policy from the end of the turn, so the opponent replies with that
                          * determinization's hand); the best total wins */
    MG_COMBINE_VISITS,   /* determinized UCT (Cowling, Powley and Whitehouse 2012): the first
                          * action with the most visits summed over the K trees (ties: the
                          * higher visit-weighted mean), then the plan of the tree that visited
                          * it most, or greedy completion on that tree's determinization when
                          * its own plan starts otherwise; needs an MCTS inner search */
    MG_COMBINE_COUNT
};

/* Most determinizations a PIMC search runs. */
#define MG_PIMC_MAX_K 1024

/* Settings of the determinized kernels. */
typedef struct mg_det_params {
    int k;       /* PIMC: determinizations, 1..MG_PIMC_MAX_K */
    int mode;    /* MG_DET_*: the strategy of every determinization */
    int combine; /* PIMC: MG_COMBINE_* */
} mg_det_params;

/* Check determinized settings: MG_OK, or MG_ERR_CONFIG with a message in err (may be NULL). */
int mg_det_check(const mg_det_params *d, char *err);

/* MG_HIDDEN_PIMC: run the kernel p->algo on d->k determinizations of obs (unchanged) and combine the
 * plans by d->combine. The budgets in p are those of the whole call, split evenly over the
 * determinizations (the time budget adaptively: each search gets an equal share of what is
 * left; iterations: the total, shared out so that the parts add up to it, at least 1 each).
 * Under a time budget, determinizations the clock leaves no room for are skipped (at least
 * one always runs). stats: sums over the searches (plus the SUM combine's rollouts);
 * value = the fraction of searches whose plan won the vote (VOTE), the winning plan's
 * mean score (SUM) or the chosen first action's visit-weighted mean reward (VISITS).
 * Returns as mg_search (MG_ERR_CONFIG for bad p or d). */

/* MG_HIDDEN_ISMCTS: single-observer ISMCTS (Cowling, Powley and Whitehouse 2012) for multi-action turns: one
 * tree whose nodes are the observer's information sets (states with the same observation
 * share a node), a new determinization (strategy d->mode) per iteration, UCB1 with
 * availability counts at the opponent's nodes (an edge's exploration term uses how often it
 * was legal when its node was passed, not the node's visits), the multi-action negamax
 * backup, rollouts and plan completion as the MCTS kernel (p: c, policy, epsilon, p_card,
 * rollout_turns, horizon_root, robust, prune, complete, max_nodes; the algo field is not
 * read). Needs a budget;
 * an iteration is one determinization. Returns as mg_search. */

/* MG_HIDDEN_OEP: OEP (mg_search_oep) from an observation: genomes are built on one determinization (the
 * player to act's own turn does not depend on hidden cards), and with rollout fitness
 * (p->fitness_rollouts > 0) every fitness rollout starts from a fresh determinization
 * (strategy d->mode) with the genome's turn replayed on it, and the fitness is the mean of
 * the rollouts rather than their minimum: the opponent's reply is averaged over its
 * possible hands. With heuristic fitness this is OEP on one determinization. Returns as
 * mg_search. */

/* MG_HIDDEN_MCTS: MCTS's trees on threads (mg_search_mcts with p->threads, one tree at
 * least), each tree on its own determinization of obs (strategy d->mode) with the whole
 * budget, the plan walked through all the trees by summed visits: PIMC whose searches run
 * at once and are combined along the whole plan. The own turn's actions do not depend on
 * what is hidden, so the trees agree on them; what the sampled hands change is the
 * opponent's replies below, and no single guess of them decides the plan. Returns as
 * mg_search. */

/* MG_HIDDEN_REPLY: greedy reply (mg_search_reply) from an observation: the mover's turn is
 * searched on one determinization, and each candidate turn is answered by the opponent's
 * greedy turn on d->k sampled hands (strategy d->mode, at most 64 used), the same hands for
 * every candidate; a candidate's value is the mean over its answers. Returns as mg_search. */

/* Run determinized search `kind` (MG_HIDDEN_*, above) from the observation obs (unchanged):
 * parameters and budgets as mg_search, plus the determinization settings d. One entry for
 * them all, so that their checks (parameters, state size, game over, with a text in err)
 * are written once. Returns as mg_search; MG_ERR_CONFIG for an unknown kind. */
enum { MG_HIDDEN_PIMC, MG_HIDDEN_ISMCTS, MG_HIDDEN_OEP, MG_HIDDEN_MCTS, MG_HIDDEN_REPLY,
       MG_HIDDEN_COUNT };
int mg_search_hidden(int kind, const mg_game_vt *vt, const void *obs, const mg_search_params *p,
                     const mg_det_params *d, mg_rng *rng, mg_action *plan, int *plan_len,
                     mg_search_stats *stats, char *err);

/* An ISMCTS tree kept from one search to the next (mg_search_ismcts_reuse), for searching
 * again before every action of a turn. Opaque; one per game and seat, used by one thread at
 * a time. A new, empty tree (NULL if out of memory) and its release (NULL is allowed). */
typedef struct mg_ismcts_tree mg_ismcts_tree;
mg_ismcts_tree *mg_ismcts_tree_new(void);
void mg_ismcts_tree_free(mg_ismcts_tree *tree);

/* MG_HIDDEN_ISMCTS on the tree kept in `tree` (checks, budgets and results as
 * mg_search_hidden). The search goes on from the tree's node of obs's information set, and
 * stats.reused gives that node's visits, when the tree has that node (the same game,
 * observer, prune and max_nodes settings), the observer moves there and it was visited, and
 * the tree has room for the search's new nodes under max_nodes (its arenas grow). The nodes
 * are information sets, so after a chance outcome the observer saw, the node found is the
 * one of that outcome: its statistics come from the iterations whose determinizations drew
 * it. Otherwise (an information set never reached, another game or observer, other
 * settings, no room) the tree is emptied and searched anew from obs. Which searches belong
 * together (one turn, say) is the caller's choice: a new tree for each new turn. */
int mg_search_ismcts_reuse(const mg_game_vt *vt, const void *obs, const mg_search_params *p,
                           const mg_det_params *d, mg_ismcts_tree *tree, mg_rng *rng,
                           mg_action *plan, int *plan_len, mg_search_stats *stats, char *err);

#endif
