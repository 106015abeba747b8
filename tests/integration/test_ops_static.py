"""Static files from the server process itself (WhiteNoise), in both modes, from real uvicorn
processes: development serves straight from the apps (no collectstatic); production serves the
hashed, compressed copies ``collectstatic`` wrote, with far-future caching. The admin is styled
either way (issue 12: "``/static/admin/css/base.css`` is a 404" under uvicorn before)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from mcpsite.fleet import PLAIN_HTTP
from tests.support import LiveServer

pytestmark = pytest.mark.timeout(90)


@pytest.fixture(scope="module")
def development() -> Iterator[LiveServer]:
    server = LiveServer(migrate=True).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def production(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    root = tmp_path_factory.mktemp("static")
    env = {"DJANGO_DEBUG": "0", "DJANGO_STATIC_ROOT": str(root), "SECRET_KEY": "test-only-" + "x" * 40,
           **PLAIN_HTTP}
    server = LiveServer(env=env, load=[["collectstatic", "--noinput"]]).start()
    try:
        yield server
    finally:
        server.stop()


def test_development_serves_the_admin_stylesheet_straight_from_the_app(development: LiveServer) -> None:
    response = httpx.get(f"{development.base_url}/static/admin/css/base.css", timeout=10)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/css")
    assert "--primary" in response.text  # Django's admin stylesheet, not an error page
    login = httpx.get(f"{development.base_url}/admin/login/", timeout=10)
    assert '/static/admin/css/base.css"' in login.text  # unhashed name in development


def test_production_serves_hashed_compressed_copies_from_collectstatic(production: LiveServer) -> None:
    login = httpx.get(f"{production.base_url}/admin/login/", timeout=10)
    assert login.status_code == 200
    found = re.search(r'href="(/static/admin/css/base\.[0-9a-f]{12}\.css)"', login.text)
    assert found, "the admin page names the hashed stylesheet"
    stylesheet = httpx.get(
        f"{production.base_url}{found.group(1)}", headers={"accept-encoding": "gzip"}, timeout=10
    )
    assert stylesheet.status_code == 200
    assert stylesheet.headers["content-encoding"] == "gzip"  # the precompressed copy
    assert "immutable" in stylesheet.headers["cache-control"]  # hashed: cacheable for ever
    assert "--primary" in stylesheet.text
    assert Path(production.env["DJANGO_STATIC_ROOT"], "staticfiles.json").is_file()
