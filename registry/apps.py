from django.apps import AppConfig
from django.db.models.signals import post_migrate


class RegistryConfig(AppConfig):
    name = "registry"
    verbose_name = "MCP registry"

    def ready(self) -> None:
        # Change notifications (signals) and the code allow-list of handlers (every installed
        # app's mcp_handlers.py, like admin.py).
        from . import handlers, signals

        # Sent once per app per migrate; listening for this app's copy alone publishes once.
        post_migrate.connect(signals.publish_after_migrate, sender=self, dispatch_uid="registry-migrated")
        handlers.autodiscover()
