"""The registry's admin pages, found by Django's admin autodiscovery (``registry.admin``).

``definitions`` registers tools, resources, templates and prompts (with ``skills`` and
``mcp_apps``), ``servers`` the virtual servers; ``base`` is what the definitions' pages share;
``forms``, ``inline_order``, ``tryit`` and ``tool_trial`` serve them. The history pages are
``registry.history.admin``'s.
"""

from . import definitions, servers, upstreams  # noqa: F401 (importing registers the model admins)
