/* cdef.h: heroes' declarations for cffi (read by engine_c/build_engine.py; cffi's cdef
 * syntax: `...` leaves sizes and layouts to the compiler). */
#define HR_MAX_SQ ...
#define HR_NCARDS ...
#define HR_MAX_ACTIONS ...
typedef struct hr_unit { int16_t hp; uint8_t kind; uint8_t owner; uint8_t items; ...; } hr_unit;
typedef struct hr_config { int map; int deck; int ap; int start_ap; int turn_limit; int draws; } hr_config;
typedef struct hr_state {
    uint64_t zob;
    uint64_t occ[2];
    uint64_t alive;
    uint64_t crystals;
    int32_t deck_seed[2];
    hr_unit board[45];
    uint8_t hand[2][11];
    uint8_t deck[2][11];
    uint8_t hand_n[2];
    uint8_t deck_n[2];
    int16_t turn;
    int16_t turn_limit;
    int8_t ap;
    int8_t ap_per_turn;
    uint8_t current;
    uint8_t terminal;
    int8_t winner;
    uint8_t map;
    uint8_t w, h;
    uint8_t draws;
    uint8_t deck_kind;
    int8_t observer;
    ...;
} hr_state;
extern const mg_game_vt mg_heroes_vt;
extern const uint8_t hr_decks[3][11];
typedef struct hr_map { int w, h; uint8_t sq[45]; ...; } hr_map;
extern const hr_map hr_maps[3];
int hr_max_hp(const hr_unit *u);
uint64_t hr_zobrist_full(const hr_state *st);
int hr_finish_import(hr_state *st, char *err);
int hr_reference_legal_count(const hr_state *st);
