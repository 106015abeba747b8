from django.apps import AppConfig


class AccessConfig(AppConfig):
    name = "access"
    verbose_name = "MCP access (API keys, audit log)"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import checks, signals  # noqa: F401 (registers the system check and the signals)
