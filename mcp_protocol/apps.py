from django.apps import AppConfig


class MCPProtocolConfig(AppConfig):
    name = "mcp_protocol"
    verbose_name = "MCP protocol"
