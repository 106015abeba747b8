"""The ``http`` tool kind against a real API on loopback (``tests/support/upstream.py``): the
worker's pooled session, requests of every shape, signatures the upstream verifies, retries the
upstream counts, deadlines, the concurrency cap and the private-range guard (issue 29)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import override_settings

from registry.models import Tool
from registry.provider import RegistryProvider
from tests.support.upstream import Upstream

from .conftest import make_context

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("allow_loopback")]


@pytest.fixture(scope="module")
def api() -> Iterator[Upstream]:
    with Upstream(secret=b"shared-secret") as server:
        yield server


@pytest.fixture
def allow_loopback(api: Upstream) -> Iterator[None]:
    api.clear()
    with override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1"]):
        yield


def make_tool(**fields: Any) -> Tool:
    base: dict[str, Any] = {
        "description": "d",
        "kind": "http",
        "input_schema": {"type": "object", "properties": {}},
    }
    row = Tool(**{**base, **fields})
    row.full_clean()
    row.save()
    return row


async def call(
    provider: RegistryProvider, name: str, arguments: dict[str, Any], **ctx: Any
) -> dict[str, Any]:
    tool = provider.snapshot().tool(name)
    assert tool is not None, f"{name} is not in the snapshot"
    return await provider.call_tool(tool, arguments, make_context(**ctx))


def run_served(provider: RegistryProvider, work: Any) -> Any:
    """``work(provider)`` on one loop whose runtime started the provider (its pooled session) and
    stops it at the end, as a worker's lifespan does. The snapshot is built first, in this thread."""
    provider.snapshot()

    async def served() -> Any:
        await provider.start()
        try:
            return await work()
        finally:
            await provider.stop()

    return asyncio.run(served())


# -- one pooled session per worker loop -------------------------------------------------------------
def test_calls_on_a_started_loop_share_one_keep_alive_connection(
    api: Upstream, provider: RegistryProvider
) -> None:
    make_tool(name="pooled", http_url=f"{api.url}/echo/pooled")

    async def work() -> list[dict[str, Any]]:
        assert provider.upstream.pooled() is not None
        return [await call(provider, "pooled", {"n": n}) for n in range(5)]

    results = run_served(provider, work)
    assert [r["structuredContent"]["body"] for r in results] == [{"n": n} for n in range(5)]
    assert len({r.peer_port for r in api.requests}) == 1  # one connection, kept alive


def test_a_loop_no_runtime_started_uses_a_one_shot_session_and_keeps_nothing(
    api: Upstream, provider: RegistryProvider
) -> None:
    make_tool(name="one_shot", http_url=f"{api.url}/echo/one")
    provider.snapshot()

    async def work() -> dict[str, Any]:
        result = await call(provider, "one_shot", {})
        assert provider.upstream.pooled() is None
        return result

    assert asyncio.run(work())["structuredContent"]["method"] == "POST"


def test_stopping_the_runtime_closes_its_loop_session(api: Upstream, provider: RegistryProvider) -> None:
    make_tool(name="closing", http_url=f"{api.url}/echo/closing")

    async def work() -> Any:
        await call(provider, "closing", {})
        return provider.upstream.pooled()

    session = run_served(provider, work)
    assert session is not None and session.closed
