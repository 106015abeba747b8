"""The admin of virtual servers (issue 39 item 7): each one an MCP endpoint at ``/mcp/<slug>``.

The change page edits the server in three parts (who it is to a client, what it serves, who may
use it), with the JSON list editor the definitions' tags use, the versions and reverts of every
definition (``HistoryAdminMixin``), and a **preview** (``<id>/preview/``): ``serverInfo``,
``instructions`` and the four lists as a client of each protocol revision gets them from the
saved row (in tool search mode, the meta-tools and the pinned tools), shaped by the core's own
functions (``server_selection.lists``), a search box ranking the selection's tools with their
scores (``?q=``, issue 41), the endpoint's absolute URL and a copy button
(``static/registry/copy-url.js``: no inline script). Reading the preview needs the view
permission of virtual servers, as the change page does.

Names in the selection that the registry does not hold are refused on their field, as the REST
API refuses them (``server_selection.unknown_names``).
"""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html

from mcp_django.widgets import JSONEditorWidget
from mcp_protocol import versions
from mcp_protocol.endpoints import KINDS

from ..history.admin import HistoryAdminMixin
from ..models import VirtualServer
from ..server_selection import (
    current_snapshot,
    lists,
    members,
    readable_kinds,
    try_search,
    unknown_names,
    unserved,
)
from .base import JSON_WIDGETS
from .forms import VersionedForm

KIND_LABELS = (("tools", "tool"), ("resources", "resource"), ("resource_templates", "template"),
               ("prompts", "prompt"), ("skills", "skill"))


def endpoint_url(request: HttpRequest, row: VirtualServer) -> str:
    """The endpoint's absolute URL, as the request reached this site (scheme and host)."""
    return request.build_absolute_uri(f"/mcp/{row.slug}")


def counted(served: dict[str, list[str]]) -> str:
    """``3 tools, 1 prompt``: the non-empty kinds of ``members``."""
    parts = [f"{len(served[kind])} {label}{'' if len(served[kind]) == 1 else 's'}"
             for kind, label in KIND_LABELS if served.get(kind)]
    return ", ".join(parts) or "nothing"


# Each list and the kinds whose definitions it shows (resources/list: skills' SKILL.md too).
LIST_KINDS = {
    "tools/list": ("tools",),
    "resources/list": ("resources", "skills"),
    "resources/templates/list": ("resource_templates",),
    "prompts/list": ("prompts",),
}


def hidden_lists(user: Any, served: dict[str, list[str]]) -> set[str]:
    """The lists ``user`` may not read: a server's view permission is not a tool's (a list showing
    a kind the user may not view is withheld, as ``tryit`` withholds a resource)."""
    readable = readable_kinds(user)
    return {name for name, kinds in LIST_KINDS.items()
            if any(kind not in readable and served.get(kind) for kind in kinds)}


def shown(listed: dict[str, Any], hidden: set[str]) -> dict[str, Any]:
    return {key: (f"{len(value)} items, not shown: you may not view all of them" if key in hidden else value)
            for key, value in listed.items()}


class VirtualServerForm(VersionedForm):
    # Declared for assume_scheme (Django 6's default, said now: no deprecation warning).
    website_url = forms.URLField(required=False, assume_scheme="https", max_length=200, label="Website URL",
                                 help_text=VirtualServer._meta.get_field("website_url").help_text)

    class Meta:
        model = VirtualServer
        fields = "__all__"
        labels = {"server_version": "Version", "api_keys": "API keys", "oauth_scopes": "OAuth scopes"}
        # The admin shows help texts as HTML: a "<slug>" of the model's would vanish as a tag.
        help_texts = {
            "slug": "The endpoint's path segment: the server is served at /mcp/&lt;slug&gt;.",
            "skills": "Skill root URIs (skill://&lt;path&gt;) this server serves.",
        }
        # Lists of names are short: a few lines each, not the schema editor's ten.
        widgets = {name: JSONEditorWidget(attrs={"rows": 3}) for name in (
            *KINDS, "include_tags", "exclude_tags", "auth_modes", "api_keys", "oauth_scopes", "icons")}

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        # self.instance is the stored row until _post_clean: names it already holds are kept.
        stored = self.instance if self.instance.pk is not None else None
        for field, message in unknown_names(cleaned, stored).items():
            self.add_error(field, message)
        return cleaned


@admin.register(VirtualServer)
class VirtualServerAdmin(HistoryAdminMixin, admin.ModelAdmin):
    form = VirtualServerForm
    formfield_overrides = JSON_WIDGETS
    list_display = ("slug", "name", "enabled", "serves", "endpoint")
    list_filter = ("enabled",)
    search_fields = ("slug", "name", "title", "description")
    readonly_fields = ("serves_now", "created_at", "updated_at")
    fieldsets = (
        ("Identity (what clients see)", {"fields": (
            "slug", "name", "title", "server_version", "description", "instructions", "icons",
            "website_url", "enabled", "opened_version")}),
        ("Selection (what it serves)", {
            "description": "The definitions named here, plus those carrying an included tag, minus "
            "those carrying an excluded tag (an excluded tag wins). Names: tool names, resource URIs, "
            "URI template texts, prompt names, skill root URIs (skill://&lt;path&gt;).",
            "fields": ("tools", "resources", "resource_templates", "prompts", "skills", "include_tags",
                       "exclude_tags", "serves_now")}),
        ("Access (who may use it)", {"fields": ("auth_modes", "api_keys", "oauth_scopes", "rate_limit")}),
        ("Tool search (how clients find its tools)", {
            "description": "On (or auto above the threshold), tools/list shows only the two meta-tools "
            "and the tools marked <em>always load</em>; the model finds the others with the search "
            "meta-tool. The preview page shows what each revision lists and tries a search.",
            "fields": ("tool_search", "tool_search_threshold", "search_tool_name", "call_tool_name")}),
        (None, {"fields": ("created_at", "updated_at")}),
    )

    class Media:
        js = ("registry/copy-url.js",)

    # -- the list: members counted from one snapshot per page, the URL from the request ----------
    def get_changelist_instance(self, request: HttpRequest) -> Any:
        changelist = super().get_changelist_instance(request)
        snapshot = current_snapshot()
        for row in changelist.result_list:
            row.served = members(row, snapshot)
            row.url = endpoint_url(request, row)
        return changelist

    @admin.display(description="Serves now")
    def serves(self, row: VirtualServer) -> str:
        served = getattr(row, "served", None)
        return "" if served is None else counted(served)

    @admin.display(description="URL")
    def endpoint(self, row: VirtualServer) -> str:
        url = getattr(row, "url", None)
        return "" if url is None else format_html("<code>{}</code>", url)

    @admin.display(description="Serves now")
    def serves_now(self, row: VirtualServer) -> str:
        if row.pk is None:
            return "Save to see what the selection serves."
        stored = VirtualServer.objects.filter(pk=row.pk).first()  # not a refused form's values
        if stored is None:
            return ""
        # Counts only: the names, per kind the user may view, are on the preview page.
        return counted(members(stored, current_snapshot()))

    # -- the preview ------------------------------------------------------------------------------
    def get_urls(self) -> list[URLPattern]:
        view = self.admin_site.admin_view(self.preview_view)
        return [path("<path:object_id>/preview/", view, name="registry_virtualserver_preview"),
                *super().get_urls()]

    def change_view(self, request: HttpRequest, object_id: str, form_url: str = "",
                    extra_context: dict[str, Any] | None = None) -> HttpResponse:
        row = self.get_object(request, unquote(object_id))
        context = dict(extra_context or {})
        if row is not None:
            context["preview_url"] = reverse("admin:registry_virtualserver_preview", args=[row.pk])
            context["endpoint_url"] = endpoint_url(request, row)
        return super().change_view(request, object_id, form_url, context)

    def preview_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        # The admin's own lookup: an id that is no key is a 404, as on the change page.
        row = self.get_object(request, unquote(object_id))
        if row is None:
            raise Http404(f"No virtual server with id {object_id!r}.")
        if not self.has_view_permission(request, row):
            raise PermissionDenied
        snapshot = current_snapshot()
        served = members(row, snapshot)
        hidden = hidden_lists(request.user, served)
        revisions = [
            {"revision": revision, "json": json.dumps(shown(lists(row, snapshot, revision), hidden),
                                                      indent=2, ensure_ascii=False)}
            for revision in reversed(versions.ORDER)  # newest first: what most clients speak
        ]
        # Try a search (issue 41): the ranking the endpoint serves, over its selection, with scores;
        # only for a user who may view tools (a server's view permission is not a tool's).
        query = request.GET.get("q", "").strip()[:1000]
        may_search = "tools" in readable_kinds(request.user)
        context = {
            **self.admin_site.each_context(request),
            "query": query,
            "may_search": may_search,
            "search_mode": row.tool_search,
            "hits": try_search(row, snapshot, query) if query and may_search else None,
            "opts": self.opts,
            "original": row,
            "title": f"Preview of {row.slug}",
            "endpoint_url": endpoint_url(request, row),
            "served": counted(served),
            "unserved": unserved(row, served),
            "revisions": revisions,
            "media": self.media,
        }
        return TemplateResponse(request, "admin/registry/virtualserver/preview.html", context)
