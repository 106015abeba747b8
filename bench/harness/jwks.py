"""A JWKS served on loopback by the bench process (a thread), for workers in ``MCP_AUTH=oauth``
mode to verify the RS256 tokens the bench signs with ``private`` (bench_auth.py, bench_scale.py)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa


def serve_jwks(private: rsa.RSAPrivateKey) -> tuple[str, ThreadingHTTPServer]:
    public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(private.public_key()))
    jwk = {**public, "kid": "bench", "use": "sig"}
    body = json.dumps({"keys": [jwk]}).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=http.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{http.server_address[1]}", http
