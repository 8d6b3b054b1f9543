"""Raw HTTP/1.1 exchanges with a server on 127.0.0.1, for requests `urllib` will not send
(a chunked body, a forged Host, a source address other than 127.0.0.1)."""

from __future__ import annotations

import socket
from dataclasses import dataclass


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes


def exchange(port: int, request: bytes, *, source: str = "127.0.0.1",
             timeout: float = 10.0) -> Answer:
    """Send one request (which should say `Connection: close`) and read the whole answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout,
                                  source_address=(source, 0)) as conn:
        conn.sendall(request)
        data = b""
        while b"\r\n\r\n" not in data and (chunk := conn.recv(65536)):
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", -1))
        while (length < 0 or len(body) < length) and (chunk := conn.recv(65536)):
            body += chunk
    return Answer(int(lines[0].split()[1]), headers, body)


def get(port: int, path: str, *, host: str = "127.0.0.1", source: str = "127.0.0.1",
        headers: str = "") -> Answer:
    return exchange(port, (f"GET {path} HTTP/1.1\r\nHost: {host}\r\n{headers}"
                           "Connection: close\r\n\r\n").encode(), source=source)


def post_json(port: int, path: str, body: bytes, *, host: str = "127.0.0.1",
              chunked: bool = False, source: str = "127.0.0.1") -> Answer:
    if chunked:
        framing = "Transfer-Encoding: chunked\r\n"
        payload = b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + 1000]), body[i:i + 1000])
                           for i in range(0, len(body), 1000)) + b"0\r\n\r\n"
    else:
        framing = f"Content-Length: {len(body)}\r\n"
        payload = body
    return exchange(port, (f"POST {path} HTTP/1.1\r\nHost: {host}\r\n"
                           f"Content-Type: application/json\r\n{framing}"
                           "Connection: close\r\n\r\n").encode() + payload, source=source)
