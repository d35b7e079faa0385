/* cdef.h: nim's declarations for cffi (read by engine_c/build_engine.py). */
#define NM_MAX_PILES ...
#define NM_MAX_PILE ...
#define NM_MAX_AP ...
typedef struct nm_config { int npiles; int piles[8]; int ap; int misere; int turn_limit; } nm_config;
typedef struct nm_state {
    uint8_t pile[8];
    uint8_t npiles;
    uint8_t taken;
    uint8_t ap;
    uint8_t ap_per_turn;
    uint8_t current;
    uint8_t terminal;
    int8_t winner;
    int8_t observer;
    uint8_t misere;
    int16_t turn;
    int16_t turn_limit;
    ...;
} nm_state;
extern const mg_game_vt mg_nim_vt;
