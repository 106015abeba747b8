from django.apps import AppConfig


class MCPProtocolConfig(AppConfig):
    name = "mcp_protocol"
    verbose_name = "MCP protocol"

    def ready(self) -> None:
        from . import checks  # noqa: F401 (registers the system checks)
