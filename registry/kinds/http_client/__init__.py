"""Calling upstream HTTP APIs for the ``http`` tool kind (``kinds/http.py`` runs a call with these).

- ``config``: the ``REGISTRY_HTTP_*`` settings and their only defaults, read when asked;
- ``request``: a call as the request it sends (method, URL template, headers, body);
- ``url_guard``: the expanded URL stays where its template points (no dot segment, same host);
- ``guard``: the host allow-list and the private-address rule (``mcp_django.outbound``'s rules);
- ``signing``: the ``X-MCP-Signature`` schemes (``v1``, ``v2``);
- ``reply``: the reply as a ``CallToolResult``, an error as the upstream's message;
- ``validation``: what an http tool row must satisfy (``Tool.clean``);
- ``clients``: one pooled ``httpx.AsyncClient`` per serving event loop, opened and closed with the
  runtime (through the provider's ``start``/``stop``), one-shot clients elsewhere.
"""
