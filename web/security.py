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
