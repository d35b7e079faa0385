"""The one way compete/, web/, cli/ and bench/ use hosting: these names, nothing else of the
room's modules (what each does is said where it is defined)."""

from __future__ import annotations

from maag.server.hosting.builder import build
from maag.server.hosting.host import Host, hosted_bot
from maag.server.hosting.options import (
    PONDER,
    STORED_PREFIX,
    HostedBot,
    HostOptions,
    SandboxUnavailable,
    check_threads,
    default_max_threads,
    safe_name,
    sandbox_env,
    sandbox_path,
)
from maag.server.hosting.relay import RelayedJail, launch_relayed
from maag.server.hosting.store import PackageStore, package_store
from maag.server.hosting.submissions import (
    DEFAULT_MAX_UPLOAD,
    PACKAGE_PREFIX,
    SubmissionRejected,
    pack,
    process,
    process_pending,
    resolve_bot,
    submit,
)

__all__ = ["Host", "HostedBot", "HostOptions", "SandboxUnavailable", "PONDER", "STORED_PREFIX",
           "PACKAGE_PREFIX", "DEFAULT_MAX_UPLOAD", "SubmissionRejected", "PackageStore", "RelayedJail",
           "build",
           "check_threads", "default_max_threads", "hosted_bot", "launch_relayed", "pack", "package_store",
           "process", "process_pending", "resolve_bot", "safe_name", "sandbox_env", "sandbox_path", "submit"]
