from django.apps import AppConfig


class HandlersAppConfig(AppConfig):
    name = "tests.unit.registry.handlers_app"
    label = "registry_test_handlers_app"
