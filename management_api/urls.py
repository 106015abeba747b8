"""``/api/v1/``: the router of the management API, its OpenAPI 3.1 schema and the docs page."""

from __future__ import annotations

from django.apps import apps
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView
from rest_framework.routers import DefaultRouter

from mcp_django.service import get_service

from . import (
    history,
    openapi_import,
    schema,
    servers,
    sessions,
    skills,
    tasks,
    transfer,
    upstream_views,
    upstreams,
    views,
)

app_name = "api"

router = DefaultRouter(trailing_slash=True)
router.include_format_suffixes = False  # one URL per resource; JSON is chosen by Accept
router.register("tools", views.ToolViewSet, basename="tool")
router.register("resources", views.ResourceViewSet, basename="resource")
router.register("resource-templates", views.ResourceTemplateViewSet, basename="resourcetemplate")
router.register("prompts", views.PromptViewSet, basename="prompt")
router.register("skills", skills.SkillViewSet, basename="skill")
router.register("servers", servers.VirtualServerViewSet, basename="server")
router.register("upstreams", upstreams.UpstreamViewSet, basename="upstream")
router.register("sessions", sessions.SessionViewSet.serving(get_service()), basename="session")
router.register("tasks", tasks.TaskViewSet, basename="task")
approval_urls = []
if apps.is_installed("access"):  # API keys for /mcp and the audit log (the access app's models)
    from . import approvals, audit, keys

    approval_urls = approvals.action_urls()

    router.register("keys", keys.ApiKeyViewSet, basename="apikey")
    router.register("audit", audit.AuditRecordViewSet, basename="auditrecord")
    router.register("approvals", approvals.ApprovalViewSet, basename="approval")

if apps.is_installed("oauth_server"):  # the built-in authorization server's grants
    from . import oauth_grants

    router.register("oauth-grants", oauth_grants.OAuthGrantViewSet, basename="oauthgrant")

if apps.is_installed("connections"):  # acting for the user (issue 42): its providers
    from . import providers

    router.register("providers", providers.ProviderViewSet, basename="provider")

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", schema.DocsView.as_view(url_name="api:schema"), name="docs"),
    path("registry/export", transfer.ExportView.as_view(), name="registry-export"),
    path("registry/import", transfer.ImportView.as_view(), name="registry-import"),
    path("registry/openapi", openapi_import.OpenApiImportView.as_view(), name="registry-openapi"),
    path("history/", history.ChangeSetList.as_view(), name="history"),
    path("history/<int:changeset>/", history.ChangeSetDetail.as_view(), name="changeset"),
    path("history/<int:changeset>/revert", history.ChangeSetRevert.as_view(), name="changeset-revert"),
    path("history/<str:kind>/<int:pk>/", history.VersionList.as_view(), name="versions"),
    path("history/<str:kind>/<int:pk>/<int:version>/", history.VersionDetail.as_view(), name="version"),
    path(
        "history/<str:kind>/<int:pk>/<int:version>/revert",
        history.VersionRevert.as_view(),
        name="version-revert",
    ),
    *upstream_views.action_urls(upstreams.UpstreamViewSet),
    *approval_urls,
    path("", include(router.urls)),
]
