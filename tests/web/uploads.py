"""What the upload tests share (issue 43): a `maag serve --web` on nim at 300 ms a turn, the
bot packages they send (built as real archives), and plain HTTP calls to the web view."""

from __future__ import annotations

import http.client
import io
import json
import os
import shutil
import tarfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from .conftest import Served

ROOT = Path(__file__).resolve().parents[2]
GOOD = ROOT / "examples" / "python-bot"
FINAL = ("active", "rejected", "retired")


def need_sandbox() -> None:
    """Building and validating runs in the sandbox: bubblewrap and root (fail in CI without)."""
    if shutil.which("bwrap") is None or os.geteuid() != 0:
        if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
            pytest.fail("uploads are built in the sandbox: needs bubblewrap and root (CI)")
        pytest.skip("uploads are built in the sandbox: needs bubblewrap and root")


def serve(tmp: Path, *extra: str) -> Served:
    s = Served(tmp, ("--game", "nim", "--tc", "300ms", "--auth-delay", "200",
                     "--upload-log-dir", str(tmp / "upload-logs"), *extra))
    s.start()
    return s


def targz(folder: Path, arcname: str = "bot") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        tf.add(folder, arcname=arcname)
    return buf.getvalue()


def package(tmp: Path, name: str, *, build: str | None = None, run: str = "python3 bot.py",
            prelude: str = "", extra: dict[str, bytes] | None = None) -> Path:
    """A copy of examples/python-bot with another manifest (and `prelude` run first in bot.py)."""
    folder = tmp / name
    shutil.copytree(GOOD, folder)
    (folder / "maag-bot.toml").write_text(f'name = "{name}"\nrun = "{run}"\n' +
                                          (f'build = "{build}"\n' if build else ""))
    if prelude:
        bot = folder / "bot.py"
        text = bot.read_text()
        head, sep, rest = text.partition("from __future__ import annotations\n")
        bot.write_text(head + sep + prelude + "\n" + rest)
    for rel, data in (extra or {}).items():
        (folder / rel).write_bytes(data)
    return folder


def escaping_tar(marker: str) -> bytes:
    """A .tar.gz with a good package and one member `../NAME` that would land beside the folder
    it is unpacked into."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        tf.add(GOOD, arcname="bot")
        data = b"escaped\n"
        ti = tarfile.TarInfo(f"../{marker}")
        ti.size = len(data)
        tf.addfile(ti, io.BytesIO(data))
    return buf.getvalue()


def call(s: Served, method: str, path: str, body: bytes | None = None, *, token: str | None = None,
         ctype: str = "application/octet-stream", headers: dict[str, str] | None = None,
         timeout: float = 60) -> tuple[int, Any, float]:
    """(status, JSON answer, seconds it took)."""
    h = {"Content-Type": ctype, **(headers or {})}
    if token is not None:
        h["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(s.url + path, data=body, method=method, headers=h)
    t0 = time.monotonic()
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            status, raw = r.status, r.read()
    except urllib.error.HTTPError as e:
        status, raw = e.code, e.read()
    took = time.monotonic() - t0
    try:
        return status, json.loads(raw), took
    except ValueError:
        return status, raw.decode(errors="replace"), took


def upload(s: Served, bot: str, data: bytes, token: str | None) -> tuple[int, Any, float]:
    return call(s, "POST", f"/api/bots/{bot}/versions", data, token=token)


def upload_chunked(s: Served, bot: str, chunks: list[bytes], token: str) -> tuple[int, Any]:
    """A raw body without Content-Length (chunked): the size limit must hold while reading."""
    host, port = s.url.split("//")[1].split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    try:
        conn.request("POST", f"/api/bots/{bot}/versions", body=iter(chunks), encode_chunked=True,
                     headers={"Authorization": f"Bearer {token}", "Content-Type": "application/octet-stream"})
        r = conn.getresponse()
        return r.status, json.loads(r.read())
    finally:
        conn.close()


def wait_final(s: Served, bot: str, version: int, token: str | None = None, timeout: float = 180) -> Any:
    end = time.monotonic() + timeout
    while True:
        st, v, _ = call(s, "GET", f"/api/bots/{bot}/versions/{version}", token=token)
        assert st == 200, v
        if v["status"] in FINAL:
            return v
        assert time.monotonic() < end, f"{bot}@{version} still {v['status']}: {s.log()}"
        time.sleep(0.3)


def stored(db: Path) -> tuple[int, int]:
    """(versions, packages) in the database."""
    import sqlite3

    con = sqlite3.connect(db)
    try:
        return (con.execute("SELECT COUNT(*) FROM bot_versions").fetchone()[0],
                con.execute("SELECT COUNT(*) FROM bot_packages").fetchone()[0])
    finally:
        con.close()
