"""Client ID Metadata Documents served over HTTPS on loopback, as a client's website would: a
self-signed certificate for 127.0.0.1 (``cert_path``: hand it to the authorization server as
``SSL_CERT_FILE``, so its fetcher verifies the certificate as it would any other), the documents
by path, and how many times each was fetched (the server's cache honours Cache-Control).

    host = DocumentHost(tmp_path).start()
    host.documents["/client.json"] = {"client_id": host.url("/client.json"), ...}
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import ssl
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def self_signed(directory: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cimd-cert.pem", directory / "cimd-key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return cert_path, key_path


class DocumentHost:
    def __init__(self, directory: Path, *, max_age: int = 300) -> None:
        self.cert_path, self.key_path = self_signed(directory)
        self.documents: dict[str, dict[str, Any]] = {}
        self.hits: Counter[str] = Counter()
        self.max_age = max_age
        self._server: ThreadingHTTPServer | None = None

    def url(self, path: str) -> str:
        assert self._server is not None
        return f"https://127.0.0.1:{self._server.server_address[1]}{path}"

    def start(self) -> DocumentHost:
        host = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                host.hits[self.path] += 1
                document = host.documents.get(self.path)
                body = json.dumps(document).encode() if document is not None else b"{}"
                self.send_response(200 if document is not None else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Cache-Control", f"max-age={host.max_age}")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert_path, self.key_path)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        self._server = server
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
