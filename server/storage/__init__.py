"""Storage of bots, games, replays, tournaments and submitted bots: three stores written once
over one backend interface, opened through one URL dispatcher.

- backend.py: `Database`, what a backend implements (transactions, reads, its SQL dialect,
  schema and migrations, a lock held until the process dies); the errors; `resolve_db`, the
  one place a database is named (`--db`, else `$MAAG_DB`, else the default file: a path,
  `sqlite:///PATH`, `postgresql://...`; anything else refused), and `open_database`, which
  opens it through its backend module.
- sqlite.py: the SQLite backend (one file, WAL, durable commits, `flock` locks).
- postgres.py: the PostgreSQL backend (reconnection, schema under an advisory lock,
  advisory locks).
- base.py: the games store `Storage` (bots and tokens, games, results, replays, the referees'
  leases), `open_storage`, and `AsyncStorage` (a Storage on one worker thread).
- worker.py: that thread, `StorageThread`: jobs in order, those queued behind a commit
  committed together (group commit; each job a savepoint of the batch).
- tournaments.py: the tournaments' schedule (`TournamentStore`, `open_tournament_store`).
- submissions.py: submitted bots' versions and packages (`SubmissionStore`,
  `open_submission_store`).
- rulings.py: the host's rulings (a game voided, a bot's strikes pardoned), with who, when
  and why.
- spill.py: results waiting on disk for their database.
- schema.py: the games store's tables and their migrations (the fleet's tables among them,
  so that every database has them from its first opening).

A new backend is one module beside sqlite.py and postgres.py and one line of
backend.BACKENDS (docs/architecture.md, "Adding a storage backend")."""
