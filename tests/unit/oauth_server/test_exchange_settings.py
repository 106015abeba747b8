"""Token exchange (oauth_server/exchange.py) is off until an operator names a client: the grant is
then refused at the token endpoint and absent from the metadata's ``grant_types_supported``
(RFC 8414 §2). With clients named it is advertised. The grant itself, against a real server, is
tests/integration/test_token_exchange.py and tests/security/test_token_exchange.py."""

from __future__ import annotations

import pytest
from django.test import Client, override_settings

from oauth_server.conf import TOKEN_EXCHANGE, exchange_clients, provider_settings

SELF = {"ACCESS": {"MODE": "oauth", "OAUTH_ISSUER": "self", "RESOURCE_URL": "http://testserver/mcp"}}


def test_the_grant_is_advertised_only_with_clients_named() -> None:
    assert TOKEN_EXCHANGE not in provider_settings({})["OAUTH2_GRANT_TYPES_SUPPORTED"]
    named = provider_settings({"EXCHANGE_CLIENTS": ["mcpsite"]})
    assert TOKEN_EXCHANGE in named["OAUTH2_GRANT_TYPES_SUPPORTED"]
    assert exchange_clients({"EXCHANGE_CLIENTS": " a, ,b "}) == {"a", "b"}  # the env's comma list


@pytest.mark.django_db
def test_with_no_client_named_the_grant_is_unsupported() -> None:
    with override_settings(MCP=SELF, MCP_OAUTH_SERVER={"EXCHANGE_CLIENTS": []}):
        answer = Client().post("/oauth/token/", {"grant_type": TOKEN_EXCHANGE, "subject_token": "x",
                                                 "resource": "https://api.example/"})
    assert answer.status_code == 400
    assert answer.json()["error"] == "unsupported_grant_type"
