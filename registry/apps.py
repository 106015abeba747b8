from django.apps import AppConfig


class RegistryConfig(AppConfig):
    name = "registry"
    verbose_name = "MCP registry"

    def ready(self) -> None:
        # Change notifications (signals) and the code allow-list of handlers (every installed
        # app's mcp_handlers.py, like admin.py).
        from . import handlers, signals  # noqa: F401

        handlers.autodiscover()
