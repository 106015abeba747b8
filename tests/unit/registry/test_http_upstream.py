"""The ``http`` tool kind against a real API on loopback (``tests/support/upstream.py``): the
worker's pooled session, requests of every shape, signatures the upstream verifies, retries the
upstream counts, deadlines, the concurrency cap and the private-range guard (issue 29)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import override_settings

from mcp_protocol.methods.tools import execute_tool
from mcp_protocol.versions import LATEST
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
    # Through the core's execute_tool, as tools/call runs it: a ToolError becomes its result there.
    return await execute_tool(provider, tool, arguments, make_context(**ctx), LATEST)


def run_served(provider: RegistryProvider, work: Any) -> Any:
    """``work(provider)`` on one loop whose runtime started the provider (its pooled session) and
    stops it at the end, as a worker's lifespan does. The snapshot is built first, in this thread."""
    provider.snapshot()

    async def served() -> Any:
        await provider.start(None)
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


# -- requests an API can take -----------------------------------------------------------------------
PET_SCHEMA = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "limit": {"type": "integer"},
        "tags": {"type": "array"},
        "name": {"type": "string"},
        "age": {"type": "integer"},
    },
}


@pytest.mark.parametrize("method", ["GET", "POST", "PUT", "PATCH", "DELETE"])
def test_each_method_reaches_the_upstream_with_its_url_and_body(
    api: Upstream, provider: RegistryProvider, method: str
) -> None:
    make_tool(
        name=f"pet_{method.lower()}",
        http_method=method,
        input_schema=PET_SCHEMA,
        http_url=f"{api.url}/echo/pets/{{id}}{{?limit}}",
    )
    arguments = {"id": "7", "limit": 2, "name": "Rex", "age": 3}
    result = run_served(provider, lambda: call(provider, f"pet_{method.lower()}", arguments))
    assert "isError" not in result, result
    sent = api.requests[-1]
    assert (sent.method, sent.path, sent.query) == (method, "/echo/pets/7", {"limit": "2"})
    if method in ("GET", "DELETE"):
        assert sent.body == b"" and "Content-Type" not in sent.headers
    else:  # the arguments the URL did not use
        assert sent.json() == {"name": "Rex", "age": 3}
        assert sent.headers["Content-Type"] == "application/json"


def test_url_template_values_are_percent_encoded_and_lists_explode(
    api: Upstream, provider: RegistryProvider
) -> None:
    make_tool(
        name="search",
        http_method="GET",
        input_schema=PET_SCHEMA,
        http_url=f"{api.url}/echo/pets/{{id}}{{?tags*}}",
    )
    run_served(provider, lambda: call(provider, "search", {"id": "a b/c", "tags": ["x", "y&z"]}))
    assert api.requests[-1].raw_path == "/echo/pets/a%20b%2Fc?tags=x&tags=y%26z"


def test_a_body_template_static_headers_and_a_result_pointer(
    api: Upstream, provider: RegistryProvider
) -> None:
    make_tool(
        name="create_pet",
        http_method="POST",
        input_schema=PET_SCHEMA,
        http_url=f"{api.url}/echo/pets",
        http_headers={"Accept-Language": "fr", "X-Team": "core"},
        http_body_template={"pet": {"name": "{{ name }}", "age": "{{ age }}"}, "note": "by {{ name }}"},
        http_result_pointer="/body/pet",
    )
    result = run_served(provider, lambda: call(provider, "create_pet", {"name": "Rex", "age": 3}))
    assert result["structuredContent"] == {"name": "Rex", "age": 3}
    sent = api.requests[-1]
    assert sent.json() == {"pet": {"name": "Rex", "age": 3}, "note": "by Rex"}
    assert sent.headers["Accept-Language"] == "fr" and sent.headers["X-Team"] == "core"
    assert sent.headers["X-MCP-Tool"] == "create_pet"


def test_a_non_object_result_is_wrapped_when_the_tool_declares_an_output_schema(
    api: Upstream, provider: RegistryProvider
) -> None:
    make_tool(
        name="tags_of",
        http_method="GET",
        http_url=f"{api.url}/echo/tags",
        http_result_pointer="/path",
        output_schema={"type": "object", "properties": {"result": {"type": "string"}}},
    )
    make_tool(
        name="tags_text", http_method="GET", http_url=f"{api.url}/echo/tags", http_result_pointer="/path"
    )
    wrapped = run_served(provider, lambda: call(provider, "tags_of", {}))
    assert wrapped["structuredContent"] == {"result": "/echo/tags"}
    plain = run_served(provider, lambda: call(provider, "tags_text", {}))
    assert "structuredContent" not in plain and plain["content"][0]["text"] == '"/echo/tags"'


def test_an_upstream_error_is_a_tool_error_with_the_upstreams_message(
    api: Upstream, provider: RegistryProvider
) -> None:
    make_tool(name="missing", http_method="GET", http_url=f"{api.url}/status/404")
    result = run_served(provider, lambda: call(provider, "missing", {}))
    assert result["isError"] is True
    assert result["content"][0]["text"] == "Tool 'missing': 127.0.0.1 answered HTTP 404: upstream says 404"


def test_existing_rows_keep_posting_every_argument(api: Upstream, provider: RegistryProvider) -> None:
    row = make_tool(name="legacy", http_url=f"{api.url}/echo/legacy")
    assert (row.http_method, row.http_body_template, row.http_result_pointer) == ("POST", None, "")
    result = run_served(provider, lambda: call(provider, "legacy", {"q": "weather", "n": 2}))
    assert api.requests[-1].json() == {"q": "weather", "n": 2}
    assert result["structuredContent"]["body"] == {"q": "weather", "n": 2}


@pytest.mark.parametrize(
    ("fields", "field", "words"),
    [
        ({"http_url": "https://api.example.com{+path}"}, "http_url", "host is literal"),
        ({"http_url": "https://{host}/x"}, "http_url", "absolute http"),
        ({"http_url": "https://api.example.com/pets/{nope}"}, "http_url", "nope"),
        (
            {"http_url": "https://api.example.com/x", "http_method": "GET", "http_body_template": {"a": 1}},
            "http_body_template",
            "GET request has no body",
        ),
        (
            {"http_url": "https://api.example.com/x", "http_headers": {"Content-Length": "1"}},
            "http_headers",
            "set by the server",
        ),
        (
            {"http_url": "https://api.example.com/x", "http_headers": {"X-A": "a\r\nB: b"}},
            "http_headers",
            "line breaks",
        ),
        (
            {"http_url": "https://api.example.com/x", "http_result_pointer": "data"},
            "http_result_pointer",
            "JSON Pointer",
        ),
    ],
)
def test_an_http_tool_that_cannot_work_is_refused_at_save(
    fields: dict[str, Any], field: str, words: str
) -> None:
    from django.core.exceptions import ValidationError

    row = Tool(name="bad", description="d", kind="http", input_schema=PET_SCHEMA, **fields)
    with pytest.raises(ValidationError) as caught:
        row.full_clean()
    assert field in caught.value.message_dict
    assert words in " ".join(caught.value.message_dict[field])


def test_export_and_import_carry_the_request_fields(api: Upstream) -> None:
    from registry.transfer.documents import export_document, import_document

    make_tool(
        name="carried",
        http_method="PATCH",
        input_schema=PET_SCHEMA,
        http_url=f"{api.url}/echo/{{id}}",
        http_headers={"X-A": "1"},
        http_body_template={"n": "{{ name }}"},
        http_result_pointer="/body",
    )
    exported = next(t for t in export_document()["tools"] if t["name"] == "carried")
    assert (exported["http_method"], exported["http_headers"], exported["http_result_pointer"]) == (
        "PATCH",
        {"X-A": "1"},
        "/body",
    )
    Tool.objects.filter(name="carried").delete()
    import_document({"tools": [exported]}, mode="merge")
    row = Tool.objects.get(name="carried")
    assert (row.http_method, row.http_body_template) == ("PATCH", {"n": "{{ name }}"})


# -- signed calls, forwarded context ----------------------------------------------------------------
def context_of(principal: str | None = None, meta: dict[str, Any] | None = None) -> Any:
    from mcp_protocol.context import Context
    from mcp_protocol.session import Session

    from .conftest import RecordingOutbound

    session = Session(id="s", protocol_version="2025-11-25", state="ready", client_capabilities={})
    return Context(session=session, outbound=RecordingOutbound(), principal=principal, meta=meta)


@pytest.mark.parametrize("method", ["POST", "GET"])
def test_a_signed_call_is_verified_by_the_upstream(
    api: Upstream, provider: RegistryProvider, monkeypatch: pytest.MonkeyPatch, method: str
) -> None:
    monkeypatch.setenv("MCP_TOOL_SECRET_SIGNING", "shared-secret")
    make_tool(
        name="signed",
        http_method=method,
        http_url=f"{api.url}/signed",
        http_signing_secret_env="MCP_TOOL_SECRET_SIGNING",
        input_schema={"type": "object", "properties": {"n": {"type": "integer"}}},
    )
    result = run_served(provider, lambda: call(provider, "signed", {"n": 1}))
    assert result["structuredContent"] == {"verified": True}
    sent = api.requests[-1]
    assert sent.headers["X-MCP-Signature"].startswith("v2=") and sent.headers["X-MCP-Timestamp"].isdigit()
    assert "shared-secret" not in str(sent.headers)


@pytest.mark.parametrize("scheme", ["v1", "v2"])
def test_a_v2_signature_replayed_to_another_url_or_method_fails_where_v1_passed(
    api: Upstream, provider: RegistryProvider, monkeypatch: pytest.MonkeyPatch, scheme: str
) -> None:
    # Issue 37 item 7: v1 covers the time and the body only; v2 binds the method and the URL too.
    import urllib.request

    monkeypatch.setenv("MCP_TOOL_SECRET_SIGNING", "shared-secret")
    make_tool(name="signed_get", http_method="GET", http_url=f"{api.url}/signed/accounts/{{id}}",
              http_signing_secret_env="MCP_TOOL_SECRET_SIGNING", http_signing_scheme=scheme,
              input_schema={"type": "object", "properties": {"id": {"type": "string"}}})
    result = run_served(provider, lambda: call(provider, "signed_get", {"id": "7"}))
    assert result["structuredContent"] == {"verified": True}
    captured = api.requests[-1].headers
    assert captured["X-MCP-Signature"].startswith(f"{scheme}=")

    def replay(method: str, path: str) -> bool:
        headers = {k: captured[k] for k in ("X-MCP-Timestamp", "X-MCP-Signature")}
        request = urllib.request.Request(f"{api.url}{path}", headers=headers, method=method)
        with urllib.request.urlopen(request, timeout=10) as answer:
            return bool(__import__("json").load(answer)["verified"])

    assert replay("GET", "/signed/accounts/7") is True  # the same request: the time window's job
    assert replay("GET", "/signed/accounts/8") is (scheme == "v1")
    assert replay("DELETE", "/signed/accounts/7") is (scheme == "v1")


def test_a_call_signed_with_another_secret_fails_the_upstreams_check(
    api: Upstream, provider: RegistryProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_TOOL_SECRET_SIGNING", "not-the-shared-one")
    make_tool(name="forged", http_url=f"{api.url}/signed", http_signing_secret_env="MCP_TOOL_SECRET_SIGNING")
    assert run_served(provider, lambda: call(provider, "forged", {}))["structuredContent"] == {
        "verified": False
    }


def test_a_signing_secret_unset_or_not_allowed_sends_nothing(
    api: Upstream, provider: RegistryProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    from django.core.exceptions import ValidationError

    monkeypatch.delenv("MCP_TOOL_SECRET_SIGNING", raising=False)
    make_tool(
        name="unsigned", http_url=f"{api.url}/signed", http_signing_secret_env="MCP_TOOL_SECRET_SIGNING"
    )
    result = run_served(provider, lambda: call(provider, "unsigned", {}))
    assert result["isError"] and "MCP_TOOL_SECRET_SIGNING" in result["content"][0]["text"]
    assert api.requests == []
    with pytest.raises(ValidationError) as caught:
        Tool(
            name="leaky", kind="http", http_url=f"{api.url}/signed", http_signing_secret_env="SECRET_KEY"
        ).full_clean()
    assert "http_signing_secret_env" in caught.value.message_dict


def test_principal_and_trace_context_are_forwarded_only_when_the_tool_says_so(
    api: Upstream, provider: RegistryProvider
) -> None:
    parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    make_tool(
        name="forwarding",
        http_url=f"{api.url}/echo/fwd",
        http_forward_principal=True,
        http_forward_trace=True,
    )
    make_tool(name="quiet", http_url=f"{api.url}/echo/quiet")
    meta = {"traceparent": parent, "tracestate": "vendor=abc", "progressToken": 1}

    async def work() -> None:
        for name in ("forwarding", "quiet"):
            tool = provider.snapshot().tool(name)
            assert tool is not None
            await provider.call_tool(tool, {}, context_of("key:ops", meta))
        tool = provider.snapshot().tool("forwarding")
        assert tool is not None
        await provider.call_tool(tool, {}, context_of("key:ops", {"traceparent": "00-" + "0" * 32 + "-1-01"}))

    run_served(provider, work)
    forwarded, quiet, malformed = (r.headers for r in api.requests)
    assert forwarded["X-MCP-Principal"] == "key:ops"
    assert (forwarded["traceparent"], forwarded["tracestate"]) == (parent, "vendor=abc")
    assert not {"X-MCP-Principal", "traceparent", "Authorization"} & set(quiet)
    assert "traceparent" not in malformed and malformed["X-MCP-Principal"] == "key:ops"


# -- retries, deadline, concurrency cap, private addresses --------------------------------------------
@pytest.fixture
def quick_retries() -> Iterator[None]:
    with override_settings(REGISTRY_HTTP_RETRIES=2, REGISTRY_HTTP_RETRY_BACKOFF=0.01):
        yield


@pytest.mark.usefixtures("quick_retries")
@pytest.mark.parametrize(
    ("method", "annotations", "key"), [("GET", None, "get"), ("POST", {"idempotentHint": True}, "hinted")]
)
def test_an_idempotent_tool_retries_503_and_the_upstream_counts_the_attempts(
    api: Upstream, provider: RegistryProvider, method: str, annotations: Any, key: str
) -> None:
    make_tool(
        name=f"retry_{key}", http_method=method, annotations=annotations, http_url=f"{api.url}/flaky/{key}/2"
    )
    result = run_served(provider, lambda: call(provider, f"retry_{key}", {}))
    assert result["structuredContent"] == {"attempts": 3}
    assert api.attempts(key) == 3


@pytest.mark.usefixtures("quick_retries")
def test_a_non_idempotent_tool_is_never_retried(api: Upstream, provider: RegistryProvider) -> None:
    make_tool(name="once", http_method="POST", http_url=f"{api.url}/flaky/once/1")
    result = run_served(provider, lambda: call(provider, "once", {}))
    assert result["isError"] and "HTTP 503" in result["content"][0]["text"]
    assert api.attempts("once") == 1


@pytest.mark.usefixtures("quick_retries")
@pytest.mark.usefixtures("quick_retries")
def test_a_dropped_connection_is_retried_only_for_an_idempotent_tool(
    api: Upstream, provider: RegistryProvider
) -> None:
    make_tool(name="get_dropped", http_method="GET", http_url=f"{api.url}/drop/get_dropped/1")
    make_tool(name="post_dropped", http_method="POST", http_url=f"{api.url}/drop/post_dropped/1")

    async def work() -> list[dict[str, Any]]:
        return [await call(provider, "get_dropped", {}), await call(provider, "post_dropped", {})]

    retried, not_retried = run_served(provider, work)
    assert retried["structuredContent"] == {"attempts": 2} and api.attempts("get_dropped") == 2
    assert not_retried["isError"] and "ServerDisconnectedError" in not_retried["content"][0]["text"]
    assert api.attempts("post_dropped") == 1


def test_retries_stop_after_the_configured_number_with_the_last_error(
    api: Upstream, provider: RegistryProvider
) -> None:
    make_tool(name="gives_up", http_method="GET", http_url=f"{api.url}/flaky/gives_up/9")
    result = run_served(provider, lambda: call(provider, "gives_up", {}))
    assert result["isError"] and "HTTP 503" in result["content"][0]["text"]
    assert api.attempts("gives_up") == 3


@pytest.mark.usefixtures("quick_retries")
def test_retry_after_is_waited_for_and_a_long_one_ends_the_retries(
    api: Upstream, provider: RegistryProvider
) -> None:
    import time

    make_tool(name="soon", http_method="GET", http_url=f"{api.url}/flaky/soon/1?retry_after=1")
    make_tool(name="later", http_method="GET", http_url=f"{api.url}/flaky/later/1?retry_after=60")
    started = time.monotonic()
    soon = run_served(provider, lambda: call(provider, "soon", {}))
    waited = time.monotonic() - started
    later = run_served(provider, lambda: call(provider, "later", {}))
    assert soon["structuredContent"] == {"attempts": 2} and waited >= 1.0
    assert later["isError"] and api.attempts("later") == 1  # 60 s is "not soon": no retry


def test_the_deadline_ends_a_call_to_a_slow_upstream(api: Upstream, provider: RegistryProvider) -> None:
    import time

    make_tool(name="slow", http_method="GET", http_url=f"{api.url}/slow", http_timeout=0.3)
    started = time.monotonic()
    result = run_served(provider, lambda: call(provider, "slow", {}))
    assert result["isError"] and "did not answer within 0.3 s" in result["content"][0]["text"]
    assert time.monotonic() - started < 3  # the upstream would answer after 10 s (and retries stay inside)


def test_the_concurrency_cap_bounds_calls_in_flight_at_the_upstream(
    api: Upstream, provider: RegistryProvider
) -> None:
    make_tool(name="capped", http_url=f"{api.url}/hold/capped", http_max_concurrency=2)
    make_tool(name="uncapped", http_url=f"{api.url}/hold/uncapped")

    async def work() -> list[dict[str, Any]]:
        calls = [call(provider, name, {}) for name in ("capped", "uncapped") for _ in range(6)]
        return list(await asyncio.gather(*calls))

    results = run_served(provider, work)
    assert all(r["structuredContent"] == {"held": True} for r in results)
    assert api.peak("capped") == 2
    assert api.peak("uncapped") == 6


def test_private_addresses_are_refused_when_the_setting_forbids_them(
    api: Upstream, provider: RegistryProvider
) -> None:
    port = api.url.rsplit(":", 1)[1]
    with override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1", "localhost"]):
        make_tool(name="by_name", http_url=f"http://localhost:{port}/echo/name")
        make_tool(name="by_address", http_url=f"{api.url}/echo/address")
    with override_settings(
        REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1", "localhost"], REGISTRY_HTTP_FORBID_PRIVATE=True
    ):

        async def work() -> list[dict[str, Any]]:
            return [await call(provider, "by_name", {}), await call(provider, "by_address", {})]

        by_name, by_address = run_served(provider, work)
    assert by_name["isError"] and "resolves only to private addresses" in by_name["content"][0]["text"]
    assert by_address["isError"] and "127.0.0.1: it is a private address" in by_address["content"][0]["text"]
    assert api.requests == []
    with override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["localhost"]):  # the guard off: allowed again
        assert "isError" not in run_served(provider, lambda: call(provider, "by_name", {}))


def test_a_bad_pool_or_retry_setting_is_a_system_check_error() -> None:
    from django.core.checks import run_checks

    with override_settings(REGISTRY_HTTP_RETRIES=-1, REGISTRY_HTTP_MAX_CONNECTIONS="many"):
        errors = [e for e in run_checks() if e.id == "registry.E003"]
    assert sorted(e.msg for e in errors) == [
        "REGISTRY_HTTP_MAX_CONNECTIONS must be an integer, not 'many'",
        "REGISTRY_HTTP_RETRIES must be between 0 and 10, not -1",
    ]
    assert not [e for e in run_checks() if e.id == "registry.E003"]


def test_with_a_result_pointer_a_content_list_is_data_not_a_call_tool_result(
    api: Upstream, provider: RegistryProvider
) -> None:
    make_tool(
        name="cms",
        http_url=f"{api.url}/echo/cms",
        http_result_pointer="/body",
        input_schema={"type": "object", "properties": {"content": {"type": "array"}}},
    )
    result = run_served(provider, lambda: call(provider, "cms", {"content": [{"type": "text", "text": "x"}]}))
    assert result["structuredContent"] == {"content": [{"type": "text", "text": "x"}]}


# -- the expanded URL stays where the template points (issue 37 item 4) -----------------------------
@pytest.mark.parametrize("value", ["..", ".", "%2e%2e", "%2E.", "..%2F..%2Fstatus", "%252e%252e"])
def test_a_dot_segment_in_a_simple_expansion_is_refused_and_nothing_is_sent(
    api: Upstream, provider: RegistryProvider, value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_TOOL_SECRET_KEY", "s3cret")  # what the escape would carry elsewhere
    make_tool(name="profile", http_method="GET",
              http_secret_header="X-Api-Key", http_secret_env="MCP_TOOL_SECRET_KEY",
              input_schema={"type": "object", "properties": {"id": {"type": "string"}}},
              http_url=f"{api.url}/echo/users/{{id}}/profile")
    result = run_served(provider, lambda: call(provider, "profile", {"id": value}))
    assert result.get("isError") and "dot segment" in result["content"][0]["text"], result
    assert api.requests == []


@pytest.mark.parametrize("path", ["../../signed", "a/../../status/200", "a/%2e%2e/%2E%2E/signed", "./x"])
def test_a_dot_segment_in_a_reserved_expansion_is_refused_and_nothing_is_sent(
    api: Upstream, provider: RegistryProvider, path: str
) -> None:
    make_tool(name="files", http_method="GET",
              input_schema={"type": "object", "properties": {"path": {"type": "string"}}},
              http_url=f"{api.url}/echo/files/{{+path}}")
    result = run_served(provider, lambda: call(provider, "files", {"path": path}))
    assert result.get("isError") and "dot segment" in result["content"][0]["text"], result
    assert api.requests == []


def test_an_argument_after_a_bare_host_cannot_change_the_host() -> None:
    # Validation refuses such a template ("the host is literal text"); a row written around it
    # (an older row, a raw write) is still stopped at call time.
    from registry.kinds.http_client.url_guard import escape

    assert "changes the URL's host" in str(escape("https://api.example.com{+p}", "https://api.example.com@evil.example/x"))
    assert escape("https://api.example.com{+p}", "https://api.example.com/x") is None
    assert escape("https://api.example.com/v1/{p}", "https://api.example.com/v1/x") is None


def test_dots_inside_segments_pass_and_the_url_is_sent_as_encoded(
    api: Upstream, provider: RegistryProvider
) -> None:
    make_tool(name="files2", http_method="GET",
              input_schema={"type": "object", "properties": {"path": {"type": "string"}}},
              http_url=f"{api.url}/echo/files/{{+path}}")
    for path in ("v1.2/a..b/...", "a%2Fb/c%20d"):
        result = run_served(provider, lambda path=path: call(provider, "files2", {"path": path}))
        assert "isError" not in result, result
        assert api.requests[-1].raw_path == f"/echo/files/{path}"
