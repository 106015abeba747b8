from django.apps import AppConfig


class MCPDjangoConfig(AppConfig):
    """The Django adapter of the MCP core: its settings, system checks, routing and ``mcp_stdio``."""

    name = "mcp_django"
    verbose_name = "MCP"

    def ready(self) -> None:
        from . import checks  # noqa: F401 (registers the system checks)
