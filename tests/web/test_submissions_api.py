"""Uploads over HTTP (issue 43), against a real `maag serve --web` process (nim, 300 ms a
turn), real HTTP, the real sandbox building and validating: a valid token stores a version
that becomes active; a wrong, revoked or other bot's token stores nothing and is answered
late, later each time; an oversized package, one with a path escaping its folder and one
whose build fails are rejected with a reason the uploader reads, nothing half-stored; one that
crashes is rejected with its report; a newer version retires the active one and its games
stay readable; the per-bot rate limit; the bot's page keeps logs for the signed-in owner; and
`maag bot upload`."""

from __future__ import annotations

import http.cookiejar
import io
import json
import os
import secrets
import subprocess
import sys
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

from .conftest import maag
from .uploads import (
    GOOD,
    call,
    escaping_tar,
    need_sandbox,
    package,
    serve,
    stored,
    targz,
    upload,
    upload_chunked,
    wait_final,
)


def zipped(folder: Path) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for p in sorted(folder.rglob("*")):
            zf.write(p, "bot/" + str(p.relative_to(folder)))
    return buf.getvalue()


def test_upload_activate_retire_and_the_owners_page(tmp_path: Path) -> None:
    need_sandbox()
    s = serve(tmp_path)
    try:
        token = s.token("alice")
        st, ans, _ = upload(s, "alice", targz(GOOD), token)
        assert st == 202, ans
        assert ans["version"]["status"] == "pending" and ans["version"]["version"] == 1
        assert ans["poll"] == "/api/bots/alice/versions/1"
        v1 = wait_final(s, "alice", 1)
        assert v1["status"] == "active", v1
        assert v1["report"]["passed"] and len(v1["report"]["games"]) == 4
        # A newer version (one that prints to its log, and has a build) retires version 1.
        noisy = package(tmp_path, "noisy", build="echo building-BUILD$((40+2))MARK",
                        prelude="import sys\nprint('LOGMARK from the bot', file=sys.stderr, flush=True)")
        st, ans, _ = upload(s, "alice", targz(noisy), token)
        assert st == 202, ans
        v2 = wait_final(s, "alice", 2)
        assert v2["status"] == "active", v2
        assert "build_log" not in v2  # nobody signed in asked
        assert wait_final(s, "alice", 1)["status"] == "retired"
        # The retired version's games stay readable.
        for g in v1["report"]["games"]:
            st, rp, _ = call(s, "GET", f"/api/replay/{g['game_id']}")
            assert st == 200 and rp["result"] is not None, rp
        # A visitor's page: versions, reports, games; no build log, no log tails.
        st, page, _ = call(s, "GET", "/api/bots/alice")
        assert st == 200 and not page["owner"]
        assert [v["status"] for v in page["versions"]] == ["active", "retired"]
        assert {g["game_id"] for g in page["games"]} >= {g["game_id"] for g in v2["report"]["games"]}
        text = json.dumps(page)
        assert "BUILD42MARK" not in text and "LOGMARK" not in text and "log_tails" not in text
        st, _, _ = call(s, "GET", "/api/bots/alice/versions/2/logs")
        assert st == 403
        # The owner, signed in (a session cookie, never the token), sees both.
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        req = urllib.request.Request(s.url + "/api/session", data=json.dumps({"token": token}).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
        with opener.open(req, timeout=30) as r:
            assert json.loads(r.read()) == {"bot": "alice"}
            set_cookie = r.headers["Set-Cookie"]
        assert "HttpOnly" in set_cookie and "SameSite=Strict" in set_cookie and token not in set_cookie
        [cookie] = list(jar)
        assert cookie.name == "maag_session" and cookie.value != token
        with opener.open(s.url + "/api/bots/alice", timeout=30) as r:
            owned = json.loads(r.read())
        assert owned["owner"]
        assert "BUILD42MARK" in owned["versions"][0]["build_log"]
        tails = [t for g in owned["games"] if g["validation"] for t in g.get("log_tails", {}).values()]
        assert any("LOGMARK" in t for t in tails), owned["games"]
        with opener.open(s.url + "/api/bots/alice/versions/2/logs", timeout=30) as r:
            logs = json.loads(r.read())
        assert any("LOGMARK" in f["text"] for f in logs["files"]), [f["file"] for f in logs["files"]]
        # A zip, sent by the signed-in owner as a multipart form (as the page's form does).
        boundary = secrets.token_hex(8)
        form = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"package\"; filename=\"bot.zip\"\r\n"
                "Content-Type: application/zip\r\n\r\n").encode() + zipped(GOOD)
        form += f"\r\n--{boundary}--\r\n".encode()
        req = urllib.request.Request(s.url + "/api/bots/alice/versions", data=form, method="POST",
                                     headers={"Content-Type": f"multipart/form-data; boundary={boundary}",
                                              "Origin": s.url})
        with opener.open(req, timeout=60) as r:
            assert r.status == 202
            assert json.loads(r.read())["version"]["version"] == 3
        assert wait_final(s, "alice", 3)["status"] == "active"
        # A cookie sent from another site's page is refused.
        req = urllib.request.Request(s.url + "/api/bots/alice/versions", data=form, method="POST",
                                     headers={"Content-Type": f"multipart/form-data; boundary={boundary}",
                                              "Origin": "http://evil.example"})
        try:
            opener.open(req, timeout=60)
            raise AssertionError("a cross-site upload was accepted")
        except urllib.error.HTTPError as e:
            assert e.code == 403
        # Signed out: a visitor again.
        req = urllib.request.Request(s.url + "/api/session", method="DELETE")
        opener.open(req, timeout=30).close()
        with opener.open(s.url + "/api/bots/alice", timeout=30) as r:
            assert not json.loads(r.read())["owner"]
        # A new token (the old one revoked) ends the sessions signed in with the old one.
        req = urllib.request.Request(s.url + "/api/session", data=json.dumps({"token": token}).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
        opener.open(req, timeout=30).close()
        with opener.open(s.url + "/api/bots/alice", timeout=30) as r:
            assert json.loads(r.read())["owner"]
        s.token("alice")
        with opener.open(s.url + "/api/bots/alice", timeout=30) as r:
            assert not json.loads(r.read())["owner"]
        assert stored(s.db)[0] == 3
    finally:
        s.stop()


def test_wrong_and_revoked_tokens_store_nothing_and_are_throttled(tmp_path: Path) -> None:
    s = serve(tmp_path)
    try:
        old = s.token("alice")
        bob = s.token("bob")
        new = s.token("alice")  # --replace: the old token is revoked
        data = targz(GOOD)
        st, ans, t1 = upload(s, "alice", data, "maag_not-a-token")
        assert st == 401 and "token" in ans["error"]
        st, _, t2 = upload(s, "alice", data, old)  # revoked
        assert st == 401
        st, _, t3 = upload(s, "alice", data, bob)  # another bot's token
        assert st == 401
        st, _, t4 = upload(s, "alice", data, None)  # none at all
        assert st == 401
        # --auth-delay 200: 0.2 s, then doubling per failure (address and bot).
        assert t1 >= 0.18 and t2 >= 0.38 and t3 >= 0.75 and t4 >= 1.5, (t1, t2, t3, t4)
        st, _, t5 = call(s, "POST", "/api/session", json.dumps({"token": old}).encode(),
                         ctype="application/json")
        assert st == 401 and t5 >= 3.0
        assert stored(s.db) == (0, 0)
        # The valid token still works (and is not slowed).
        st, ans, t6 = call(s, "POST", "/api/session", json.dumps({"token": new}).encode(),
                           ctype="application/json")
        assert st == 200 and ans == {"bot": "alice"} and t6 < 1.0
    finally:
        s.stop()


def test_rejections_oversized_escaping_broken_build_crash(tmp_path: Path) -> None:
    need_sandbox()
    s = serve(tmp_path, "--upload-max-size", "200KB")
    try:
        token = s.token("alice")
        big = package(tmp_path, "big", extra={"weights.bin": os.urandom(300_000)})
        # Oversized, with a Content-Length: refused before reading, the reason readable.
        st, ans, _ = upload(s, "alice", targz(big), token)
        assert st == 413 and "limit of 200000 bytes" in ans["error"], ans
        # Oversized, chunked (no length announced): stopped while reading.
        blob = targz(big)
        st, ans = upload_chunked(s, "alice", [blob[i:i + 16384] for i in range(0, len(blob), 16384)], token)
        assert st == 413 and "limit of 200000 bytes" in ans["error"], ans
        # A member escaping the package's folder.
        marker = f"escape-{secrets.token_hex(4)}"
        st, ans, _ = upload(s, "alice", escaping_tar(marker), token)
        assert st == 400 and ".." in ans["error"], ans
        assert not any(Path(d, marker).exists() for d in ("/tmp", tmp_path, Path.cwd()))
        # Not an archive at all.
        st, ans, _ = upload(s, "alice", b"#!/bin/sh\necho hi\n", token)
        assert st == 400 and "tar.gz" in ans["error"]
        assert stored(s.db) == (0, 0)  # nothing half-stored
        # A build that fails: stored, then rejected with the reason and the build's log.
        broken = package(tmp_path, "broken", build="echo compiling-now; exit 3")
        st, ans, _ = upload(s, "alice", targz(broken), token)
        assert st == 202, ans
        v = wait_final(s, "alice", ans["version"]["version"], token=token)
        assert v["status"] == "rejected" and v["reason"].startswith("build failed"), v
        assert "compiling-now" in v["build_log"]
        # One that crashes at once: rejected by validation, with its report.
        crash = package(tmp_path, "crash", run="python3 -c 'import os; os.abort()'")
        st, ans, _ = upload(s, "alice", targz(crash), token)
        assert st == 202, ans
        v = wait_final(s, "alice", ans["version"]["version"])
        assert v["status"] == "rejected" and v["reason"].startswith("bot check failed"), v
        assert not v["report"]["passed"] and not v["report"]["check"]["ok"]
        st, page, _ = call(s, "GET", "/api/bots/alice")
        assert [x["status"] for x in page["versions"]] == ["rejected", "rejected"]
        assert all(x["status"] != "building" for x in page["versions"])
        # The failed ones hold no built package; the database holds only what the versions name.
        assert stored(s.db) == (2, 2)
    finally:
        s.stop()


def test_rate_limit_per_bot(tmp_path: Path) -> None:
    s = serve(tmp_path, "--uploads-per-hour", "2")
    try:
        alice, bob = s.token("alice"), s.token("bob")
        bad = escaping_tar("x")
        assert upload(s, "alice", bad, alice)[0] == 400
        assert upload(s, "alice", bad, alice)[0] == 400
        st, ans, _ = upload(s, "alice", targz(GOOD), alice)
        assert st == 429 and "2 uploads in the last hour" in ans["error"], ans
        assert stored(s.db) == (0, 0)
        assert upload(s, "bob", bad, bob)[0] == 400  # another bot has its own allowance
        assert call(s, "GET", "/api/bots/nobody")[0] == 404
        st, ans, _ = call(s, "GET", "/api/session", token=bob)  # whose token is this
        assert st == 200 and ans == {"bot": "bob"}
    finally:
        s.stop()


def test_maag_bot_upload_command(tmp_path: Path) -> None:
    need_sandbox()
    s = serve(tmp_path)
    try:
        token = s.token("carol")
        env = {**os.environ, "MAAG_TOKEN": token}
        cmd = [sys.executable, "-m", "maag.server", "bot", "upload", "--server", s.url]
        r = subprocess.run([*cmd, str(GOOD)], capture_output=True, text=True, env=env, timeout=240)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "carol@1\tactive" in r.stdout and "smoke game" in r.stdout
        # Sent under carol's token, the example's manifest names another bot: said, and stored as carol's.
        assert ("warning: the package's manifest names 'python-example', but it was sent with 'carol''s "
                "token") in r.stderr, r.stderr
        broken = package(tmp_path, "broken", build="echo compiling-now; exit 3")
        r = subprocess.run([*cmd, str(broken)], capture_output=True, text=True, env=env, timeout=240)
        assert r.returncode == 1
        assert "carol@2\trejected: build failed" in r.stdout and "compiling-now" in r.stdout, r.stdout
        assert "warning:" in r.stderr
        r = subprocess.run([*cmd, str(GOOD)], capture_output=True, text=True,
                           env={**env, "MAAG_TOKEN": "maag_wrong"}, timeout=240)
        assert r.returncode == 2 and "401" in r.stderr, r.stderr
        own = package(tmp_path, "carol")  # the manifest names the token's bot: no warning
        r = subprocess.run([*cmd, str(own), "--no-wait"], capture_output=True, text=True, env=env,
                           timeout=240)
        assert r.returncode == 0 and "warning" not in r.stderr, r.stderr
        wait_final(s, "carol", 3)
        versions = json.loads(maag("bot", "versions", "carol", "--json", "--db", str(s.db)).stdout)
        assert [v["status"] for v in versions] == ["retired", "rejected", "active"]
    finally:
        s.stop()
