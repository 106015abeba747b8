"""``fetch(url, policy)``: one GET under a ``Policy`` (``request``: another method, a token POST),
for the places that fetch a document once
(a client's metadata document; later an upstream server's metadata), not a pooled client.

Each hop: ``rules.url_problem`` (scheme, userinfo, allow-list, IP literal), then the name resolved
once and every address checked (``rules.public_only``), then a connection to a checked address
(the certificate and SNI still name the host, and the ``Host`` header carries it), so a second
lookup cannot rebind it. A redirect (301, 302, 303, 307, 308) is followed only while
``policy.max_redirects`` allows, its ``Location`` checked as the first URL was. One deadline
covers the whole fetch, redirects and every address tried; the body is read to at most
``policy.max_bytes``. The environment's proxies are not used.

Errors: ``OutboundRefused`` (a rule said no; nothing was sent to that URL), ``OutboundFailed``
(no answer, a TLS failure, too large, too slow).
"""

from __future__ import annotations

import socket
import ssl
import time
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

import urllib3

from .rules import Policy, ip_literal, public_only, url_problem

REDIRECTS = frozenset({301, 302, 303, 307, 308})


class OutboundRefused(ValueError):
    pass


class OutboundFailed(OSError):
    pass


@dataclass(frozen=True, slots=True)
class Fetched:
    url: str  # the URL that answered (after redirects)
    status: int
    headers: dict[str, str]
    body: bytes


def _addresses(host: str, port: int, policy: Policy) -> list[str]:
    literal = ip_literal(host)
    if literal is not None:
        return [literal]
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise OutboundFailed(f"{host}: cannot be resolved ({exc})") from None
    found = list(dict.fromkeys(str(info[4][0]) for info in infos))
    try:
        return public_only(host, found, policy)
    except ValueError as exc:
        raise OutboundRefused(str(exc)) from None


def _one(url: str, policy: Policy, headers: dict[str, str], deadline: float, method: str = "GET",
         payload: bytes | None = None) -> Fetched:
    parts = urlsplit(url)
    host, https = parts.hostname or "", parts.scheme.lower() == "https"
    port = parts.port or (443 if https else 80)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    last: Exception | None = None
    for address in _addresses(host, port, policy):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        timeout = urllib3.Timeout(connect=remaining, read=remaining, total=remaining)
        pool: urllib3.HTTPConnectionPool
        if https:
            pool = urllib3.HTTPSConnectionPool(address, port, timeout=timeout, retries=False, maxsize=1,
                                               ssl_context=ssl.create_default_context(), server_hostname=host)
        else:
            pool = urllib3.HTTPConnectionPool(address, port, timeout=timeout, retries=False, maxsize=1)
        try:
            response = pool.urlopen(method, target, body=payload, headers={**headers, "Host": parts.netloc},
                                    redirect=False, preload_content=False)
            try:
                body = response.read(policy.max_bytes + 1)
                if len(body) > policy.max_bytes:
                    raise OutboundFailed(f"{url}: the answer exceeds {policy.max_bytes} bytes")
                return Fetched(url, response.status, dict(response.headers), body)
            finally:
                response.release_conn()
        except urllib3.exceptions.HTTPError as exc:
            last = exc
        finally:
            pool.close()
    raise OutboundFailed(f"{url}: {last or 'no time left'}")


def fetch(url: str, policy: Policy, headers: dict[str, str] | None = None) -> Fetched:
    return request("GET", url, policy, headers)


def request(method: str, url: str, policy: Policy, headers: dict[str, str] | None = None,
            body: bytes | None = None) -> Fetched:
    """One request under ``policy``. Only a GET follows redirects: another method's redirect (a
    token POST's) comes back as is, since following it would resend the body elsewhere."""
    deadline = time.monotonic() + policy.timeout
    hops = policy.max_redirects if method == "GET" else 0
    for _ in range(hops + 1):
        if problem := url_problem(url, policy):
            raise OutboundRefused(problem)
        fetched = _one(url, policy, headers or {}, deadline, method, body)
        location = fetched.headers.get("Location") or fetched.headers.get("location")
        if fetched.status not in REDIRECTS or not location or method != "GET":
            return fetched
        url = urljoin(url, location)
    raise OutboundRefused(f"more than {policy.max_redirects} redirects")
