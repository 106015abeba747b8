"""The built-in authorization server's URLs. ``endpoints`` go under ``/oauth/`` in the toolkit's
namespace (its views reverse ``oauth2_provider:authorize`` and the like); ``well_known`` at the
origin's root (RFC 8414 §3, RFC 7517 for the JWKS), with the OpenID discovery path and the
path-inserted form for ``/mcp`` that clients of the 2025-03-26 era try."""

from django.urls import path

from . import views

app_name = "oauth2_provider"

endpoints = [
    path("authorize/", views.authorize, name="authorize"),
    path("token/", views.token, name="token"),
    path("revoke/", views.revoke, name="revoke-token"),
    path("register/", views.register, name="dcr-register"),
    # RFC 7592: the registration access token a DCR response carries reads/updates/deletes it.
    path("register/<str:client_id>/", views.registration, name="dcr-register-management"),
]

urlpatterns = endpoints

well_known = [
    path(".well-known/oauth-authorization-server", views.metadata, name="oauth_server_metadata"),
    path(".well-known/oauth-authorization-server/mcp", views.metadata),
    path(".well-known/openid-configuration", views.metadata),
    path(".well-known/jwks.json", views.jwks_view, name="oauth_server_jwks"),
    path("oauth/login/", views.login, name="oauth_server_login"),
    path("oauth/clients/", views.clients, name="oauth_server_clients"),
]
