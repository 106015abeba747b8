"""A second installed app whose ``mcp_handlers.py`` the registry must find (autodiscovery test)."""
