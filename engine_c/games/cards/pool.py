"""The card pool of spec/cards.md §3.3-3.4, the one source of the card data: gen_tables.py
compiles it into cards_tables.h for the C rules, the codec reads names and ids from it, and
tests/test_cards_pool.py checks it against the spec's tables, card by card."""

from __future__ import annotations

from typing import NamedTuple


class Card(NamedTuple):
    id: str  # the spec's id: N01..S03, T_COIN, ...
    name: str
    cls: str  # N neutral, M Mage, P Paladin, R Rogue, S Shaman, T token
    cost: int
    type: str  # Mi minion, Sp spell, Se secret, We weapon
    atk: int
    hp: int  # health, or durability for a weapon
    text: str  # the card's text; for a token, what makes it
    enc: str  # the ability encoding of spec §3.2


POOL: tuple[Card, ...] = (
    Card('N01', 'Argent Squire', 'N', 1, 'Mi', 1, 1, 'Divine Shield', 'DS'),
    Card('N02', 'Elven Archer', 'N', 1, 'Mi', 1, 1, 'Battlecry: Deal 1 damage.', 'BC:DMG(ANY_CHAR,1)'),
    Card('N03', 'Leper Gnome', 'N', 1, 'Mi', 2, 1, 'Deathrattle: Deal 2 damage to the enemy hero.', 'DR:DMG(ENEMY_HERO,2)'),
    Card('N04', 'Stonetusk Boar', 'N', 1, 'Mi', 1, 1, 'Charge', 'CHARGE'),
    Card('N05', 'Worgen Infiltrator', 'N', 1, 'Mi', 2, 1, 'Stealth', 'STEALTH'),
    Card('N06', 'Young Dragonhawk', 'N', 1, 'Mi', 1, 1, 'Windfury', 'WINDFURY'),
    Card('N07', 'Acidic Swamp Ooze', 'N', 2, 'Mi', 3, 2, "Battlecry: Destroy your opponent's weapon.", 'BC:DESTROY_WEAPON(ENEMY)'),
    Card('N08', 'Amani Berserker', 'N', 2, 'Mi', 2, 3, 'Enrage: +3 Attack.', 'ENRAGE:BUFF(SELF,3,0)'),
    Card('N09', 'Bloodfen Raptor', 'N', 2, 'Mi', 3, 2, '—', ''),
    Card('N10', 'Ironbeak Owl', 'N', 2, 'Mi', 2, 1, 'Battlecry: Silence a minion.', 'BC:SILENCE(ANY_MINION)'),
    Card('N11', 'Knife Juggler', 'N', 2, 'Mi', 3, 2, 'After you summon a minion, deal 1 damage to a random enemy.', 'ON_SUMMON_FRIENDLY:SPLIT(ENEMIES,1)'),
    Card('N12', 'Loot Hoarder', 'N', 2, 'Mi', 2, 1, 'Deathrattle: Draw a card.', 'DR:DRAW(1)'),
    Card('N13', 'Mad Bomber', 'N', 2, 'Mi', 3, 2, 'Battlecry: Deal 3 damage randomly split between all other characters.', 'BC:SPLIT(OTHERS,3)'),
    Card('N14', 'Novice Engineer', 'N', 2, 'Mi', 1, 1, 'Battlecry: Draw a card.', 'BC:DRAW(1)'),
    Card('N15', 'Acolyte of Pain', 'N', 3, 'Mi', 1, 3, 'Whenever this minion takes damage, draw a card.', 'ON_DAMAGED:DRAW(1)'),
    Card('N16', 'Earthen Ring Farseer', 'N', 3, 'Mi', 3, 3, 'Battlecry: Restore 3 Health.', 'BC:HEAL(ANY_CHAR,3)'),
    Card('N17', 'Harvest Golem', 'N', 3, 'Mi', 2, 3, 'Deathrattle: Summon a 2/1 Damaged Golem.', 'DR:SUMMON(T_GOLEM,1)'),
    Card('N18', 'Injured Blademaster', 'N', 3, 'Mi', 4, 7, 'Battlecry: Deal 4 damage to HIMSELF.', 'BC:DMG(SELF,4)'),
    Card('N19', 'Jungle Panther', 'N', 3, 'Mi', 4, 2, 'Stealth', 'STEALTH'),
    Card('N20', 'Raging Worgen', 'N', 3, 'Mi', 3, 3, 'Enrage: Windfury and +1 Attack.', 'ENRAGE:BUFF(SELF,1,0);ENRAGE:GIVE(SELF,WINDFURY)'),
    Card('N21', 'Scarlet Crusader', 'N', 3, 'Mi', 3, 1, 'Divine Shield', 'DS'),
    Card('N22', 'Shattered Sun Cleric', 'N', 3, 'Mi', 3, 2, 'Battlecry: Give a friendly minion +1/+1.', 'BC:BUFF(FRIENDLY_MINION,1,1)'),
    Card('N23', 'Raid Leader', 'N', 3, 'Mi', 2, 2, 'Your other minions have +1 Attack.', 'AURA:BUFF(OTHER_FRIENDLY,1,0)'),
    Card('N24', 'Chillwind Yeti', 'N', 4, 'Mi', 4, 5, '—', ''),
    Card('N25', "Sen'jin Shieldmasta", 'N', 4, 'Mi', 3, 5, 'Taunt', 'TAUNT'),
    Card('N26', 'Spellbreaker', 'N', 4, 'Mi', 4, 3, 'Battlecry: Silence a minion.', 'BC:SILENCE(ANY_MINION)'),
    Card('N27', 'Abomination', 'N', 5, 'Mi', 4, 4, 'Taunt. Deathrattle: Deal 2 damage to ALL characters.', 'TAUNT;DR:DMG(ALL_CHARS,2)'),
    Card('N28', 'Stranglethorn Tiger', 'N', 5, 'Mi', 5, 5, 'Stealth', 'STEALTH'),
    Card('N29', 'Argent Commander', 'N', 6, 'Mi', 4, 2, 'Charge, Divine Shield', 'CHARGE;DS'),
    Card('N30', 'Boulderfist Ogre', 'N', 6, 'Mi', 6, 7, '—', ''),
    Card('N31', 'Cairne Bloodhoof', 'N', 6, 'Mi', 4, 5, 'Deathrattle: Summon a 4/5 Baine Bloodhoof.', 'LEGENDARY;DR:SUMMON(T_BAINE,1)'),
    Card('N32', 'Windfury Harpy', 'N', 6, 'Mi', 4, 5, 'Windfury', 'WINDFURY'),
    Card('N33', 'Stormwind Champion', 'N', 7, 'Mi', 6, 6, 'Your other minions have +1/+1.', 'AURA:BUFF(OTHER_FRIENDLY,1,1)'),
    Card('M01', 'Arcane Missiles', 'M', 1, 'Sp', 0, 0, 'Deal 3 damage randomly split among all enemies.', 'SP:SPLIT(ENEMIES,3)'),
    Card('M02', 'Mirror Image', 'M', 1, 'Sp', 0, 0, 'Summon two 0/2 minions with Taunt.', 'SP:SUMMON(T_IMAGE,2)'),
    Card('M03', 'Arcane Explosion', 'M', 2, 'Sp', 0, 0, 'Deal 1 damage to all enemy minions.', 'SP:DMG(ALL_ENEMY_MINIONS,1)'),
    Card('M04', 'Frostbolt', 'M', 2, 'Sp', 0, 0, 'Deal 3 damage to a character and Freeze it.', 'SP:DMG(ANY_CHAR,3);SP:FREEZE(SAME)'),
    Card('M05', 'Arcane Intellect', 'M', 3, 'Sp', 0, 0, 'Draw 2 cards.', 'SP:DRAW(2)'),
    Card('M06', 'Ice Block', 'M', 3, 'Se', 0, 0, 'Secret: When your hero takes fatal damage, prevent it and become Immune this turn.', 'SECRET(PRE_FATAL_DAMAGE_MY_HERO):CANCEL;IMMUNE_TURN(MY_HERO)'),
    Card('M07', 'Counterspell', 'M', 3, 'Se', 0, 0, 'Secret: When your opponent casts a spell, Counter it.', 'SECRET(PRE_CAST_SPELL_OPP):CANCEL'),
    Card('M08', 'Fireball', 'M', 4, 'Sp', 0, 0, 'Deal 6 damage.', 'SP:DMG(ANY_CHAR,6)'),
    Card('M09', 'Polymorph', 'M', 4, 'Sp', 0, 0, 'Transform a minion into a 1/1 Sheep.', 'SP:TRANSFORM(ANY_MINION,T_SHEEP)'),
    Card('M10', 'Water Elemental', 'M', 4, 'Mi', 3, 6, 'Freeze any character damaged by this minion.', 'ON_DEALT_DAMAGE:SELF_FREEZE_TARGET'),
    Card('M11', 'Blizzard', 'M', 6, 'Sp', 0, 0, 'Deal 2 damage to all enemy minions and Freeze them.', 'SP:DMG(ALL_ENEMY_MINIONS,2);SP:FREEZE(ALL_ENEMY_MINIONS)'),
    Card('M12', 'Flamestrike', 'M', 7, 'Sp', 0, 0, 'Deal 4 damage to all enemy minions.', 'SP:DMG(ALL_ENEMY_MINIONS,4)'),
    Card('P01', 'Blessing of Might', 'P', 1, 'Sp', 0, 0, 'Give a minion +3 Attack.', 'SP:BUFF(ANY_MINION,3,0)'),
    Card('P02', "Light's Justice", 'P', 1, 'We', 1, 4, '—', ''),
    Card('P03', 'Noble Sacrifice', 'P', 1, 'Se', 0, 0, 'Secret: When an enemy attacks, summon a 2/1 Defender as the new target.', 'SECRET(PRE_ATTACK_OPP):SUMMON(T_DEFENDER,1);RETARGET(NEW)'),
    Card('P04', 'Argent Protector', 'P', 2, 'Mi', 2, 2, 'Battlecry: Give a friendly minion Divine Shield.', 'BC:GIVE(FRIENDLY_MINION,DS)'),
    Card('P05', 'Holy Light', 'P', 2, 'Sp', 0, 0, 'Restore 6 Health.', 'SP:HEAL(ANY_CHAR,6)'),
    Card('P06', 'Consecration', 'P', 4, 'Sp', 0, 0, 'Deal 2 damage to all enemies.', 'SP:DMG(ALL_ENEMIES,2)'),
    Card('P07', 'Hammer of Wrath', 'P', 4, 'Sp', 0, 0, 'Deal 3 damage. Draw a card.', 'SP:DMG(ANY_CHAR,3);SP:DRAW(1)'),
    Card('P08', 'Truesilver Champion', 'P', 4, 'We', 4, 2, 'Whenever your hero attacks, restore 2 Health to it.', 'ON_HERO_ATTACK:HEAL(MY_HERO,2)'),
    Card('P09', 'Blessing of Kings', 'P', 4, 'Sp', 0, 0, 'Give a minion +4/+4.', 'SP:BUFF(ANY_MINION,4,4)'),
    Card('P10', 'Avenging Wrath', 'P', 6, 'Sp', 0, 0, 'Deal 8 damage randomly split among all enemies.', 'SP:SPLIT(ENEMIES,8)'),
    Card('P11', 'Guardian of Kings', 'P', 7, 'Mi', 5, 6, 'Battlecry: Restore 6 Health to your hero.', 'BC:HEAL(MY_HERO,6)'),
    Card('P12', 'Tirion Fordring', 'P', 8, 'Mi', 6, 6, 'Divine Shield, Taunt. Deathrattle: Equip a 5/3 Ashbringer.', 'LEGENDARY;DS;TAUNT;DR:EQUIP(T_ASHBRINGER)'),
    Card('R01', 'Defias Ringleader', 'R', 2, 'Mi', 2, 2, 'Combo: Summon a 2/1 Defias Bandit.', 'COMBO:SUMMON(T_BANDIT,1)'),
    Card('R02', 'Eviscerate', 'R', 2, 'Sp', 0, 0, 'Deal 2 damage. Combo: Deal 4 damage instead.', 'SP:DMG(ANY_CHAR,2);COMBO:DMG(ANY_CHAR,4)'),
    Card('R03', 'SI:7 Agent', 'R', 3, 'Mi', 3, 3, 'Combo: Deal 2 damage.', 'COMBO:DMG(ANY_CHAR,2)'),
    Card('R04', "Perdition's Blade", 'R', 3, 'We', 2, 2, 'Battlecry: Deal 1 damage. Combo: Deal 2 instead.', 'BC:DMG(ANY_CHAR,1);COMBO:DMG(ANY_CHAR,2)'),
    Card('S01', 'Lightning Bolt', 'S', 1, 'Sp', 0, 0, 'Deal 3 damage. Overload: (1)', 'SP:DMG(ANY_CHAR,3);SP:OVERLOAD(1)'),
    Card('S02', 'Feral Spirit', 'S', 3, 'Sp', 0, 0, 'Summon two 2/3 Spirit Wolves with Taunt. Overload: (2)', 'SP:SUMMON(T_WOLF,2);SP:OVERLOAD(2)'),
    Card('S03', 'Doomhammer', 'S', 5, 'We', 2, 8, 'Windfury, Overload: (2)', 'WINDFURY;BC:OVERLOAD(2)'),
)
"""The 64 collectible cards, in the spec's order."""

TOKENS: tuple[Card, ...] = (
    Card('T_COIN', 'The Coin', "T", 0, 'Sp', 0, 0, "second player's opening hand", 'SP:GAIN_MANA(1)'),
    Card('T_RECRUIT', 'Silver Hand Recruit', "T", 0, 'Mi', 1, 1, 'Reinforce', ''),
    Card('T_GOLEM', 'Damaged Golem', "T", 0, 'Mi', 2, 1, 'N17', ''),
    Card('T_BAINE', 'Baine Bloodhoof', "T", 0, 'Mi', 4, 5, 'N31', ''),
    Card('T_IMAGE', 'Mirror Image', "T", 0, 'Mi', 0, 2, 'M02', 'TAUNT'),
    Card('T_SHEEP', 'Sheep', "T", 0, 'Mi', 1, 1, 'M09', ''),
    Card('T_DEFENDER', 'Defender', "T", 0, 'Mi', 2, 1, 'P03', ''),
    Card('T_ASHBRINGER', 'Ashbringer', "T", 0, 'We', 5, 3, 'P12', ''),
    Card('T_BANDIT', 'Defias Bandit', "T", 0, 'Mi', 2, 1, 'R01', ''),
    Card('T_WOLF', 'Spirit Wolf', "T", 0, 'Mi', 2, 3, 'S02', 'TAUNT'),
)
"""The tokens (cost 0 for bookkeeping; only The Coin is ever in a hand)."""
