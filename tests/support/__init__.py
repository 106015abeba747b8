"""What the tests (and bench/) share, one module per concept:

- processes: ``live_server`` (one server on a free port), ``fleets`` (workers sharing a database
  and a private Redis, nginx in front on demand), ``ports`` (``free_port``), ``manage`` (a
  management command in its own process), ``private_redis`` and ``redis_topologies`` (private
  Redis servers, Cluster, Sentinel), ``postgres``, ``shared_redis``, ``wheel``;
- waiting: ``polling`` (``within``, ``eventually``: every wait has a deadline), ``subscriptions``
  (the next bus message or store event);
- talking to a server: ``mcp_http`` (raw HTTP and SSE), ``asgi_call`` (one in-process request),
  ``websocket``, ``admin_client``, ``scrape`` (Prometheus text), ``conformance`` (the official
  suite; ``sdk_tasks_client.mjs``: its TypeScript SDK's 2025-11-25 tasks client),
  ``jsonrpc_fuzz`` (hostile input and the rules for replies to it), ``redis_workers`` (two
  workers' view of a Redis a test breaks).
"""

from .live_server import MEMORY_PROVIDER, REGISTRY_PROVIDER, LiveServer, live_server_fixture
from .ports import free_port

__all__ = ["MEMORY_PROVIDER", "REGISTRY_PROVIDER", "LiveServer", "free_port", "live_server_fixture"]
