from django.apps import AppConfig
from django.db.models.signals import post_migrate


class RegistryConfig(AppConfig):
    name = "registry"
    verbose_name = "MCP registry"
    # What /mcp serves when the MCP setting names no provider (mcp_django.conf.default).
    mcp_provider = "registry.provider.RegistryProvider"

    def ready(self) -> None:
        # Change notifications (signals) and the code allow-list of handlers (every installed
        # app's mcp_handlers.py, like admin.py).
        from . import checks, handlers, signals  # noqa: F401 (checks registers the system checks)

        # Sent once per app per migrate; listening for this app's copy alone publishes once.
        post_migrate.connect(signals.publish_after_migrate, sender=self, dispatch_uid="registry-migrated")
        handlers.autodiscover()
