"""Every route of the admin and of the REST API, walked from the URL resolver (issue 37, the
habit): a route added tomorrow is walked tomorrow, with no list here to keep in step.

Each path parameter is filled with odd ids (``abc``, ``0``, ``-1``, a huge integer, ``%00``, a UUID
that names nothing, with and without dashes, ``..``) and each path is requested with GET and with a
POST of a garbage body, as

- an anonymous client: never data (the admin sends it to its login page; the API answers 401/403),
- a staff user holding no permission: 403 or 404 (or a redirect, or a page of its own, the admin's
  index with nothing on it, on the few routes every staff user has),
- for the API, that user's management token (a token acts as its user; there are no token scopes).

API routes are also sent PUT, PATCH and DELETE (the methods that write there).

Whatever the answer, it is never a 500, never carries the canary that every stored definition
holds, and nothing is written. The rule: docs/security.md "Adding a surface".
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.apps import apps
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from management_api.tokens import ManagementToken
from registry.models import Prompt, Resource, Tool, Upstream, VirtualServer
from registry.skills.loading import replace_skill

pytestmark = pytest.mark.django_db

CANARY = "CANARY-5e1f"
ODD_IDS = ("abc", "0", "-1", "99999999999999999999", "%00", str(uuid.uuid4()), uuid.uuid4().hex, "..")
GARBAGE = b"\x00{not json<>"
SURFACES = ("admin/", "api/v1/")
# Pages every signed-in staff user has, whatever their permissions (Django's own admin pages and
# the API's description of itself): a 200 there is no leak, and the canary check still applies.
STAFF_PAGES = {
    "admin:index", "admin:logout", "admin:password_change", "admin:password_change_done",
    "admin:jsi18n", "admin:login", "admin/login/", "api:schema", "api:docs", "api:api-root",
}
# admin/login/: the admin's sign-in behind the password-guess bound (mcpsite/urls.py).
PUBLIC_PAGES = {"admin:login", "admin/login/", "admin:logout"}  # before signing in
NO_DATA = {301, 302, 400, 401, 403, 404, 405, 409, 412, 415}
# Rows not counted for "nothing is written": signing in writes the session.
NOT_COUNTED = {"sessions.session"}


@dataclass(frozen=True)
class Route:
    pattern: str  # the full pattern, as the resolver joins it: "admin/registry/tool/<path:object_id>/"
    name: str  # "admin:registry_tool_change", or the pattern when unnamed

    @property
    def params(self) -> list[str]:
        return PARAM.findall(self.pattern)

    def paths(self) -> Iterator[str]:
        """The route's paths, every parameter filled with each odd id in turn."""
        if not self.params:
            yield "/" + _literal(self.pattern)
            return
        for odd in ODD_IDS:
            yield "/" + _literal(PARAM.sub(odd.replace("\\", r"\\"), self.pattern))


PARAM = re.compile(r"<(?:\w+:)?\w+>|\(\?P<\w+>[^()]*\)")


def _literal(pattern: str) -> str:
    # The admin's and the router's regex routes ("^tools/$"): their anchors go, their text stays.
    return pattern.replace("^", "").replace("$", "")


def _walk(patterns: list[Any], prefix: str = "", namespace: str | None = None) -> Iterator[Route]:
    for entry in patterns:
        if isinstance(entry, URLResolver):
            inner = ":".join(n for n in (namespace, entry.namespace) if n) or None
            yield from _walk(entry.url_patterns, prefix + str(entry.pattern), inner)
        elif isinstance(entry, URLPattern):
            full = prefix + str(entry.pattern)
            name = f"{namespace}:{entry.name}" if namespace and entry.name else full
            yield Route(full, name)


def routes() -> list[Route]:
    return [r for r in _walk(get_resolver().url_patterns) if r.pattern.startswith(SURFACES)]


def fingerprint() -> dict[str, int]:
    return {
        m._meta.label_lower: m._default_manager.count()
        for m in apps.get_models()
        if m._meta.label_lower not in NOT_COUNTED and m._meta.managed and not m._meta.proxy
    }


@pytest.fixture
def stored() -> None:
    """One definition of each kind, each holding the canary: a leak shows it."""
    Tool.objects.create(name="canary", description=CANARY, kind="template", template_text=CANARY,
                        input_schema={"type": "object", "properties": {}})
    Resource.objects.create(uri="file:///canary.txt", name="canary", text=CANARY)
    Prompt.objects.create(name="canary", description=CANARY)
    replace_skill("canary", f"---\nname: canary\ndescription: {CANARY}\n---\n{CANARY}\n", [])
    VirtualServer.objects.create(slug="canary", name="canary", instructions=CANARY, tools=["canary"])
    # An upstream (issue 40) that nothing may reach (no host allowed), with a mirrored tool and a
    # pending review holding the canary: its pages, its API and its actions show none of it.
    upstream = Upstream.objects.create(name="canary", prefix="canary", url="https://canary.example/mcp",
                                       health_detail=CANARY, pending_sync={"report": {"added": [CANARY]}})
    Tool.objects.create(name="canary_mirrored", description=CANARY, kind="upstream", upstream=upstream,
                        upstream_name="mirrored")


@pytest.fixture
def nobody() -> User:
    user = User.objects.create_user("nobody", is_staff=True)  # staff, not one permission
    user.set_unusable_password()
    user.save()
    return user


def _clients(route: Route, user: User) -> dict[str, Client]:
    signed_in = Client(raise_request_exception=False)
    signed_in.force_login(user)
    clients = {"anonymous": Client(raise_request_exception=False), "staff": signed_in}
    if route.pattern.startswith("api/"):
        token = ManagementToken.issue(user, "no permission")[1]
        clients["token"] = Client(raise_request_exception=False, HTTP_AUTHORIZATION=f"Bearer {token}")
    return clients


def _problem(route: Route, who: str, method: str, answer: Any) -> str | None:
    status = answer.status_code
    body = b"".join(answer.streaming_content) if answer.streaming else answer.content
    if status >= 500:
        return f"{status}"
    if CANARY.encode() in body:
        return f"{status} with the canary"
    if status in NO_DATA:
        if who == "anonymous" and route.pattern.startswith("admin/") and status == 302:
            if not answer["Location"].startswith("/admin/login/") and route.name not in PUBLIC_PAGES:
                return f"302 to {answer['Location']}"
        return None
    allowed = PUBLIC_PAGES if who == "anonymous" else STAFF_PAGES
    if route.name in allowed or (route.name == "admin:app_list" and who == "staff"):
        return None
    return f"{status} (data for a caller with no permission)"


ROUTES = routes()


def test_the_walk_finds_the_admin_and_the_api() -> None:
    names = {r.name for r in ROUTES}
    assert {"admin:registry_tool_change", "admin:registry_resource_app_view", "api:registry-import",
            "api:tool-detail", "api:version-revert", "api:server-detail",
            "admin:registry_virtualserver_preview", "api:upstream-sync", "api:upstream-approve",
            "api:upstream-test", "admin:registry_upstream_review", "admin:registry_upstream_sync"} <= names
    assert len(ROUTES) > 100


@pytest.mark.parametrize("route", ROUTES, ids=[r.name for r in ROUTES])
def test_a_route_gives_nothing_to_a_caller_without_permission(
    route: Route, stored: None, nobody: User
) -> None:
    clients = _clients(route, nobody)
    methods = ("get", "post", *(("put", "patch", "delete") if route.pattern.startswith("api/") else ()))
    before = fingerprint()
    problems = []
    for path in route.paths():
        for who, client in clients.items():
            for method in methods:
                cache.clear()  # the API's throttles: every request is judged on its own
                kwargs = {"data": GARBAGE, "content_type": "application/json"} if method != "get" else {}
                answer = getattr(client, method)(path, **kwargs)
                if problem := _problem(route, who, method, answer):
                    problems.append(f"{method.upper()} {path} as {who}: {problem}")
    assert not problems, "\n".join(problems)
    assert fingerprint() == before, "a request without permission wrote"
