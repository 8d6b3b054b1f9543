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


def host_name(host: str) -> str:
    """The name in a Host header, without the port, lower-cased, without a final dot.

    >>> host_name("LocalHost.:8000"), host_name("[::1]:8000"), host_name("10.0.0.2")
    ('localhost', '[::1]', '10.0.0.2')
    """
    name = host.strip().lower()
    if name.startswith("["):
        name = name.split("]", 1)[0] + "]"
    elif name.count(":") == 1:
        name = name.rsplit(":", 1)[0]
    return name.rstrip(".")


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name[1:-1] if name.startswith("[") else name)
    except ValueError:
        return False
    return True


def unknown_host() -> str | None:
    """Why the request's Host is not a name this server is served as, or None.

    A page on another site whose name is made to resolve to this machine (DNS rebinding)
    sends its own name as Host; refusing every Host that is neither an address, a loopback
    name, nor one of SERVED_NAMES keeps such a page from reading the state or seeing the
    token. An address is safe: a browser only sends one when it was pointed at it.
    """
    name = host_name(request.host)
    served = {n.lower() for n in current_app.config["SERVED_NAMES"]}
    if _is_address(name) or name in LOOPBACK_NAMES or name in served:
        return None
    known = ", ".join(sorted({"localhost", "127.0.0.1", *served}))
    return (f"this page is not served under the name {name[:60]!r} (a page on another site "
            f"pointing its name at this machine?); open it by the machine's address or "
            f"as {known}")


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
