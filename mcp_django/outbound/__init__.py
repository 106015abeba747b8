"""Outbound requests the server makes on someone else's say-so: the one set of rules (issue 37,
"the habit"), and the fetcher that applies them.

An http tool's URL, a client's metadata document URL (CIMD), an upstream MCP server's URL (issue
40) are written by a staff user or by a stranger; each request to one may reach the server's own
network (SSRF). Every such place goes through this package:

- ``rules``: ``Policy`` (schemes, host allow-list, private addresses refused or not, size and time
  caps, redirects) and the checks: ``url_problem`` (scheme, no userinfo, allow-list, an IP literal's
  range), ``is_public`` and ``host_allowed``;
- ``resolver``: ``PublicOnlyResolver``, aiohttp's resolver keeping public addresses only, for the
  pooled sessions (the http kind's ``kinds/http_client/clients.py``): the address checked is the one
  connected to, and the pooled hot path pays only the lookup it already made;
- ``fetch``: ``fetch(url, policy)``, one bounded GET (urllib3) connecting to the address it
  checked, every redirect checked again by the same rules; ``OutboundRefused`` (a rule said no,
  nothing was sent) and ``OutboundFailed`` (the network or the peer failed).

Who uses it: ``registry.kinds.http_client`` (http tools: ``guard.py`` is these rules with the
``REGISTRY_HTTP_*`` settings), ``oauth_server.cimd`` (client metadata documents: https only). The
OpenAPI import fetches nothing (its validator retrieves no reference: ``registry.transfer.openapi.document``).
"""
