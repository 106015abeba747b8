"""The admin of the built-in authorization server: its signing keys (ids and dates, never the key)
and its audit rows, both read-only; the upstream resources it exchanges tokens for (RFC 8693),
with their history. Clients (pre-registered ones too), grants and tokens are the
toolkit's own admin pages (``oauth2_provider``), which staff use to see every user's grants."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.http import Http404, HttpRequest
from simple_history.admin import SimpleHistoryAdmin

from mcp_django.view_only_admin import ViewOnlyAdmin

from .models import ExchangeTarget, OAuthEvent, SigningKey
from .tokens import ours


class ReadOnly(ViewOnlyAdmin):
    deletable = True


@admin.register(SigningKey)
class SigningKeyAdmin(ReadOnly):
    list_display = ("kid", "algorithm", "created_at", "retired_at")
    fields = ("kid", "algorithm", "created_at", "retired_at")  # never private_key
    readonly_fields = fields


@admin.register(OAuthEvent)
class OAuthEventAdmin(ReadOnly):
    list_display = ("at", "kind", "user", "client_id", "detail")
    list_filter = ("kind",)
    search_fields = ("client_id", "user__username")

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ExchangeTargetForm(forms.ModelForm):
    # Declared for assume_scheme (Django 6's default, said now: no deprecation warning).
    resource = forms.URLField(assume_scheme="https", max_length=2048, label="Resource URL",
                              help_text=ExchangeTarget._meta.get_field("resource").help_text)

    class Meta:
        model = ExchangeTarget
        fields = ("name", "resource", "scopes", "enabled")

    def clean_resource(self) -> str:
        resource = str(self.cleaned_data["resource"])
        if ours(resource):
            # A "target" that is our own /mcp would let an exchanging client mint /mcp tokens.
            raise forms.ValidationError("this server's own MCP endpoints cannot be an exchange target")
        return resource


@admin.register(ExchangeTarget)
class ExchangeTargetAdmin(SimpleHistoryAdmin):
    form = ExchangeTargetForm
    list_display = ("name", "resource", "scopes", "enabled", "updated_at")
    list_filter = ("enabled",)
    search_fields = ("name", "resource")
    fields = ("name", "resource", "scopes", "enabled")

    def history_view(self, request: HttpRequest, object_id: str, extra_context: Any = None) -> Any:
        # simple-history looks the id up as given: a non-numeric one would be a 500, not a 404.
        if not str(object_id).isdigit():
            raise Http404(f"No exchange target {object_id!r}.")
        return super().history_view(request, object_id, extra_context)
