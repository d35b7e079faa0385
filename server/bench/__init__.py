"""`maag bench`: benchmarks; figures go to docs/benchmarks.md, tests never time.

  engine       `maag bench engine`: the rules core's throughput (maag.engine.kernels)
  search       `maag bench search`: the search kernels' speed on fixed mid-game states
  server       `maag bench server`: the referee's throughput and latency on loopback (its
               C bots of `--c-bots` in c/bench_bot.c): the runs and their figures
  server_cli   its command line and tables
  clients      its bots' process
  processes    its processes started and measured (referees, bots, the bare exchange)
  bare         the bare exchange `maag bench server` compares the referee with
  spectators   WebSocket spectators for `maag bench server --spectators N`
  soak         `maag bench soak`: a referee's memory under a long load
  iterations   `maag bench iterations`: an agent's iterations per turn through the referee
               and in-process, on the same positions
  hosting      `maag bench ponder` and `maag bench sandbox`: hosted bots' fair clocks and
               start-up cost (their bot packages in packages/)
  ladder       `maag bench ladder`: the ladder's bookkeeping at scale
  fleet        `maag bench fleet`: a fleet ladder's games per minute with 1, 2, 3 members
               (PostgreSQL; hosted and connected bots)
  netbed       machines on one machine: members in network namespaces behind HAProxy, and
               the faults machines have (tests/e2e/test_fleet_machines.py's bed)"""
