/* mg_search.h: search kernels generic over mg_game_vt: rollout policies, greedy action and
 * greedy turn, the MCTS family (vanilla, non-exploring, bridge-burning, collapsing), Online
 * Evolutionary Planning, and the card-game thesis's players: random moves (RMP, RMPmax),
 * flat UCB over whole moves and UCT over atomic actions (spec/cards.md §8). Each returns a plan: the actions for
 * the rest of the current player's turn, ending with END_TURN unless the game ends first.
 *
 * Budgets: a wall-clock budget in milliseconds, checked inside the kernel, and an iteration
 * budget in the algorithm's own unit (see mg_search_stats.iterations). Either may be 0
 * (none); the search stops at whichever comes first. With budget_ms = 0, a fixed seed and
 * an iteration budget a kernel returns the same plan every time.
 *
 * Memory: a kernel allocates its arena (tree nodes, transposition table, population) once
 * per call, before the first iteration, and frees it before returning; nothing is
 * allocated inside iterations or rollouts. */
#ifndef MG_SEARCH_H
#define MG_SEARCH_H

#include "mg_game.h"

/* Longest plan a kernel returns (actions of one turn, END_TURN included). */
#define MG_SEARCH_MAX_PLAN 64
#define MG_SEARCH_MAX_THREADS 64 /* MCTS trees searched at once (threads) */

/* Algorithms (mg_search_params.algo). */
enum {
    MG_ALGO_POLICY = 0,   /* play the turn with `policy` (random, random-meta, egreedy, greedy) */
    MG_ALGO_GREEDY_ACTION, /* one ply at a time: the action whose result evaluates best */
    MG_ALGO_GREEDY_TURN,  /* depth-first over the turn with a transposition table, anytime */
    MG_ALGO_MCTS,         /* MCTS over single actions (variants by parameters) */
    MG_ALGO_OEP,          /* Online Evolutionary Planning over whole-turn genomes */
    MG_ALGO_UCB,          /* flat UCB1 bandit over whole moves (generated or sampled) */
    MG_ALGO_RMP,          /* a random whole move of the move tree (RMP; RMPmax: a longest one) */
    MG_ALGO_UCT,          /* UCT over atomic actions, closed loop, one move tree (thesis) */
    MG_ALGO_EMCTS,        /* Evolutionary MCTS: a tree of genomes whose edges are mutations
                           * (FH-EMCTS with horizon > 0) */
    MG_ALGO_REPLY,        /* greedy reply: greedy turn's best turns, each answered by the
                           * opponent's greedy turn; the best after the answer */
    MG_ALGO_COUNT
};

/* Action-choice policies for rollouts and policy agents (mg_search_params.policy). */
enum {
    MG_POLICY_RANDOM = 0, /* uniform over the legal actions other than END_TURN */
    MG_POLICY_META,       /* pick unit vs card actions first, then a group, then uniform */
    MG_POLICY_EGREEDY,    /* as META, then the best-rated action of the group with prob 1-eps */
    MG_POLICY_GREEDY,     /* the best-rated legal action (first in legal order on ties) */
    MG_POLICY_RAP,        /* uniform over every legal action, END_TURN included (the thesis's
                           * random action player with gen_end_ply; RANDOM is it without) */
    MG_POLICY_RAP_GREEDY, /* RAP that takes an action winning the game at once when there is
                           * one, else a uniform non-END_TURN action with probability 0.9 and
                           * END_TURN otherwise (spec/cards.md §8.6; tries every action) */
    MG_POLICY_COUNT
};

/* Final choice of the flat UCB bandit (mg_search_params.select); ties go to the arm with
 * more pulls, then to the earlier arm. */
enum {
    MG_SELECT_MAX = 0, /* highest mean reward ("max-reward") */
    MG_SELECT_ROBUST,  /* most pulls */
    MG_SELECT_MAXWINS, /* most pulls whose reward beat 0.5: wins ("max-wins") */
    MG_SELECT_COUNT
};

/* Where the flat UCB bandit's arms come from (mg_search_params.moves). */
enum {
    MG_MOVES_SAMPLE = 0, /* distinct turns: the greedy one, then turns of the rollout policy */
    MG_MOVES_DFS,        /* the first `arms` moves of the move tree, depth first (the thesis's
                          * gen_moves: every prefix followed by END_TURN, then its children),
                          * then put in random order */
    MG_MOVES_COUNT
};

/* How UCT completes a chosen path that stops before END_TURN (mg_search_params.post; the
 * thesis's post-Monte-Carlo strategies, spec/cards.md §8.5). */
enum {
    MG_POST_NONE = 0, /* END_TURN */
    MG_POST_RAP,      /* random actions until only END_TURN is left */
    MG_POST_RMP,      /* a random complete move of the move tree (max_moves generated) */
    MG_POST_RMPMAX,   /* a random one among the longest of those */
    MG_POST_COUNT
};

/* Why a search stopped (mg_search_stats.stop). */
enum {
    MG_STOP_DONE = 0,   /* nothing left to search (or the algorithm needs no budget) */
    MG_STOP_TIME,       /* the time budget ran out */
    MG_STOP_ITERATIONS, /* the iteration budget ran out */
    MG_STOP_MEMORY      /* the arena (max_nodes) was full */
};

struct mg_net; /* an evaluation network, mg_eval_net.h */

/* Every parameter of every kernel; mg_search_defaults() fills the papers' settings. A
 * kernel reads only the fields it uses. */
typedef struct mg_search_params {
    int algo;            /* MG_ALGO_* */
    double budget_ms;    /* wall-clock budget in milliseconds; 0 = none */
    long iterations;     /* iteration budget in the algorithm's unit; 0 = none */
    double value_scale;  /* evaluate() of a won game; 0 (the default): the game's own
                          * (mg_game_vt.value_scale). Rewards in [0, 1] are
                          * (v + value_scale) / (2 value_scale) */
    int prune;           /* 1: search action lists pass through vt->prune */
    int early_end;       /* 1: END_TURN is a choice while other actions remain; 0: only
                          * when nothing else is legal (as the reference agents) */
    int legal_order;     /* 1: greedy turn and tree expansion take actions in the game's legal
                          * order (the reference's greedy turn); 0: by rating, highest first */

    /* policies and rollouts */
    int policy;          /* MG_POLICY_*: the policy agent's policy, and the rollout policy */
    double epsilon;      /* EGREEDY: probability of a uniform choice within the group */
    double p_card;       /* META, EGREEDY: probability of trying card actions first */
    int rollout_turns;   /* rollout depth in turns (END_TURNs applied); 0 = evaluate at once */

    /* MCTS */
    double c;            /* exploration constant: UCB = mean + 2c sqrt(2 ln N / n) */
    int transpositions;  /* 1: nodes are shared by state hash */
    int bridge_burning;  /* 1: split the budget into one phase per action of the turn; after
                          * each phase only the best root child survives and becomes root */
    int collapse_k;      /* > 0: after k end-of-turn nodes were found, drop every branch of
                          * the turn that does not reach one; -1: 20 per second of budget;
                          * 0: off */
    int horizon_root;    /* 1: rollout_turns counts from the root, so every leaf is evaluated
                          * at the same point of the game; 0: from the leaf (the reference) */
    int robust;          /* 1: the plan (and each bridge-burning cut) follows the most visited
                          * edge; 0: the highest mean (the reference) */
    int complete;        /* 1: a plan whose tree path stops before END_TURN is completed
                          * greedily; 0: END_TURN is appended (the reference) */
    long max_nodes;      /* cap on tree nodes / table entries; 0 = 1<<22 */
    int threads;         /* trees searched at once, one thread each, the budget each (root
                          * parallelism; the plan follows their summed visits); 1: no threads.
                          * Not with bridge_burning or collapse_k */

    /* OEP */
    int population;      /* genomes per generation */
    double survival;     /* fraction kept each generation */
    double mutation;     /* probability that a child is mutated */
    int history;         /* 1: a table keyed by the outcome's hash caches fitness */
    int fitness_rollouts; /* 0: heuristic fitness; > 0: minimum over this many rollouts
                           * (one per generation while the genome survives) */
    int islands;         /* populations evolved at once, one thread each (1: no threads) */
    int migration_interval; /* islands: generations between migrations */
    int migrants;        /* islands: best genomes each island sends to the next one */

    /* flat UCB */
    int arms;            /* arms: distinct whole turns (MG_MOVES_SAMPLE) or the first moves
                          * of the move tree (MG_MOVES_DFS, the thesis's max_bandits) */
    int select;          /* MG_SELECT_* */
    int moves;           /* MG_MOVES_*: how the arms are made */

    /* the thesis's players: RMP, UCB over moves, UCT (transpositions: the move tree's depth-
     * first generation skips a state it already reached, the thesis's "prune") */
    long max_moves;      /* RMP and the RMP completions: moves generated at most */
    int longest;         /* RMP: 1 = RMPmax (a random move among the longest) */
    int post;            /* UCT: MG_POST_* */

    /* the evaluation */
    const struct mg_net *eval_net; /* NULL (the default): the game's evaluate; else this
                                    * network on the game's features (mg_eval_net.h), which
                                    * must fit the game (mg_net_check) and outlive the call */

    /* EMCTS and FH-EMCTS (c above is their exploration constant; max_nodes their tree) */
    int branching;       /* children (mutations) a node gets before UCB descends below it */
    int tree_depth;      /* > 0: the tree stops at this many mutations from the root, and each
                          * iteration mutates on at random to it (the rollout); 0: no limit,
                          * no rollout */
    int horizon;         /* 0: a genome is the mover's turn (EMCTS); n > 0: its next n actions
                          * across turn ends, the opponent's turns and the rest of the last
                          * own turn played by the greedy models (FH-EMCTS) */
    int model_k;         /* FH-EMCTS models: the best-rated actions a greedy step looks at */
    int backup_max;      /* 1: a node's value is the best value below it; 0: the mean */

    /* strength per simulation (issue 58; off by default until measured) */
    int forced;          /* 1: when the turn leaves no choice (one legal action at a time up to
                          * END_TURN or the end of the game; on an observation only a lone
                          * END_TURN) those actions are the plan, with no search (stats:
                          * 0 iterations); every kernel, through mg_search and mg_search_hidden */
    int solve;           /* MCTS: 1: MCTS-Solver. A terminal child proves its edge won or lost;
                          * a node with a proven-won edge is won for its mover, one whose every
                          * action is proven lost is lost; a proven node is a leaf with its
                          * exact value, selection and the final choice take a proven win and
                          * avoid proven losses, and the search stops once the root is proven
                          * (with threads > 1 each tree stops when its root is proven, and the
                          * final choice is the trees' merged one: summed visits and means) */
    double widen_k;      /* MCTS: > 0: progressive widening. A node reached n times before has
                          * at most max(1, floor(widen_k n^widen_alpha)) expanded edges (its
                          * actions in rating order: the best-rated first); selection chooses
                          * among those until n grows. 0 (the default): every action is
                          * expanded before selection (off) */
    double widen_alpha;  /* progressive widening's exponent, in [0, 1] (default 0.5) */

    /* greedy reply (MG_ALGO_REPLY; issue 58 in heroes, defaults as before until measured) */
    double reply_share;  /* the share of the time budget the mover's own turn search (phase
                          * 1) may use, in [0.05, 0.95]; the answers get what it leaves
                          * (default 0.5) */
    int reply_quick;     /* 1: the mover's own turns after the opponent's answer (rollout_turns
                          * >= 2) are played by greedy action, one ply at a time, at a tiny
                          * cost, so the opponent's answers (greedy turn) get all the time;
                          * 0 (the default): every one of those turns is a greedy turn */
    int turn_widen;      /* 1: greedy turn (alone, and greedy reply's answers) searches by
                          * iterative widening: depth-first over the top w actions by rating
                          * at every step, w = 1, 2, 3, 4, 6, 9 (fewer when a pass leaves
                          * out little), then the whole turn as without (a turn as good as
                          * its best), until the budget is spent: a search cut short has
                          * looked at every step's best actions instead of the first
                          * action's subtree alone, one that exhausts the turn costs a few
                          * percent more; 0 (the default): one depth-first pass. Not in
                          * greedy reply's own turn (reply_widen) */
    int reply_widen;     /* 1: greedy reply's own turn (phase 1) by iterative widening too (its
                          * k best turns distinct: a later pass's finds of a turn already kept
                          * are skipped); 0 (the default): one depth-first pass */
} mg_search_params;

/* What a search did. */
typedef struct mg_search_stats {
    long iterations;     /* MCTS iterations, OEP generations, greedy-turn outcomes
                          * (distinct end-of-turn states evaluated), UCB pulls, or the
                          * number of plan steps for the policy and greedy-action kernels */
    long evaluations;    /* heuristic evaluations */
    long nodes;          /* tree nodes, table entries or genomes created */
    double elapsed_ms;   /* wall-clock time of the call */
    double value;        /* the chosen plan's value in the kernel's own scale */
    int stop;            /* MG_STOP_* */
    long reused;         /* mg_search_reuse: the root's visits kept from the previous search
                          * (0: a fresh tree) */
} mg_search_stats;

/* Fill `p` with the defaults of algorithm `algo` (the papers' best settings): MCTS C =
 * 1/sqrt(2), egreedy rollouts (eps 0.5) of one turn, transpositions on; OEP population
 * 100, survival 0.5, mutation 0.1, history on; UCB 100 arms, max-reward selection; a
 * 1000 ms time budget and no iteration budget. Returns MG_OK or MG_ERR_CONFIG for an
 * unknown algorithm (p is then filled with the MCTS defaults). */
int mg_search_defaults(int algo, mg_search_params *p);

/* Check parameters: MG_OK, or MG_ERR_CONFIG with a message in err (MG_ERR_LEN bytes, may
 * be NULL). */
int mg_search_check(const mg_search_params *p, char *err);

/* Run the kernel chosen by p->algo from state `st` (unchanged), for the player to act.
 * Writes the plan into plan[0..*plan_len) (room for MG_SEARCH_MAX_PLAN actions) and, if
 * stats is not NULL, what the search did. `rng` drives every random choice and the chance
 * events of simulated END_TURNs. Returns MG_OK; MG_ERR_TERMINAL for a finished game;
 * MG_ERR_CONFIG for bad parameters (message in err, which may be NULL); MG_ERR_NOMEM if
 * the arena could not be allocated. On error *plan_len is 0. */
int mg_search(const mg_game_vt *vt, const void *st, const mg_search_params *p, mg_rng *rng,
              mg_action *plan, int *plan_len, mg_search_stats *stats, char *err);

/* A search tree kept from one search to the next (mg_search_reuse), for re-searching before
 * every action of a turn: the subtree of the action played is searched on instead of a new
 * tree. Opaque; one per game and seat, used by one thread at a time. */
typedef struct mg_search_tree mg_search_tree;

/* A new, empty tree (NULL if out of memory) and its release (NULL is allowed). */
mg_search_tree *mg_search_tree_new(void);
void mg_search_tree_free(mg_search_tree *tree);

/* mg_search for MCTS (p->algo MG_ALGO_MCTS, threads 1, no bridge burning, no collapse:
 * MG_ERR_CONFIG otherwise) on the tree kept in `tree`. The search goes on from the tree's
 * node of st, and the stats say how many visits it kept (stats.reused), when st is the
 * previous search's root (the same state hash), or the state one of the root player's
 * expanded edges leads to from that root within its turn by an action without chance (the
 * action, applied to the root's state, reaches st's hash and draws nothing from the random
 * stream it is given): the real position after the action played. Otherwise (another turn, a chance outcome, another game, parameters
 * with another transpositions setting, or no room left under max_nodes) the tree is
 * emptied and searched anew from st. The tree keeps st as its root after the call. */
int mg_search_reuse(const mg_game_vt *vt, const void *st, const mg_search_params *p,
                    mg_search_tree *tree, mg_rng *rng, mg_action *plan, int *plan_len,
                    mg_search_stats *stats, char *err);

/* The family kernels behind mg_search (same contract; p->algo is not read). */

/* Play the rest of the turn with p->policy. */
int mg_search_policy(const mg_game_vt *vt, const void *st, const mg_search_params *p,
                     mg_rng *rng, mg_action *plan, int *plan_len, mg_search_stats *stats);

/* Greedy action: at each step the (pruned) action whose resulting state evaluates best
 * for the mover, ties broken at random, until END_TURN. */
int mg_search_greedy_action(const mg_game_vt *vt, const void *st, const mg_search_params *p,
                            mg_rng *rng, mg_action *plan, int *plan_len,
                            mg_search_stats *stats);

/* Greedy turn: depth-first over the turn's (pruned, rating-sorted) action sequences,
 * skipping states already seen (transposition table), evaluating each distinct
 * end-of-turn state; anytime (the best outcome found when the budget runs out). With no
 * budget at all the search is exhaustive. */
int mg_search_greedy_turn(const mg_game_vt *vt, const void *st, const mg_search_params *p,
                          mg_rng *rng, mg_action *plan, int *plan_len,
                          mg_search_stats *stats);

/* MCTS over single actions: UCB1 on edges, multi-action negamax backup, transpositions,
 * rollouts depth-limited in turns, and the non-exploring / bridge-burning / collapsing
 * variants by parameters. Needs a budget. With p->threads > 1 that many trees grow at
 * once with the budget each, and the stats add up their iterations, evaluations and nodes. */
int mg_search_mcts(const mg_game_vt *vt, const void *st, const mg_search_params *p,
                   mg_rng *rng, mg_action *plan, int *plan_len, mg_search_stats *stats);

/* Online Evolutionary Planning: a population of whole-turn genomes, uniform crossover
 * with the if-allowed rule and repair, mutation, truncation selection. Needs a budget.
 * With p->islands > 1 the budget applies to each island (they run at once, in lockstep)
 * and the stats add up the islands' generations, evaluations and genomes. */
int mg_search_oep(const mg_game_vt *vt, const void *st, const mg_search_params *p,
                  mg_rng *rng, mg_action *plan, int *plan_len, mg_search_stats *stats);

/* Flat UCB over p->arms whole moves (p->moves), the thesis's bandit (spec/cards.md §8.3):
 * each pull replays one move on a fresh determinization of st (st itself when it is a full
 * state), finishing the turn with END_TURN where the move stops being legal, then plays a
 * rollout of p->rollout_turns turns; an arm's value is xbar + c sqrt(2 ln N / n) with the
 * reward in [-1, 1] (the thesis's scale, not MCTS's). Needs a budget; an iteration is a
 * pull. */
int mg_search_ucb(const mg_game_vt *vt, const void *st, const mg_search_params *p,
                  mg_rng *rng, mg_action *plan, int *plan_len, mg_search_stats *stats);

/* Evolutionary MCTS (mg_search_emcts.c): UCB over a tree of genomes whose edges are
 * mutations, the heuristic of a genome's end state as its value, the best genome seen as
 * the plan; FH-EMCTS with p->horizon > 0. Needs a budget; an iteration is a genome built and
 * evaluated. */
int mg_search_emcts(const mg_game_vt *vt, const void *st, const mg_search_params *p,
                    mg_rng *rng, mg_action *plan, int *plan_len, mg_search_stats *stats);

/* Greedy reply (mg_search_reply.c): greedy turn's p->arms best turns of the mover, each
 * answered by p->rollout_turns greedy turns (the opponent's on st's hidden cards, then the
 * mover's next, ...), the turn worth most to the mover after them. Half a time budget goes
 * to the mover's turn, the rest to the answers; an iteration budget bounds each phase. An
 * iteration is an outcome evaluated. */
int mg_search_reply(const mg_game_vt *vt, const void *st, const mg_search_params *p,
                    mg_rng *rng, mg_action *plan, int *plan_len, mg_search_stats *stats);

/* RMP: a uniformly random move among the first p->max_moves moves of the move tree of st
 * (depth first on clones, states already reached skipped with p->transpositions), or among
 * the longest of them (p->longest, RMPmax). No budget; iterations = moves generated. */
int mg_search_rmp(const mg_game_vt *vt, const void *st, const mg_search_params *p,
                  mg_rng *rng, mg_action *plan, int *plan_len, mg_search_stats *stats);

/* UCT over atomic actions (spec/cards.md §8.4): one tree of the mover's turn whose nodes
 * keep the state made when they were expanded (closed loop), END_TURN the only edge into a
 * leaf, a random untried action expanded per iteration, a rollout from a fresh
 * determinization of the leaf's state (when st is an observation) of p->rollout_turns
 * turns, the reward in [-1, 1] for the root player at every depth, UCB xbar + c sqrt(2 ln
 * n / n_j). The plan follows the most visited child to END_TURN or to a node without
 * children, then p->post. p->max_nodes caps the tree (0: 65536), then iterations go on
 * without expanding. Needs a budget; an iteration is a simulation. */
int mg_search_uct(const mg_game_vt *vt, const void *st, const mg_search_params *p,
                  mg_rng *rng, mg_action *plan, int *plan_len, mg_search_stats *stats);

/* The number of moves of the move tree of st that RMP generates (depth first, at most
 * `max_moves`, states already reached skipped when `prune`), and the longest's length in
 * *longest (may be NULL). Tests compare it with a brute-force enumeration. */
long mg_count_moves(const mg_game_vt *vt, const void *st, long max_moves, int prune, mg_rng *rng,
                    int *longest);

/* One action chosen by `policy` from the legal list acts[0..n) of state st (n > 0). The
 * META and EGREEDY policies use vt->action_groups when the game has it. */
mg_action mg_policy_choose(const mg_game_vt *vt, const void *st, const mg_action *acts, int n,
                           const mg_search_params *p, int policy, mg_rng *rng);

/* Play `policy` from st (advanced in place) for p->rollout_turns turns or to the end of
 * the game; return the reward in [0, 1] for `player` (see value_scale). */
double mg_rollout(const mg_game_vt *vt, void *st, const mg_search_params *p, int player,
                  mg_rng *rng);

#endif
