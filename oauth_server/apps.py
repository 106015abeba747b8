from django.apps import AppConfig


class OAuthServerConfig(AppConfig):
    name = "oauth_server"
    verbose_name = "MCP sign-in (built-in OAuth authorization server)"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import (
            checks,  # noqa: F401 (registers the system checks)
            sign_in_limits,
            user_grants,
        )

        user_grants.connect()
        sign_in_limits.connect()
