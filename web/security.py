"""Who may use the controls: everyone when no token is set (the default on 127.0.0.1);
otherwise the host machine itself and browsers that show the token (the X-Ponte-Token
header, or the cookie set by opening the link with ?token=...)."""

from __future__ import annotations

import hmac
import ipaddress

from flask import current_app, request

TOKEN_HEADER = "X-Ponte-Token"
TOKEN_COOKIE = "ponte_token"


def is_loopback(address: str | None) -> bool:
    try:
        return address is not None and ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def token_matches(given: str | None) -> bool:
    token = current_app.config["CONTROL_TOKEN"]
    return bool(token and given and hmac.compare_digest(given.encode(), str(token).encode()))


LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]", "::1")


def foreign_request() -> str | None:
    """Why a POST looks like it comes from another site, or None.

    An Origin header must name this server. Without a token (the loopback default) the
    Host must be a loopback name too, so a site that points its own name at 127.0.0.1 (DNS
    rebinding) cannot use the controls.
    """
    origin = request.headers.get("Origin")
    if origin and origin.rstrip("/") != request.host_url.rstrip("/"):
        return "a page from another site may not use the controls"
    if not current_app.config["CONTROL_TOKEN"]:
        host = request.host.rsplit(":", 1)[0] if not request.host.endswith("]") \
            else request.host
        if host.lower() not in LOOPBACK_NAMES:
            return f"controls are only for this machine (address {host[:40]!r} is not local)"
    return None


def may_control() -> bool:
    """Whether the current request may use the controls."""
    if not current_app.config["CONTROL_TOKEN"]:
        return True
    if current_app.config["TRUST_LOOPBACK"] and is_loopback(request.remote_addr):
        return True
    return token_matches(request.headers.get(TOKEN_HEADER)) or token_matches(
        request.cookies.get(TOKEN_COOKIE)
    )


def is_host_screen() -> bool:
    """Whether the page is being shown on the host machine (where the link and QR code for
    the controls are shown)."""
    return is_loopback(request.remote_addr)
