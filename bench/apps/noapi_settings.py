"""``bench_api.py``'s control: the project's settings without the REST management API (its apps
and its URLs), to measure ``/mcp`` with and without the API in one run."""

from mcpsite.settings import *  # noqa: F403

_API_APPS = ("django_filters", "drf_spectacular", "drf_spectacular_sidecar")
INSTALLED_APPS = [app for app in INSTALLED_APPS if app not in _API_APPS]  # noqa: F405
ROOT_URLCONF = "bench.apps.noapi_urls"
