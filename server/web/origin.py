"""Where a browser's request comes from: a request sent by a page of another site is refused
wherever a cookie would act (signing in, uploading, ruling). The cookies are SameSite=Strict
already; this also stops a page elsewhere from signing a visitor in."""

from __future__ import annotations

from aiohttp import web

__all__ = ["cross_site"]


def cross_site(request: web.Request) -> bool:
    """Whether a browser sent `request` from another site (its Origin names another host, or
    is "null"). No Origin (a program, `maag bot upload`) is not cross-site. Behind a proxy that
    rewrites Host, X-Forwarded-Host names the site."""
    origin = request.headers.get("Origin")
    if not origin or origin == "null":
        return origin == "null"
    forwarded = request.headers.get("X-Forwarded-Host", "")
    hosts = {request.host, *(h.strip() for h in forwarded.split(",") if h.strip())}
    return origin.split("://", 1)[-1].rstrip("/") not in hosts
