"""Upstream MCP servers (issue 40): reaching one (``connect``), mirroring its definitions into the
registry (``sync``), and its health.

- ``config``: ``UpstreamConfig`` (what a worker needs to reach an upstream, without the database)
  and ``UpstreamTarget`` (what a mirrored row's serving spec carries for the call path);
- ``guard``: the outbound rules (``mcp_django.outbound``) bound to the http kind's settings, as an
  httpx2 transport the official SDK's client sends through, and the pinned aiohttp session of the
  calls' lean path;
- ``auth``: the headers an upstream gets (a static header, or an OAuth client-credentials token;
  for an upstream called as the user, its listing credential: no user is calling a sync);
- ``connect``: ``connect(config)``, an initialized ``mcp`` ``ClientSession`` over Streamable HTTP,
  falling back to HTTP+SSE;
- ``listing``, ``names``, ``sync``, ``apply``, ``health``, ``periodic``: the sync;
- ``pool``, ``calls``, ``wire``, ``stream``, ``relay``, ``sdk_calls``, ``sdk_relay``, ``serve``,
  ``breaker``: the calls (one live session per upstream per worker loop, per caller for an upstream
  called as the user; the requests as plain JSON-RPC POSTs; what the upstream says meanwhile
  relayed to our client, over the legacy transport too);
- ``tasks``: a call the upstream runs as a task, followed by the run of our own task;
- ``acting``: calls of an upstream called as the user (issue 42 item 3): the caller's token and
  session, the vault told of a refused token and the user asked again.
"""
