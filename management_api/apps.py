from django.apps import AppConfig


class ManagementApiConfig(AppConfig):
    name = "management_api"
    verbose_name = "Management API"
    default_auto_field = "django.db.models.BigAutoField"
