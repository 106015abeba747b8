"""The connect surface (docs/security.md "Connected services: acting for the user"):

- ``GET /connect/<provider>/?ref=<signed reference>``: signs the user in (the same accounts and
  sign-in page as the authorization server), checks the reference (``reference.py``: signature,
  age, this user, this provider, never used), starts a ``ConnectAttempt`` and redirects to the
  provider's authorization URL with a fresh ``state`` and a PKCE S256 challenge (RFC 7636 §4.2).
- ``GET /connect/<provider>/callback/?code&state``: the attempt is found by ``state`` (its
  digest), for this user, unused and young, and marked used in the same statement; the code is
  exchanged at the token URL (outbound rules) and the token stored in the vault. The page says
  "connected, return to your client". Every failure is a page naming it (400/403), never a 500.
- ``/connect/services/``: the user's "Connected services", each with a revoke button.

Redirects go to exactly two places: the provider's authorization URL (an operator's row, checked
by the outbound rules) and the sign-in page; no parameter names where to go next.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import secrets
from datetime import timedelta
from typing import Any
from urllib.parse import urlencode

from django.contrib.auth.views import redirect_to_login
from django.db import IntegrityError, transaction
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods

from mcp_django.conf import access_settings

from . import cipher, provider_client, reference, vault
from .credentials import origin
from .models import ConnectAttempt, ConnectedToken, Provider

logger = logging.getLogger(__name__)
ATTEMPT_SECONDS = 600  # a flow left at the provider longer than this must start again


def _login_url() -> str:
    return reverse("oauth_server_login") if access_settings()["OAUTH_SELF"] else reverse("admin:login")


def _page(request: HttpRequest, title: str, message: str, status: int = 200) -> HttpResponse:
    return render(request, "connections/message.html", {"title": title, "message": message}, status=status)


def _digest(state: str) -> str:
    return hashlib.sha256(state.encode()).hexdigest()


def callback_url(slug: str) -> str:
    return f"{origin()}{reverse('connections:callback', args=[slug])}"


@never_cache
@require_GET
def connect(request: HttpRequest, slug: str) -> HttpResponse:
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path(), _login_url())
    # A token exchange provider has nothing to connect (the caller's own token is exchanged).
    provider = Provider.objects.filter(slug=slug, enabled=True, kind=Provider.Kind.AUTHORIZATION_CODE).first()
    if provider is None:
        return _page(request, "Unknown service", f"No service {slug!r} can be connected here.", 404)
    try:
        ref = reference.read(request.GET.get("ref", ""))
    except reference.BadReference as exc:
        return _page(request, "Cannot connect", f"{str(exc).capitalize()}.", 400)
    if ref.provider != slug:
        return _page(request, "Cannot connect", "This link is for another service.", 400)
    if ref.user_id != request.user.pk:
        # Signed for someone else: a link forwarded, or a session mix-up; never connect this user's
        # account for that one (issue 42: "one user's call ran with another's upstream token").
        return _page(request, "Cannot connect", "This link was made for another account: sign in as "
                     "the user who called the tool, or call it again.", 403)
    state, verifier = secrets.token_urlsafe(32), secrets.token_urlsafe(48)
    # Attempts past their age can finish no flow: dropped here, so the table stays small. (A
    # reference outlives no attempt: MAX_AGE <= ATTEMPT_SECONDS, so a used one is never forgotten
    # while it could still be replayed.)
    ConnectAttempt.objects.filter(created_at__lt=timezone.now() - timedelta(seconds=ATTEMPT_SECONDS)).delete()
    try:
        with transaction.atomic():
            ConnectAttempt.objects.create(reference=ref.nonce, state_digest=_digest(state), verifier=verifier,
                                          user_id=request.user.pk, provider=provider,
                                          elicitation_id=ref.elicitation_id)
    except IntegrityError:
        return _page(request, "Cannot connect", "This link has been used already: call the tool again "
                     "for a new one.", 400)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    params = {"response_type": "code", "client_id": provider.client_id, "redirect_uri": callback_url(slug),
              "state": state, "code_challenge": challenge, "code_challenge_method": "S256"}
    if provider.scopes:
        params["scope"] = provider.scopes
    separator = "&" if "?" in provider.authorization_url else "?"
    return HttpResponseRedirect(f"{provider.authorization_url}{separator}{urlencode(params)}")


@never_cache
@require_GET
def callback(request: HttpRequest, slug: str) -> HttpResponse:
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path(), _login_url())
    state = request.GET.get("state", "")
    young = timezone.now() - timedelta(seconds=ATTEMPT_SECONDS)
    attempts = ConnectAttempt.objects.filter(state_digest=_digest(state), user_id=request.user.pk,
                                             provider__slug=slug, used_at__isnull=True, created_at__gt=young)
    attempt = attempts.select_related("provider").first()
    # Claimed by one conditional update: a state replayed (or raced) finds it used.
    if not state or attempt is None or not attempts.filter(pk=attempt.pk).update(used_at=timezone.now()):
        return _page(request, "Cannot connect", "This sign-in at the service is not one this page "
                     "started for you, or it was finished already: call the tool again.", 400)
    if request.GET.get("error"):
        return _page(request, "Not connected", f"{attempt.provider.name} answered "
                     f"{request.GET.get('error')!r}: nothing was connected.", 400)
    code = request.GET.get("code", "")
    if not code:
        return _page(request, "Cannot connect", "The service sent no authorization code.", 400)
    try:
        tokens = provider_client.exchange_code(attempt.provider, code, attempt.verifier, callback_url(slug))
        vault.store(request.user.pk, attempt.provider, tokens)
    except cipher.VaultLocked as exc:
        logger.error("connect %s: %s", slug, exc)
        return _page(request, "Not connected", "This server cannot keep tokens yet (its vault has no "
                     "key): tell its operator.", 503)
    except provider_client.ProviderError as exc:
        logger.warning("connect %s for user %s failed: %s", slug, request.user.pk, exc)
        return _page(request, "Not connected", f"{attempt.provider.name} did not give a token: {exc}.", 502)
    ConnectAttempt.objects.filter(pk=attempt.pk).update(verifier="")
    return _page(request, "Connected", f"Your {attempt.provider.name} account is connected. Return to "
                 "your client: the tool can call it as you now.")


@never_cache
@require_http_methods(["GET", "POST"])
def services(request: HttpRequest) -> HttpResponse:
    """The signed-in user's connected accounts; POST ``token=<id>`` revokes one of *theirs*."""
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path(), _login_url())
    mine = ConnectedToken.objects.filter(user_id=request.user.pk).select_related("provider")
    if request.method == "POST":
        chosen = request.POST.get("token", "")
        row = mine.filter(pk=int(chosen)).first() if chosen.isdigit() else None
        if row is not None:
            vault.revoke(row)
        return HttpResponseRedirect(reverse("connections:services"))
    rows: list[dict[str, Any]] = [
        {"pk": r.pk, "name": r.provider.name, "since": r.created_at, "scope": r.scope}
        for r in mine.order_by("provider__name")
    ]
    context = {"title": "Your connected services", "services": rows}
    return render(request, "connections/services.html", context)
