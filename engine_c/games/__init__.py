"""maag.engine.games: one subpackage per game (its folder also holds the game's C sources).
The list of games is games.def beside this file; `maag.engine.registry` reads it."""
