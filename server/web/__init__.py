"""maag.server.web: the web view of a referee server (`maag serve --web`, `maag ladder --web`;
docs/web.md). aiohttp; the page is plain JavaScript modules and CSS in static/ (no build
step, nothing loaded from elsewhere).

- `app.py`: `WebServer` (routes, JSON of stored games, WebSockets), `WebConfig`
- `live.py`: `LiveGames`, the spectators' pushes (coalesced, no polling)
- `play.py`: `Seats` and `HumanSeat`, a person's seat as a protocol client of the referee
- `people.py`: people's results by stated experience, with Wilson intervals
- `uploads.py`: `Submissions`, hosted bots' uploads with their token (HTTP handlers of the
  bot's versions), putting together `signin.py` (sign-in sessions, the lobby's throttle on
  wrong tokens), `botpage.py` (the bot's page: versions, games, its standing and rating
  history from maag.stats) and `worker.py` (the processing queue: build and validation
  through maag.server.hosting)
- `address.py`: `--web [HOST:]PORT`
- `govern.py`: `Governing`, the host's rulings from the page (a host's sign-in, void, pardon)
- `origin.py`: `cross_site`, a browser's request from another site (refused where a cookie acts)
- `static/`: the page; `static/js/render/<game>.js` draws one game (heroes), others fall back
  to `render/generic.js` (the position's JSON)

What a spectator sees is the referee's redaction (maag.server.referee.spectator)."""
