"""The authorization request checked before anyone is asked to sign in: a request that can never
succeed fails first, so no user types a password for it (issue 37, "also found").

- About the client or the redirect URI (unknown ``client_id``, a ``redirect_uri`` not registered
  or missing): shown to the user as a 400 page, never redirected (RFC 6749 §4.1.2.1: the
  authorization server MUST NOT redirect to an unverified URI).
- Anything else once the redirect URI is known good (no PKCE or ``plain``, RFC 7636 §4.4.1; a bad
  ``response_type``; an unknown scope; a ``resource`` that is not ours, RFC 8707 §2): a redirect
  back with ``error=`` and the client's ``state``.

The checks are oauthlib's own (``validate_authorization_request``, the same the consent page runs
after sign-in) plus the resource: oauthlib does not know RFC 8707, and the toolkit checks only that
a resource is an absolute URI. Signed-in users get the resource check here too (the rest runs in
the toolkit's ``get``), so a foreign resource is refused at the authorization endpoint rather than
at the token endpoint, after consent.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from oauth2_provider.exceptions import OAuthToolkitError
from oauth2_provider.models import get_application_model
from oauthlib.oauth2.rfc6749.errors import CustomOAuth2Error

from .tokens import allowed_resources, ours


def _foreign(resources: list[str]) -> list[str]:
    return [r for r in resources if not ours(r)]


def refusal(view: Any, request: HttpRequest) -> HttpResponse | None:
    """The error answer to ``request`` (a GET of the authorization endpoint) if it can never
    succeed; None if it may go on to sign-in and consent. ``view``: the toolkit's
    ``AuthorizationView`` (its oauthlib core and error pages)."""
    foreign = _foreign(request.GET.getlist("resource"))
    if request.user.is_authenticated and not foreign:
        return None  # the toolkit's get() runs the same checks, once
    try:
        _, credentials = view.validate_authorization_request(request)
    except OAuthToolkitError as refused:
        return view.error_response(refused, application=None)  # type: ignore[no-any-return]
    if not foreign:
        return None
    application = get_application_model().objects.filter(client_id=credentials["client_id"]).first()
    error = OAuthToolkitError(
        error=CustomOAuth2Error(
            error="invalid_target",
            description=f"this server issues tokens for {', '.join(allowed_resources())} only",
            state=credentials.get("state"),
        ),
        redirect_uri=credentials["redirect_uri"],
    )
    return view.error_response(error, application)  # type: ignore[no-any-return]
