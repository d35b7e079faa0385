"""Competitions: a match between two bots (match.py), a match on a running referee through relays
that cap each bot's games (remote.py), the embedded referee with bot processes that
tournaments use (arena.py), tournament formats (formats.py), the resumable tournament runner
(runner.py), the continuous ladder (ladder.py; the submitted bots it hosts: ladder_hosted.py;
its lock, one scheduler per database: ladder_lock.py; its record of rated games, strikes and
rulings: ladder_record.py; its events and standings files: ladder_report.py; its scheduling
over a fleet of referee processes is maag.server.fleet's) and who plays whom on it
(pairing.py), the strike policy (strikes.py). Hosted bots and participants' submissions are
maag.server.hosting's (its api.py); ratings are maag.stats'."""
