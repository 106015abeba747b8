"""Upstream MCP servers (issue 40): reaching one (``connect``), mirroring its definitions into the
registry (``sync``), and its health.

- ``config``: ``UpstreamConfig`` (what a worker needs to reach an upstream, without the database)
  and ``UpstreamTarget`` (what a mirrored row's serving spec carries for the call path);
- ``guard``: the outbound rules (``mcp_django.outbound``) bound to the http kind's settings, as an
  httpx2 transport the official SDK's client sends through;
- ``auth``: the headers an upstream gets (a static header, or an OAuth client-credentials token);
- ``connect``: ``connect(config)``, an initialized ``mcp`` ``ClientSession`` over Streamable HTTP,
  falling back to HTTP+SSE;
- ``listing``, ``names``, ``sync``, ``apply``, ``health``, ``periodic``: the sync.
"""
