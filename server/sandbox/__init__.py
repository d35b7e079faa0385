"""The sandbox: how maag runs a stranger's bot (docs/hosting.md).

- `package.py`: a bot package (a folder or archive with `maag-bot.toml`), checked and unpacked safely.
- `archive.py`: unpacking an archive a stranger made (a package, a build's result) without ever following
  a link: members counted and capped as they are read, every file created through its folder's descriptor.
- `fdwrite.py`: the tree archive.py unpacks, written below its top folder's descriptor, never through a
  link.
- `limits.py`: what a hosted bot may use (memory, processes, scratch, log, start-up time), with defaults.
- `cgroups.py`: control groups, v1 and v2: one group per bot process under maag's own; limits,
  freezing, CPU accounting, killing; groups of killed maag processes removed.
- `jail.py`: one sandboxed process: bubblewrap namespaces (no network: the referee connection is an
  inherited socket), an unprivileged uid of its own, rlimits, its output captured with a cap, its
  verdict (memory, crash) when it ends.
- `seccomp.py`: the system call filter every sandbox runs under (libseccomp through pyseccomp, loaded by
  bubblewrap): no keyring, tracing, eBPF, perf, namespaces, mounts, modules or clock changes.
- `keyring.py`: the kernel keyring kept apart: a fresh session keyring per sandbox, a sandbox uid's user
  keyrings emptied around each use.
- `environment.py`: the cleared environment every bot process gets, sandboxed or not.
- `check.py`: `maag sandbox check`, which mechanisms work here and what a host lacking one must do.

This room knows nothing of the referee: maag.server.hosting attaches a jail to a game.
"""
