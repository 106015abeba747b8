"""The built-in authorization server's endpoints: django-oauth-toolkit's views, each answering 404
unless ``MCP_OAUTH_ISSUER=self`` (``self_only``), with what MCP asks of them:

- ``ServerMetadataView``: RFC 8414 metadata (and the OpenID discovery path, where clients also
  look), S256 only, ``none`` among the token endpoint's auth methods, ``jwks_uri``;
- ``JwksView``: the signing keys' public halves (``keys.jwks``);
- ``AuthorizeView``: a request that can never succeed refused first (``authorize_checks``), then
  sign-in through Django's own authentication (any backend the project has), then a consent page,
  always (whatever ``approval_prompt`` the client sends), styled like the admin: the client's
  name, its redirect host, the scopes in words (``scopes.describe``), and the virtual server the
  token is for when its ``resource`` is one (``/mcp/<slug>``: its title or name);
- ``LoginView``: the admin's sign-in form, for users who are not staff too, with a bound on
  password guesses (``sign_in_limits``);
- the token, revocation and registration endpoints, rate limited per client address (``limits``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import wraps
from typing import Any
from urllib.parse import urlsplit

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.urls import reverse_lazy
from oauth2_provider import views as dot

from mcp_django.conf import access_settings

from . import exchange, keys
from .authorize_checks import refusal
from .clients_page import ClientsPage
from .conf import TOKEN_EXCHANGE
from .limits import rate_limited
from .profiles import profile, remember
from .sign_in_limits import sign_in_limited
from .tokens import endpoint_of


def self_only(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not access_settings()["OAUTH_SELF"]:
            raise Http404("this server has no authorization server of its own (MCP_OAUTH_ISSUER)")
        return view(request, *args, **kwargs)

    return wrapped


class ServerMetadataView(dot.OAuthServerMetadataView):  # type: ignore[misc]
    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response = super().get(request, *args, **kwargs)
        data = json.loads(response.content)
        # The toolkit drops "plain" with its RFC 9700 gate on; S256 is all we accept (server.py).
        data["code_challenge_methods_supported"] = ["S256"]
        data["authorization_response_iss_parameter_supported"] = True  # RFC 9207
        data["jwks_uri"] = f"{data['issuer']}/.well-known/jwks.json"
        data["service_documentation"] = f"{data['issuer']}/"
        body = JsonResponse(data)
        body["Access-Control-Allow-Origin"] = "*"  # public metadata, read by browser clients
        body["Cache-Control"] = "max-age=300"
        return body


class TokenView(dot.TokenView):  # type: ignore[misc]
    """The toolkit's token endpoint (with our grants, ``server.py``), every form field hidden from
    Django's error reports: the toolkit marks ``password`` and ``client_secret`` only, and a token
    exchange's ``subject_token`` is a user's live access token (RFC 8693 §5)."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.POST.get("grant_type") == TOKEN_EXCHANGE:
            refused = exchange.repeated(dict(request.POST.lists()))
            if refused is not None:
                error, description = refused
                answer = JsonResponse({"error": error, "error_description": description}, status=400)
                answer["Cache-Control"] = "no-store"  # RFC 6749 §5.2
                return answer
        return super().post(request, *args, **kwargs)  # type: ignore[no-any-return]

    def create_token_response(self, request: HttpRequest) -> Any:
        # Set here, after the toolkit's own sensitive_post_parameters ran, so ours is the one kept.
        request.sensitive_post_parameters = "__ALL__"  # type: ignore[attr-defined]
        return super().create_token_response(request)


def jwks(request: HttpRequest) -> JsonResponse:
    response = JsonResponse(keys.jwks())
    response["Access-Control-Allow-Origin"] = "*"
    response["Cache-Control"] = "max-age=60"
    return response


class RegistrationView(dot.DynamicClientRegistrationView):  # type: ignore[misc]
    """RFC 7591 registration, keeping the client's logo and home page for the consent page."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response: HttpResponse = super().post(request, *args, **kwargs)
        if response.status_code == 201:
            try:
                metadata, answer = json.loads(request.body), json.loads(response.content)
            except ValueError:
                return response
            if isinstance(metadata, dict) and isinstance(answer, dict) and answer.get("client_id"):
                remember(str(answer["client_id"]), metadata)
        return response


class LoginView(auth_views.LoginView):
    """Django's sign-in, in the admin's look; any authentication backend the project configures."""

    template_name = "admin/login.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context.update(admin.site.each_context(self.request))
        context.setdefault("title", "Sign in to connect an MCP client")
        return context


class AuthorizeView(dot.AuthorizationView):  # type: ignore[misc]
    template_name = "oauth_server/authorize.html"
    login_url = reverse_lazy("oauth_server_login")

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.method == "GET":
            refused = refusal(self, request)
            if refused is not None:
                return refused
        return super().dispatch(request, *args, **kwargs)  # type: ignore[no-any-return]

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        # The consent page is shown every time (REQUEST_APPROVAL_PROMPT "force"): the toolkit lets
        # a client skip it with approval_prompt=auto when the user holds a live token for it, so
        # a client would decide whether its user is asked (issue 37 item 7).
        if "approval_prompt" in request.GET:
            request.GET = request.GET.copy()
            del request.GET["approval_prompt"]
        return super().get(request, *args, **kwargs)  # type: ignore[no-any-return]

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context: dict[str, Any] = super().get_context_data(**kwargs)
        context.update(admin.site.each_context(self.request))
        redirect_uri = str(context.get("redirect_uri") or "")
        context["redirect_host"] = urlsplit(redirect_uri).hostname or ""
        scopes = context.get("scopes") or []
        context["scope_rows"] = list(zip(scopes, context.get("scopes_descriptions") or [], strict=False))
        context["title"] = "Connect an MCP client"
        context["profile"] = profile(str(context.get("client_id") or ""))
        # A token for a virtual server (RFC 8707 resource /mcp/<slug>) is for that server only:
        # the page names it, so the user knows which of the site's servers they let the client use.
        servers = [s for r in self.request.GET.getlist("resource") if (s := endpoint_of(r)) is not None]
        context["servers"] = [s.title or s.name for s in servers]
        return context

    def form_valid(self, form: Any) -> HttpResponse:
        """The user may grant fewer scopes than asked (the boxes they leave ticked); none is a
        denial. The client learns what it got from the token response's ``scope`` (RFC 6749 §5.1)."""
        if self.request.POST.get("choosing_scopes"):
            ticked = set(self.request.POST.getlist("granted"))
            chosen = [s for s in str(form.cleaned_data.get("scope") or "").split() if s in ticked]
            form.cleaned_data["scope"] = " ".join(chosen)
            if not chosen:
                form.cleaned_data["allow"] = False
        return super().form_valid(form)  # type: ignore[no-any-return]


metadata = self_only(ServerMetadataView.as_view())
jwks_view = self_only(jwks)
login = self_only(sign_in_limited(LoginView.as_view()))
authorize = self_only(AuthorizeView.as_view())
token = self_only(rate_limited("TOKEN_RATE")(TokenView.as_view()))
revoke = self_only(rate_limited("TOKEN_RATE")(dot.RevokeTokenView.as_view()))
register = self_only(rate_limited("REGISTRATION_RATE")(RegistrationView.as_view()))
registration = self_only(
    rate_limited("REGISTRATION_RATE")(dot.DynamicClientRegistrationManagementView.as_view())
)
clients = self_only(ClientsPage.as_view())
