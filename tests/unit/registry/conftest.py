"""Fixtures for the registry tests: a provider, a request context that records what it sends."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_protocol.context import Context
from mcp_protocol.outbound import Outbound
from mcp_protocol.session import Session
from registry.provider import RegistryProvider
from registry.transfer.fixtures import load_document, read_fixture


class RecordingOutbound(Outbound):
    """Records notifications; answers server→client requests from a table (a scripted client)."""

    def __init__(self, answers: dict[str, dict[str, Any]] | None = None) -> None:
        self.notifications: list[tuple[str, dict[str, Any] | None]] = []
        self.requests: list[tuple[str, dict[str, Any] | None]] = []
        self.answers = answers or {}

    async def notify(self, method: str, params: dict[str, Any] | None) -> None:
        self.notifications.append((method, params))

    async def request(self, method: str, params: dict[str, Any] | None, timeout: float) -> dict[str, Any]:
        self.requests.append((method, params))
        return self.answers[method]


def make_context(
    *,
    answers: dict[str, dict[str, Any]] | None = None,
    capabilities: dict[str, Any] | None = None,
    progress_token: str | int | None = None,
    log_level: str | None = None,
) -> Context:
    session = Session(
        id="test-session",
        protocol_version="2025-11-25",
        state="ready",
        log_level=log_level,
        client_capabilities=capabilities if capabilities is not None else {},
    )
    return Context(session=session, outbound=RecordingOutbound(answers), progress_token=progress_token)


@pytest.fixture
def ctx() -> Context:
    return make_context()


@pytest.fixture
def conformance(db: None) -> None:
    load_document(read_fixture("conformance"))


@pytest.fixture
def demo(db: None) -> None:
    load_document(read_fixture("demo"))


@pytest.fixture
def provider(db: None) -> RegistryProvider:
    """A provider whose state is built lazily, in the test's thread (so it sees the test's rows)."""
    return RegistryProvider()


def tool_form(**overrides: Any) -> dict[str, Any]:
    data = {
        "name": "admin_tool",
        "title": "",
        "description": "Made in the admin",
        "enabled": "on",
        "input_schema": json.dumps(
            {"type": "object", "properties": {"who": {"type": "string"}}, "required": ["who"]}
        ),
        "output_schema": "",
        "kind": "template",
        "handler": "",
        "template_text": "Hi {{ who }}",
        "template_structured": "",
        "http_method": "POST",
        "http_url": "",
        "http_headers": "{}",
        "http_body_template": "",
        "http_result_pointer": "",
        "http_timeout": "10",
        "http_max_concurrency": "",
        "http_secret_header": "",
        "http_secret_env": "",
        "http_signing_secret_env": "",
        "http_signing_scheme": "v2",
        "annotations": "",
        "icons": "[]",
        "meta": "{}",
        "execution": "",
    }
    return {**data, **overrides}
