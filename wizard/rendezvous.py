"""`--dist-init-addr` as SGLang parses it: `host:port` or `[v6]:port` (pure, no imports of the
profile model, so the rules engine can use it in a cold `check`)."""

from __future__ import annotations

import re

_IPV6 = re.compile(r"^[0-9A-Fa-f:.]+$")


class RendezvousError(ValueError):
    """A `--dist-init-addr` SGLang's `NetworkAddress.parse` would refuse."""


def parse_rendezvous(addr: str) -> tuple[str, int]:
    """`host:port` / `[v6]:port` -> (host, port), refusing what SGLang's parser refuses."""
    if not addr:
        raise RendezvousError("empty address")
    if addr.startswith("["):
        close = addr.find("]")
        if close == -1:
            raise RendezvousError("missing closing bracket of the IPv6 address")
        host, rest = addr[1:close], addr[close + 1:]
        if not host or ":" not in host or not _IPV6.match(host):
            raise RendezvousError(f"{host!r} inside brackets is not an IPv6 address")
        if not rest.startswith(":") or len(rest) < 2:
            raise RendezvousError("expected :PORT after the closing bracket")
        return host, _port(rest[1:])
    if ":" not in addr:
        raise RendezvousError("missing port (expected HOST:PORT, e.g. 10.0.0.1:5000)")
    host, port = addr.rsplit(":", 1)
    if not host:
        raise RendezvousError("empty host")
    if ":" in host:
        raise RendezvousError("an IPv6 address must be in brackets: [ADDR]:PORT")
    return host, _port(port)


def _port(text: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise RendezvousError(f"port {text!r} is not a number in 1..65535")
    return int(text)


def format_rendezvous(host: str, port: int) -> str:
    """`host:port`, IPv6 in brackets."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
