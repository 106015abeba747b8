"""The Django views beside ``/mcp/<slug>`` (issue 39 items 5 and 6): RFC 9728 metadata per
virtual server, the Server Card per endpoint and the site's AI Catalog (the shapes of
experimental-ext-server-card@8924e08), and the built-in authorization server's resources (RFC
8707: ``/mcp`` and every enabled server's URL, nothing else)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.apps import apps
from django.conf import settings
from django.db.models import QuerySet
from django.test import Client, override_settings
from oauthlib.oauth2.rfc6749 import errors

BASE = "http://testserver/mcp"
SCOPES = {"mcp": {}, "mcp:read": {"tools": ["echo"]}, "mcp:admin": {}}


def server(slug: str, **fields: Any) -> Any:
    """A row as stored, without the registry's change and history bookkeeping (a plain QuerySet's
    bulk_create): what these views read is the table."""
    model = apps.get_model("registry", "VirtualServer")
    return QuerySet(model).bulk_create([model(slug=slug, name=f"srv-{slug}", **fields)])[0]


@pytest.fixture
def servers(db: None) -> None:
    server("support", title="Support desk", description="Tickets and FAQ", server_version="2.0.0",
           tools=["echo"], oauth_scopes=["mcp:read"], website_url="https://support.example/")
    server("ci", auth_modes=["keys"], api_keys=["abcd1234"], tools=["echo"])
    server("docs", auth_modes=["open"], tools=["echo"])
    server("off", enabled=False, tools=["echo"])


def mode(mode: str, issuer: str | None = "self") -> Any:
    access = {"MODE": mode, "OAUTH_ISSUER": issuer, "RESOURCE_URL": BASE, "OAUTH_SCOPES": SCOPES}
    return override_settings(MCP={**settings.MCP, "ACCESS": access})


@pytest.fixture
def oauth(servers: None) -> Iterator[None]:
    with mode("oauth"):
        yield


def test_each_server_has_its_own_protected_resource_metadata(oauth: None, client: Client) -> None:
    meta = client.get("/.well-known/oauth-protected-resource/mcp/support").json()
    assert meta["resource"] == f"{BASE}/support"
    assert meta["authorization_servers"] == ["http://testserver"]
    assert meta["scopes_supported"] == ["mcp:read"]  # its own scopes
    assert meta["resource_name"] == "Support desk"
    docs = client.get("/.well-known/oauth-protected-resource/mcp/docs").json()
    assert docs["resource"] == f"{BASE}/docs" and docs["scopes_supported"] == sorted(SCOPES)
    assert client.get("/.well-known/oauth-protected-resource/mcp").json()["resource"] == BASE


@pytest.mark.parametrize("slug", ["nope", "off", "ci"])  # unknown, disabled, takes no token
def test_metadata_of_an_unknown_disabled_or_tokenless_server_is_a_json_404(
        oauth: None, client: Client, slug: str) -> None:
    response = client.get(f"/.well-known/oauth-protected-resource/mcp/{slug}")
    assert response.status_code == 404 and response.json()["error"] == "not_found"


def test_the_server_card_describes_the_endpoint_and_how_to_reach_it(oauth: None, client: Client) -> None:
    response = client.get("/mcp/support/server-card", HTTP_ACCEPT="application/mcp-server-card+json")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/mcp-server-card+json"
    assert response["Access-Control-Allow-Origin"] == "*"
    assert response["Cache-Control"] == "public, max-age=300"
    card = response.json()
    assert card["$schema"] == "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"
    assert card["name"] == "testserver/support" and card["version"] == "2.0.0"
    assert card["title"] == "Support desk" and card["description"] == "Tickets and FAQ"
    assert card["websiteUrl"] == "https://support.example/"
    http, sse = card["remotes"]
    assert http == {"type": "streamable-http", "url": f"{BASE}/support",
                    "supportedProtocolVersions": ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26",
                                                  "2024-11-05"]}
    assert sse["type"] == "sse" and sse["url"] == "http://testserver/sse/support"
    auth = card["_meta"]["io.mcpsite/auth"]
    assert auth == {"modes": ["oauth"], "resourceMetadata":
                    "http://testserver/.well-known/oauth-protected-resource/mcp/support"}
    assert "tools" not in card and "instructions" not in card


def test_a_keyed_servers_card_asks_for_a_key_naming_no_key_and_no_tool(oauth: None, client: Client) -> None:
    card = client.get("/mcp/ci/server-card").json()
    header = card["remotes"][0]["headers"][0]
    assert header["name"] == "Authorization" and header["isRequired"] and header["isSecret"]
    assert card["_meta"]["io.mcpsite/auth"] == {"modes": ["keys"]}
    assert "abcd1234" not in str(card) and "echo" not in str(card)


def test_the_card_is_revalidated_with_its_etag(oauth: None, client: Client) -> None:
    first = client.get("/mcp/docs/server-card")
    again = client.get("/mcp/docs/server-card", HTTP_IF_NONE_MATCH=first["ETag"])
    assert again.status_code == 304 and again["ETag"] == first["ETag"] and not again.content


def test_cards_of_unknown_or_disabled_servers_are_404(oauth: None, client: Client) -> None:
    for slug in ("nope", "off"):
        response = client.get(f"/mcp/{slug}/server-card")
        assert response.status_code == 404 and response.json()["error"] == "not_found"
    assert client.get("/mcp/server-card").json()["remotes"][0]["url"] == BASE  # the catch-all's


def test_the_catalog_lists_the_catch_all_and_every_enabled_server(oauth: None, client: Client) -> None:
    response = client.get("/.well-known/ai-catalog.json")
    assert response["Content-Type"] == "application/ai-catalog+json"
    catalog = response.json()
    assert catalog["specVersion"] == "1.0"
    assert [(e["identifier"], e["url"]) for e in catalog["entries"]] == [
        ("urn:air:testserver:mcp:_all", "http://testserver/mcp/server-card"),
        ("urn:air:testserver:mcp:ci", "http://testserver/mcp/ci/server-card"),
        ("urn:air:testserver:mcp:docs", "http://testserver/mcp/docs/server-card"),
        ("urn:air:testserver:mcp:support", "http://testserver/mcp/support/server-card"),
    ]
    assert {e["type"] for e in catalog["entries"]} == {"application/mcp-server-card+json"}


def test_the_authorization_server_issues_tokens_for_mcp_and_enabled_servers_only(oauth: None) -> None:
    from oauth_server.tokens import audience, endpoint_of

    assert audience([f"{BASE}/support"]) == [f"{BASE}/support"]
    assert audience([]) == [BASE]
    assert endpoint_of(f"{BASE}/support/").name == "srv-support"
    for foreign in (f"{BASE}/off", f"{BASE}/nope", f"{BASE}/support/x", "https://elsewhere.example/mcp/support"):
        with pytest.raises(errors.CustomOAuth2Error) as refused:
            audience([foreign])
        assert refused.value.error == "invalid_target" and "support" not in refused.value.description


def test_the_home_page_lists_each_server_with_a_config_to_paste(servers: None, client: Client) -> None:
    with mode("keys,oauth"):
        html = client.get("/").content.decode()
    assert '<section class="endpoint" data-slug="support">' in html and "Support desk" in html
    assert '<code class="endpoint-url">http://testserver/mcp/ci</code>' in html
    assert "&quot;type&quot;: &quot;http&quot;" in html
    assert "&quot;url&quot;: &quot;http://testserver/mcp/docs&quot;" in html
    assert 'data-slug="off"' not in html  # disabled
    ci = html.split('data-slug="ci"')[1].split("</section>")[0]
    assert "an API key" in ci and "Authorization" in ci and 'href="/mcp/ci/server-card"' in ci
