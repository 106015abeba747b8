"""The one outbound fetcher (``mcp_django.outbound``, issue 37 "the habit") against real loopback
servers: a redirect is checked by the same rules as the first URL (another host, ``file:``), the
size cap holds, and the client metadata document fetcher (CIMD) goes through it: https only, with
``CIMD_ALLOW_PRIVATE`` on too (what ``oauth_server/conf.py`` now says), loopback refused with it off.
Every refusal is checked on the listener: no request arrived."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from django.test import override_settings
from oauth2_provider.cimd import CIMDError

from mcp_django.outbound.fetch import OutboundFailed, OutboundRefused, fetch
from mcp_django.outbound.rules import Policy
from oauth_server.cimd import MetadataFetcher
from tests.support.cimd_host import DocumentHost


class Listener:
    """Plain http on loopback: ``/redirect?to=<url>`` answers 302 to it, ``/big`` 64 KiB, anything
    else 200 ``{"ok": true}``; every path asked is recorded."""

    def __init__(self) -> None:
        paths = self.paths = []  # type: list[str]

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                paths.append(self.path)
                if self.path.startswith("/redirect?to="):
                    self.send_response(302)
                    self.send_header("Location", self.path.split("=", 1)[1])
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = b"x" * 65536 if self.path == "/big" else b'{"ok": true}'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"


@pytest.fixture(scope="module")
def listener() -> Iterator[Listener]:
    server = Listener()
    yield server
    server.server.shutdown()
    server.server.server_close()


LOOPBACK = Policy(schemes=("http",), allowed_hosts=("127.0.0.1",), forbid_private=False, max_bytes=4096,
                  timeout=5.0, max_redirects=2)


def test_a_redirect_within_the_rules_is_followed(listener: Listener) -> None:
    answer = fetch(listener.url("/redirect?to=/doc"), LOOPBACK)
    assert answer.status == 200 and answer.body == b'{"ok": true}' and answer.url.endswith("/doc")


@pytest.mark.parametrize("target", ["file:///etc/passwd", "gopher://127.0.0.1/x", "LOCALHOST"])
def test_a_redirect_leaving_the_rules_is_refused_and_not_followed(listener: Listener, target: str) -> None:
    if target == "LOCALHOST":  # another host: not on the allow-list
        target = listener.url("/elsewhere", host="localhost")
    listener.paths.clear()
    with pytest.raises(OutboundRefused):
        fetch(listener.url(f"/redirect?to={target}"), LOOPBACK)
    assert listener.paths == [f"/redirect?to={target}"]  # the first hop only


def test_private_addresses_are_refused_before_any_request(listener: Listener) -> None:
    listener.paths.clear()
    for url in (listener.url("/doc"), listener.url("/doc", host="localhost")):
        with pytest.raises(OutboundRefused, match="private"):
            fetch(url, Policy(schemes=("http",), forbid_private=True))
    assert listener.paths == []


def test_an_answer_past_the_size_cap_fails(listener: Listener) -> None:
    with pytest.raises(OutboundFailed, match="exceeds 4096 bytes"):
        fetch(listener.url("/big"), LOOPBACK)


@pytest.fixture
def documents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[DocumentHost]:
    host = DocumentHost(tmp_path).start()
    monkeypatch.setenv("SSL_CERT_FILE", str(host.cert_path))
    yield host
    host.stop()


@pytest.mark.django_db
def test_client_metadata_documents_are_fetched_over_https_only_even_with_private_allowed(
    documents: DocumentHost, listener: Listener
) -> None:
    url = documents.url("/client.json")
    documents.documents["/client.json"] = {"client_id": url, "redirect_uris": ["http://127.0.0.1/cb"]}
    with override_settings(MCP_OAUTH_SERVER={"CIMD_ALLOW_PRIVATE": True}):
        metadata, _ = MetadataFetcher().fetch(url)
        assert metadata["client_id"] == url
        listener.paths.clear()
        with pytest.raises(CIMDError, match="https"):
            MetadataFetcher().fetch(listener.url("/client.json"))
        assert listener.paths == []
    documents.hits.clear()
    with pytest.raises(CIMDError, match="private"):
        MetadataFetcher().fetch(url)
    assert documents.hits["/client.json"] == 0
