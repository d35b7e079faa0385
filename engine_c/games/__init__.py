"""maag.engine.games: one subpackage per game (its folder also holds the game's C sources).
The list of games is games.def beside this file; `maag.engine.registry` reads it.

  heroes/    Hero Academy (the reference game; conformance traces)
  cards/     a Hearthstone-like card game: hidden hands, random draws and targets
  conquest/  a TripleA map: whole armies move, dice decide battles; its own agents
  nim/       multi-action Nim, the smallest game

Each game's __init__.py says what its modules do."""
