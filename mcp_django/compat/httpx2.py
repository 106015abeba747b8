"""httpx2 internals the upstream client relies on (2.16).

``AsyncHTTPTransport._pool`` is the httpcore2 connection pool a transport sends through; httpx2
takes no network backend, so the one way to have it connect to the addresses the outbound rules
checked (``registry/upstreams/guard.py``: ``PinnedBackend``) is to give the transport a pool built
with that backend.
"""

from __future__ import annotations

from typing import Any

import httpcore2
import httpx2


def use_network_backend(transport: httpx2.AsyncHTTPTransport, backend: Any) -> None:
    """Make ``transport`` connect through ``backend`` (an httpcore2 async network backend)."""
    transport._pool = httpcore2.AsyncConnectionPool(ssl_context=httpx2.create_ssl_context(),
                                                    network_backend=backend)
