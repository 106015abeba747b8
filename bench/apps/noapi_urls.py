"""The project's URLs less ``/api/v1/`` (see ``noapi_settings.py``)."""

from mcpsite.urls import urlpatterns as _everything

urlpatterns = [p for p in _everything if str(p.pattern) != "api/v1/"]
