"""The signed-in user's own page of the clients they authorized (``/oauth/clients/``): each
client's name, where it redirects, the scopes its tokens hold and when it last got one, and a
button that revokes every token of that client for this user (its refresh tokens at once, its
access tokens on ``/mcp`` within a second: ``revocations.py``)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.contrib import admin
from django.contrib.auth.mixins import LoginRequiredMixin
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import NoReverseMatch, reverse, reverse_lazy
from django.views.generic import TemplateView
from oauth2_provider.models import get_access_token_model, get_refresh_token_model

from .models import record
from .revocations import revoke


def authorized(user: Any) -> list[dict[str, Any]]:
    """The clients holding a live token of ``user``, newest first."""
    clients: dict[int, dict[str, Any]] = {}
    tokens = (
        get_refresh_token_model()
        .objects.filter(user=user, revoked__isnull=True)
        .select_related("application", "access_token")
    )
    for token in tokens.order_by("-created"):
        app = token.application
        if app is None:
            continue
        row = clients.setdefault(
            app.pk,
            {
                "pk": app.pk,
                "name": app.name or app.client_id,
                "client_id": app.client_id,
                "redirect_hosts": sorted({urlsplit(u).hostname or u for u in app.redirect_uris.split()}),
                "scopes": set(),
                "last": token.created,
            },
        )
        if token.access_token is not None:
            row["scopes"].update(token.access_token.scope.split())
    return [{**row, "scopes": sorted(row["scopes"])} for row in clients.values()]


class ClientsPage(LoginRequiredMixin, TemplateView):
    template_name = "oauth_server/clients.html"
    login_url = reverse_lazy("oauth_server_login")

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context.update(admin.site.each_context(self.request))
        context["title"] = "Your connected MCP clients"
        context["clients"] = authorized(self.request.user)
        # "Connected services" (the connections app, issue 42), when the project installs it.
        try:
            context["services_url"] = reverse("connections:services")
        except NoReverseMatch:
            context["services_url"] = None
        return context

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        pk = request.POST.get("application")
        with transaction.atomic():
            refresh = get_refresh_token_model().objects.filter(
                user=request.user, application_id=pk, revoked__isnull=True
            )
            client_id = ""
            for token in refresh.select_related("application"):
                client_id = token.application.client_id
                token.revoke()
            get_access_token_model().objects.filter(user=request.user, application_id=pk).delete()
        if client_id:
            revoke(request.user, client_id)  # its access tokens too, on /mcp
            record("client_revoked", user=request.user, client_id=client_id)
        return HttpResponseRedirect(reverse("oauth_server_clients"))
