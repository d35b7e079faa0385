"""The card game's Python codec: options, the readable action form (docs/protocol.md, "The
card game"), the reading of a JSON state or observation, and what an opponent sees. No rules
here: those are in C, and so is the only writer of a state's JSON form (cards_wire.c, decoded
by `State.to_json`). Seats are 1 and 2 in every JSON form, as in the protocol."""

from __future__ import annotations

from typing import Any

from ..._lowlevel import StateError, ffi, lib
from ...registry import GameOption
from .decks import DECKS
from .pool import POOL, TOKENS

CARDS = [c.id for c in POOL + TOKENS]  # card number i + 1 is CARDS[i]
CARD = {c.id: c for c in POOL + TOKENS}
NUMBER = {cid: i + 1 for i, cid in enumerate(CARDS)}
HEROES = ["mage", "paladin"]
DECK_NAMES = ["M", "P", "X", "random"]
UNKNOWN = 255
HERO_SLOT = 7
KW = ["taunt", "charge", "ds", "stealth", "windfury"]  # bit i of a minion's keywords
ENCH_KINDS = {1: "buff", 2: "enrage"}

OPTIONS = (
    GameOption("deck1", str, "M", "seat 1's deck: M (Mage control), P (Paladin midrange), X (mixed "
               "keywords) or random (30 cards from the pool)", tuple(DECK_NAMES)),
    GameOption("deck2", str, "P", "seat 2's deck, as deck1", tuple(DECK_NAMES)),
    GameOption("hero1", str, None, "seat 1's hero, mage or paladin (default: the deck's; random decks: "
               "mage for seat 1, paladin for seat 2)", tuple(HEROES)),
    GameOption("hero2", str, None, "seat 2's hero, as hero1", tuple(HEROES)),
    GameOption("first", str, "random", "the seat that plays first: 1, 2 or random (drawn from the seed)",
               ("1", "2", "random")),
    GameOption("ply_limit", int, 89, "a tie after this ply (spec §1), 1..1000"),
)


def make_config(options: dict[str, Any]) -> dict[str, Any]:
    """Complete a card-game config with its defaults, checking every value (values given on
    a command line arrive as text and are read here)."""
    unknown = set(options) - {o.name for o in OPTIONS}
    if unknown:
        raise ValueError(f"unknown cards option(s): {', '.join(sorted(unknown))}")
    cfg = {o.name: options.get(o.name, o.default) for o in OPTIONS}
    for key in ("deck1", "deck2"):
        if cfg[key] not in DECK_NAMES:
            raise ValueError(f"{key} must be one of {', '.join(DECK_NAMES)}, not {cfg[key]!r}")
    for key in ("hero1", "hero2"):
        if cfg[key] is not None and cfg[key] not in HEROES:
            raise ValueError(f"{key} must be mage or paladin, not {cfg[key]!r}")
    first = cfg["first"]
    cfg["first"] = str(first) if first in (1, 2, "1", "2") else first
    if cfg["first"] not in ("1", "2", "random"):
        raise ValueError(f"first must be 1, 2 or random, not {first!r}")
    limit = cfg["ply_limit"]
    if isinstance(limit, str) and limit.isdigit():
        limit = int(limit)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 1000:
        raise ValueError(f"ply_limit must be an integer in 1..1000, not {cfg['ply_limit']!r}")
    cfg["ply_limit"] = limit
    return cfg


def fill_config(cfg: dict[str, Any], out: Any) -> None:
    c = ffi.cast("cd_config *", out)
    for s in (0, 1):
        c.deck[s] = DECK_NAMES.index(cfg[f"deck{s + 1}"])
        hero = cfg[f"hero{s + 1}"]
        c.hero[s] = -1 if hero is None else HEROES.index(hero)
    c.first = -1 if cfg["first"] == "random" else int(cfg["first"]) - 1
    c.ply_limit = cfg["ply_limit"]


# ---- actions ---------------------------------------------------------------------------------
# Code: type in bits 0-1 (0 end_turn, 1 play, 2 attack, 3 power), hand slot or attacker in
# bits 2-5 (7: the hero), target in bits 6-10 (0 none, else 1 + 8 * seat + slot, slot 7 the
# hero, seats 0-based), the played card's number in bits 11-17 (mg_cards.h).

TYPES = ["end_turn", "play", "attack", "power"]


def _ref_to_dict(code: int) -> dict[str, Any] | None:
    if code == 0:
        return None
    seat, slot = divmod(code - 1, 8)
    return {"player": seat + 1, "hero": True} if slot == HERO_SLOT else {"player": seat + 1, "pos": slot}


def action_to_dict(code: int) -> dict[str, Any]:
    t, src, target, card = code & 3, (code >> 2) & 15, (code >> 6) & 31, (code >> 11) & 127
    if t == 0:
        return {"type": "end_turn"} if code == 0 else {"type": "?", "code": code}
    if t == 1:
        return {"type": "play", "hand_index": src,
                "card": CARDS[card - 1] if 1 <= card <= len(CARDS) else "?", "target": _ref_to_dict(target)}
    if t == 2:
        return {"type": "attack", "attacker": {"hero": True} if src == HERO_SLOT else {"pos": src},
                "target": _ref_to_dict(target)}
    return {"type": "power", "target": _ref_to_dict(target)}


def _int_field(d: dict[str, Any], key: str, lo: int, hi: int, where: str) -> int:
    if key not in d:
        raise ValueError(f"missing field {key!r}{where}")
    v = d[key]
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise ValueError(f"field {key!r}{where} must be an integer in {lo}..{hi}, not {v!r}")
    return v


def _ref_code(ref: Any, key: str) -> int:
    """The target code of a reference {"player": 1|2, "hero": true} or {"player", "pos"}."""
    if ref is None:
        return 0
    where = f" of {key!r}"
    if not isinstance(ref, dict):
        raise ValueError(f"action field {key!r} must be null or a map like {{\"player\": 2, \"hero\": true}}")
    extra = set(ref) - {"player", "hero", "pos"}
    if extra:
        raise ValueError(f"unexpected field(s){where}: {', '.join(sorted(extra))}")
    seat = _int_field(ref, "player", 1, 2, where) - 1
    if ref.get("hero") is True and "pos" not in ref:
        return 1 + 8 * seat + HERO_SLOT
    if "hero" in ref and ref["hero"] is not False:
        raise ValueError(f"field 'hero'{where} must be true (or absent with 'pos')")
    return 1 + 8 * seat + _int_field(ref, "pos", 0, 6, where)


def _only(d: dict[str, Any], allowed: set[str], t: str) -> None:
    extra = set(d) - allowed
    if extra:
        raise ValueError(f"unexpected field(s) for a {t} action: {', '.join(sorted(extra))}")


def action_from_dict(d: dict[str, Any]) -> int:
    """The integer code of a readable action; ValueError naming the bad field."""
    if not isinstance(d, dict):
        raise ValueError("an action must be a map with a 'type' field")
    t = d.get("type")
    t = t.lower() if isinstance(t, str) else t
    if t not in TYPES:
        raise ValueError(f"action type must be one of {', '.join(TYPES)}, not {d.get('type')!r}")
    if t == "end_turn":
        _only(d, {"type"}, t)
        return 0
    if t == "play":
        _only(d, {"type", "hand_index", "card", "target"}, t)
        h = _int_field(d, "hand_index", 0, 9, "")
        if "card" not in d:
            raise ValueError("missing field 'card'")
        if not isinstance(d["card"], str) or d["card"] not in NUMBER:
            raise ValueError(f"action field 'card' must be a card id such as 'N01' or 'T_COIN', "
                             f"not {d['card']!r}")
        return 1 | h << 2 | _ref_code(d.get("target"), "target") << 6 | NUMBER[d["card"]] << 11
    if t == "attack":
        _only(d, {"type", "attacker", "target"}, t)
        a = d.get("attacker")
        if not isinstance(a, dict):
            raise ValueError("missing field 'attacker' ({\"hero\": true} or {\"pos\": i})")
        _only({k: v for k, v in a.items() if k != "player"}, {"hero", "pos"}, "attack's attacker in an")
        src = HERO_SLOT if a.get("hero") is True else _int_field(a, "pos", 0, 6, " of 'attacker'")
        if "target" not in d or d["target"] is None:
            raise ValueError("missing field 'target'")
        return 2 | src << 2 | _ref_code(d["target"], "target") << 6
    _only(d, {"type", "target"}, t)
    return 3 | _ref_code(d.get("target"), "target") << 6


def public_action(action: dict[str, Any]) -> dict[str, Any]:
    """What the opponent sees of an action: all of it, except which secret was played (a
    secret is played face down: spec §7.2)."""
    if action.get("type") == "play" and action.get("card") in CARD and CARD[action["card"]].type == "Se":
        return {"type": "play", "hand_index": action["hand_index"], "card": "secret", "target": None}
    return action


# ---- JSON states, read (cards_wire.c writes them) ----------------------------------------------


def _fail(msg: str) -> StateError:
    return StateError(lib.MG_ERR_STATE, msg)


def _int(obj: dict[str, Any], key: str, lo: int, hi: int, where: str = "") -> int:
    v = obj.get(key)
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise _fail(f"state field {where}{key!r} must be an integer in {lo}..{hi}, not {v!r}")
    return v


def _bool(obj: dict[str, Any], key: str, where: str = "", default: bool | None = None) -> bool:
    v = obj.get(key, default)
    if not isinstance(v, bool):
        raise _fail(f"state field {where}{key!r} must be true or false, not {v!r}")
    return v


def _card(v: Any, where: str) -> int:
    if not isinstance(v, str) or v not in NUMBER:
        raise _fail(f"state field {where} must be a card id such as 'N01', not {v!r}")
    return NUMBER[v]


def _cards(obj: dict[str, Any], key: str, limit: int, where: str) -> list[int]:
    v = obj.get(key, [])
    if not isinstance(v, list) or len(v) > limit:
        raise _fail(f"state field {where}{key!r} must list at most {limit} cards")
    return [_card(c, f"{where}{key}[{i}]") for i, c in enumerate(v)]


def _multiset(v: dict[str, Any], where: str) -> list[int]:
    out: list[int] = []
    for cid, n in v.items():
        if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= 30:
            raise _fail(f"state field {where}[{cid!r}] must be a count in 0..30, not {n!r}")
        out += [_card(cid, f"{where} key")] * n
    return sorted(out)


def _load_minion(m: Any, d: Any, where: str) -> None:
    if not isinstance(d, dict):
        raise _fail(f"state field {where} must be a minion object")
    card = _card(d.get("card"), f"{where}.card")
    if CARD[CARDS[card - 1]].type != "Mi":
        raise _fail(f"state field {where}.card: {CARDS[card - 1]} is not a minion")
    m.card = card
    m.eid = _int(d, "eid", 3, 65535, f"{where}.")
    m.hp = _int(d, "hp", -100, 127, f"{where}.")
    kw = 0
    for b, k in enumerate(KW):
        if _bool(d, k, f"{where}.", False):
            kw |= 1 << b
    m.kw = kw
    m.frozen = _bool(d, "frozen", f"{where}.", False)
    m.silenced = _bool(d, "silenced", f"{where}.", False)
    m.fresh = _bool(d, "fresh", f"{where}.", _bool(d, "sick", f"{where}.", False))
    m.attacks_used = _int(d, "attacks_used", 0, 2, f"{where}.")
    ench = d.get("ench", [])
    if not isinstance(ench, list):
        raise _fail(f"state field {where}.ench must be a list")
    kept = 0
    for j, e in enumerate(ench):
        if not isinstance(e, dict) or e.get("kind") not in ("buff", "enrage", "aura"):
            raise _fail(f"state field {where}.ench[{j}] must have a kind buff, enrage or aura")
        atk = _int(e, "atk", -100, 100, f"{where}.ench[{j}].")
        hp = _int(e, "hp", -100, 100, f"{where}.ench[{j}].")
        if e["kind"] == "aura":  # derived: recomputed from the board
            continue
        if kept == lib.CD_ENCH_MAX:
            raise _fail(f"state field {where}.ench: at most {lib.CD_ENCH_MAX} buffs and enrage")
        m.ench[kept].src = _card(e.get("src"), f"{where}.ench[{j}].src")
        m.ench[kept].kind = 1 if e["kind"] == "buff" else 2
        m.ench[kept].atk = atk
        m.ench[kept].hp = hp
        kept += 1
    m.nench = kept


def _load_player(p: Any, d: Any, seat: int, observer: int, where: str) -> list[tuple[str, int]]:
    """Fill one player; returns the derived values to check after the refresh."""
    if not isinstance(d, dict):
        raise _fail(f"state field {where} must be a player object")
    hero = d.get("hero")
    if not isinstance(hero, dict):
        raise _fail(f"state field {where}.hero must be an object")
    cls = hero.get("class", str(hero.get("card", "")).lower())
    if cls not in HEROES:
        raise _fail(f"state field {where}.hero.class must be mage or paladin, not {cls!r}")
    p.hero_class = HEROES.index(cls)
    p.hp = _int(hero, "hp", -100, 30, f"{where}.hero.")
    p.armor = _int(hero, "armor", 0, 1000, f"{where}.hero.")
    p.frozen = _bool(hero, "frozen", f"{where}.hero.")
    p.immune = _bool(hero, "immune", f"{where}.hero.")
    p.attacks_used = _int(hero, "attacks_used", 0, 2, f"{where}.hero.")
    w = d.get("weapon")
    if w is not None:
        if not isinstance(w, dict):
            raise _fail(f"state field {where}.weapon must be null or an object")
        p.weapon = _card(w.get("card"), f"{where}.weapon.card")
        if CARD[CARDS[p.weapon - 1]].type != "We":
            raise _fail(f"state field {where}.weapon.card: {w.get('card')} is not a weapon")
        p.weapon_atk = _int(w, "atk", 0, 100, f"{where}.weapon.")
        p.weapon_dur = _int(w, "durability", -10, 100, f"{where}.weapon.")
        eid = w.get("eid", 0)
        p.weapon_eid = eid if isinstance(eid, int) and not isinstance(eid, bool) and 0 <= eid < 65536 else 0
    for key, hi in (("mana", 20), ("max_mana", 10), ("overload_locked", 20), ("overload_pending", 20),
                    ("cards_played_this_turn", 60), ("fatigue", 60)):
        setattr(p, {"cards_played_this_turn": "cards_played"}.get(key, key), _int(d, key, 0, hi, f"{where}."))
    p.power_used = _bool(d, "power_used", f"{where}.")
    deck_list = d.get("deck_list", "random")
    if deck_list not in DECK_NAMES:
        raise _fail(f"state field {where}.deck_list must be one of {', '.join(DECK_NAMES)}, "
                    f"not {deck_list!r}")
    p.deck_mode = DECK_NAMES.index(deck_list)
    hidden = observer >= 0 and observer != seat
    if hidden:
        p.nhand = _int(d, "hand_count", 0, 10, f"{where}.")
        p.ndeck = _int(d, "deck_count", 0, 30, f"{where}.")
        p.nsecrets = _int(d, "secret_count", 0, 5, f"{where}.")
        for i in range(p.nhand):
            p.hand[i] = UNKNOWN
        for i in range(p.ndeck):
            p.deck[i] = UNKNOWN
        for i in range(p.nsecrets):
            p.secrets[i] = UNKNOWN
    else:
        hand = _cards(d, "hand", 10, f"{where}.")
        secrets = _cards(d, "secrets", 5, f"{where}.")
        deck_v = d.get("deck", [])
        if isinstance(deck_v, dict):  # a multiset, as an observer's own deck
            deck = _multiset(deck_v, f"{where}.deck")
        else:
            deck = _cards(d, "deck", 30, f"{where}.")
        if len(deck) > 30:
            raise _fail(f"state field {where}.deck holds more than 30 cards")
        if "deck_count" in d and d["deck_count"] != len(deck):
            raise _fail(f"state field {where}.deck_count is {d['deck_count']!r} "
                        f"but the deck holds {len(deck)}")
        if len(set(secrets)) != len(secrets) or any(CARD[CARDS[c - 1]].type != "Se" for c in secrets):
            raise _fail(f"state field {where}.secrets must list distinct secret cards")
        p.nhand, p.ndeck, p.nsecrets = len(hand), len(deck), len(secrets)
        for i, c in enumerate(hand):
            p.hand[i] = c
        for i, c in enumerate(deck):
            p.deck[i] = c
        for i, c in enumerate(secrets):
            p.secrets[i] = c
    eids = d.get("secret_eids", [0] * p.nsecrets)
    if not isinstance(eids, list) or len(eids) != p.nsecrets:
        raise _fail(f"state field {where}.secret_eids must list one eid per secret")
    for i, e in enumerate(eids):
        p.secret_eid[i] = e if isinstance(e, int) and 0 <= e < 65536 else 0
    board = d.get("board", [])
    if not isinstance(board, list) or len(board) > 7:
        raise _fail(f"state field {where}.board must list at most 7 minions")
    p.nboard = len(board)
    checks: list[tuple[str, int]] = []
    for i, m in enumerate(board):
        _load_minion(p.board[i], m, f"{where}.board[{i}]")
        for key in ("atk", "max_hp", "windfury"):
            if key in m:
                v = m[key]  # (windfury is written as true or false)
                if not isinstance(v, int):
                    raise _fail(f"state field {where}.board[{i}].{key} must be an integer, not {v!r}")
                checks.append((f"{where}.board[{i}].{key}", int(v)))
    revealed = d.get("revealed", {})
    if not isinstance(revealed, dict):
        raise _fail(f"state field {where}.revealed must map card ids to counts")
    for cid, n in revealed.items():
        if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= 255:
            raise _fail(f"state field {where}.revealed[{cid!r}] must be a count")
        p.revealed[_card(cid, f"{where}.revealed key")] = n
    return checks


def state_from_json(obj: dict[str, Any], cfg: dict[str, Any], out: Any) -> None:
    """Fill `out` (a zeroed cd_state) from the JSON form, checking every field; StateError
    naming the field. A deck may be an ordered list (top first) or a multiset {card: n}
    (then sorted); eids missing from minions are numbered in board order; the derived
    attack, maximum health and Windfury, when given, must agree with the rules."""
    if not isinstance(obj, dict):
        raise _fail("a state must be a JSON object")
    s = ffi.cast("cd_state *", out)
    observer = obj.get("observer")
    if observer is not None and (isinstance(observer, bool) or observer not in (1, 2)):
        raise _fail("state field 'observer' must be 1 or 2 when present")
    s.observer = observer - 1 if observer else -1
    players = obj.get("players")
    if not isinstance(players, list) or len(players) != 2:
        raise _fail("state field 'players' must list the two players")
    checks: list[tuple[str, int]] = []
    for seat in (0, 1):
        checks += _load_player(s.p[seat], players[seat], seat, s.observer, f"players[{seat}]")
    s.ply_limit = _int(dict(obj, ply_limit=obj.get("ply_limit", cfg["ply_limit"])), "ply_limit", 1, 1000)
    s.ply = _int(obj, "ply", 1, s.ply_limit)
    s.current = _int(obj, "current", 1, 2) - 1
    s.first = _int(obj, "first", 1, 2) - 1
    terminal = _bool(obj, "terminal")
    winner = _int(obj, "winner", 0, 2)
    if winner and not terminal:
        raise _fail("state field 'winner' must be 0 while the game goes on")
    s.terminal = terminal
    s.winner = winner - 1 if terminal else -1
    s.capped = _bool(obj, "capped", "", False)
    eids = [s.p[q].board[i].eid for q in (0, 1) for i in range(s.p[q].nboard)]
    if len(set(eids)) != len(eids):
        raise _fail("state: two minions share an eid")
    next_eid = obj.get("next_eid", max(eids + [2]) + 1)
    if isinstance(next_eid, bool) or not isinstance(next_eid, int) or not max(eids + [2]) < next_eid < 65536:
        raise _fail("state field 'next_eid' must be an integer above every minion's eid, below 65536")
    s.next_eid = next_eid
    lib.cd_refresh(s)
    for seat in (0, 1):  # a keyword an active enrage gives is not the minion's own
        for i in range(s.p[seat].nboard):
            m = s.p[seat].board[i]
            m.kw &= ~m.ekw & 0xFF
    got = {}
    for seat in (0, 1):
        for i in range(s.p[seat].nboard):
            m = s.p[seat].board[i]
            got[f"players[{seat}].board[{i}].atk"] = m.atk
            got[f"players[{seat}].board[{i}].max_hp"] = m.max_hp
            got[f"players[{seat}].board[{i}].windfury"] = int(bool((m.kw | m.ekw) & 16))
    for path, want in checks:
        if got[path] != want:
            raise _fail(f"state field {path} is {want} but the card, its enchantments and auras "
                        f"give {got[path]}")


def unseen(observation: dict[str, Any]) -> dict[str, int]:
    """The cards the observer has not seen of the opponent's (its hand, deck and secrets
    together), by card id: its decklist (and The Coin for the second player) minus what it
    revealed. Empty for a random deck, whose list nobody knows."""
    opp = observation["players"][2 - observation["observer"]]
    if opp["deck_list"] not in DECKS:
        return {}
    left: dict[str, int] = {}
    for cid, n in DECKS[opp["deck_list"]][1]:
        left[cid] = left.get(cid, 0) + n
    if observation["first"] == observation["observer"]:
        left["T_COIN"] = 1
    for cid, n in opp.get("revealed", {}).items():
        if cid in left:
            left[cid] = max(0, left[cid] - n)
    return {k: v for k, v in left.items() if v}
