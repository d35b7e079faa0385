/* cdef.h: conquest's declarations for cffi (read by engine_c/build_engine.py). */
#define CQ_MAX_T ...
#define CQ_MAX_UNITS ...
#define CQ_MAX_TYPES ...
#define CQ_MAX_DEGREE ...
#define CQ_NONE ...
#define CQ_SUPPORTABLE ...
#define CQ_BLITZ ...
typedef struct cq_type {
    uint8_t attack, defense, move, cost, hp;
    uint8_t support;
    uint8_t flags;
    uint8_t name;
} cq_type;
typedef struct cq_config {
    int nterr, nunits, ntypes;
    int rounds;
    int victory;
    uint32_t adj[32];
    uint8_t tname[32];
    uint8_t start_owner[32];
    uint8_t capital[2];
    uint8_t pname[2];
    cq_type types[8];
    uint8_t utype[128];
    uint8_t uowner[128];
    uint8_t uloc[128];
} cq_config;
typedef struct cq_state {
    uint32_t adj[32];
    uint8_t tname[32];
    cq_type types[8];
    uint8_t ukind[128];
    uint8_t nterr, nunits, ntypes, victory;
    uint8_t capital[2], pname[2];
    uint16_t rounds;
    uint16_t round;
    uint8_t player;
    uint8_t phase;
    int8_t winner;
    uint8_t by;
    int8_t observer;
    uint8_t join_mid, join_dst;
    uint8_t join_src;
    uint8_t join_blitz;
    uint8_t pad[3];
    uint32_t owner1;
    uint32_t conquered;
    uint64_t moved[2];
    uint8_t loc[128];
} cq_state;
typedef struct cq_dice {
    mg_rng *rng;
    const uint8_t *seq;
    int n, used;
} cq_dice;
extern const mg_game_vt mg_conquest_vt;
int cq_apply_dice(cq_state *st, mg_action a, cq_dice *dice);
int cq_battle(cq_state *st, int t, cq_dice *dice);
int cq_territory(const cq_state *st, int name);
int cq_strength2(const cq_state *st, int t, int seat, int attacking);
enum { CQ_AGENT_NE, CQ_AGENT_BB, CQ_AGENT_OEP, CQ_AGENT_HEURISTIC, CQ_AGENT_EASY, CQ_AGENT_FAST,
       CQ_AGENT_HARD, CQ_AGENT_COUNT };
#define CQ_MAX_PLAN ...
typedef struct cq_agent_params {
    int agent;
    double budget_ms;
    long iterations;
    int max_phases;
    double win_base;
    double win_bonus;
    double unit_div;
    double c;
    double epsilon;
    int population;
    double survival;
    double mutation;
    int hard_runs;
    long max_nodes;
} cq_agent_params;
typedef struct cq_agent_stats {
    long iterations;
    long playouts;
    long nodes;
    long playout_phases;
    double elapsed_ms;
    double value;
} cq_agent_stats;
#define CQ_MAX_GROUP_OPTIONS ...
int cq_groups(const cq_state *st, uint8_t *terr_of, uint64_t *units);
int cq_group_actions(const cq_state *st, int t, const uint64_t *units, mg_action *codes);
int cq_agent_defaults(int agent, cq_agent_params *p);
int cq_agent_plan(const cq_state *st, const cq_agent_params *p, mg_rng *rng, mg_action *plan,
                  int *plan_len, cq_agent_stats *stats);
