/* cdef.h: the card game's declarations for cffi (read by engine_c/build_engine.py; cffi's
 * cdef syntax: `...` leaves sizes and layouts to the compiler). */
#define CD_HAND_MAX ...
#define CD_BOARD_MAX ...
#define CD_DECK_SIZE ...
#define CD_SECRETS_MAX ...
#define CD_ENCH_MAX ...
#define CD_UNKNOWN ...
#define CD_CARD_SLOTS ...
typedef struct cd_card { const char *id; const char *name; uint8_t cls; uint8_t cost; uint8_t type; uint8_t atk;
                         uint8_t hp; uint8_t kw; uint8_t legendary; uint8_t first_op; uint8_t nops;
                         int8_t aura_atk; int8_t aura_hp; int8_t enrage_atk; int8_t enrage_hp;
                         uint8_t enrage_kw; uint16_t triggers; } cd_card;
typedef struct cd_config { int deck[2]; int hero[2]; int first; int ply_limit; } cd_config;
typedef struct cd_ench { uint8_t src; uint8_t kind; int8_t atk; int8_t hp; } cd_ench;
typedef struct cd_minion {
    uint16_t eid; uint8_t card; uint8_t kw; int16_t hp; int16_t max_hp; int16_t atk;
    uint8_t frozen; uint8_t silenced; uint8_t fresh; uint8_t attacks_used; uint8_t ekw; uint8_t nench;
    int8_t aura_atk; int8_t aura_hp; cd_ench ench[6];
} cd_minion;
typedef struct cd_player {
    int16_t hp; int16_t armor; uint8_t hero_class; uint8_t frozen; uint8_t immune; uint8_t attacks_used;
    uint8_t weapon; int8_t weapon_atk; int8_t weapon_dur; uint16_t weapon_eid;
    uint8_t mana; uint8_t max_mana; uint8_t overload_locked; uint8_t overload_pending;
    uint8_t power_used; uint8_t cards_played; uint8_t fatigue; uint8_t deck_mode;
    uint8_t nhand; uint8_t ndeck; uint8_t nsecrets; uint8_t nboard;
    uint8_t hand[10]; uint8_t deck[30]; uint8_t secrets[5]; uint16_t secret_eid[5];
    cd_minion board[7]; uint8_t revealed[80];
    ...;
} cd_player;
typedef struct cd_state {
    cd_player p[2]; uint16_t ply; uint16_t ply_limit; uint16_t next_eid; uint8_t current; uint8_t first;
    uint8_t terminal; int8_t winner; int8_t observer; uint8_t capped;
} cd_state;
extern const mg_game_vt mg_cards_vt;
const cd_card *cd_card_info(int card);
int cd_card_count(void);
void cd_refresh(cd_state *st);
int cd_can_attack(const cd_state *st, int seat, int slot);
