"""Resources, prompts and completion (server/resources.mdx, server/prompts.mdx, utilities/completion.mdx)."""

from __future__ import annotations

import pytest

from mcp_protocol.definitions import Completion
from mcp_protocol.memory_provider import MemoryProvider

from .conftest import call, initialized, make_server


async def test_resources_list_templates_list_and_read(server):
    session = await initialized(server)
    resources = (await call(server, session, "resources/list"))["result"]["resources"]
    assert resources[0]["uri"] == "demo://readme" and resources[0]["mimeType"] == "text/plain"
    templates = (await call(server, session, "resources/templates/list"))["result"]["resourceTemplates"]
    assert templates[0]["uriTemplate"] == "demo://greeting/{name}"
    read = (await call(server, session, "resources/read", {"uri": "demo://greeting/Ada"}))["result"]
    assert read == {
        "contents": [{"uri": "demo://greeting/Ada", "mimeType": "text/plain", "text": "Hello, Ada!"}]
    }


async def test_reading_an_unknown_resource_is_32002_in_legacy_sessions(server):
    session = await initialized(server)
    response = await call(server, session, "resources/read", {"uri": "demo://missing"})
    assert response["error"]["code"] == -32002
    assert response["error"]["data"] == {"uri": "demo://missing"}


async def test_a_uri_without_scheme_is_invalid_params(server):
    session = await initialized(server)
    assert (await call(server, session, "resources/read", {"uri": "no scheme"}))["error"]["code"] == -32602
    assert (await call(server, session, "resources/read", {}))["error"]["code"] == -32602


async def test_subscribe_and_unsubscribe_update_the_session(server):
    session = await initialized(server)
    session.dirty = False
    assert (await call(server, session, "resources/subscribe", {"uri": "demo://readme"}))["result"] == {}
    assert session.subscriptions == {"demo://readme"} and session.dirty
    assert (await call(server, session, "resources/unsubscribe", {"uri": "demo://readme"}))["result"] == {}
    assert session.subscriptions == set()


async def test_prompts_list_and_get(server):
    session = await initialized(server)
    prompts = (await call(server, session, "prompts/list"))["result"]["prompts"]
    assert prompts[0]["name"] == "greet"
    assert prompts[0]["arguments"][0] == {
        "name": "name",
        "description": "Who to greet",
        "required": True,
        "title": "Name",
    }
    result = (await call(server, session, "prompts/get", {"name": "greet", "arguments": {"name": "Ada"}}))[
        "result"
    ]
    assert result["messages"][0]["content"]["text"] == "Write a friendly greeting for Ada."


async def test_prompt_errors_are_invalid_params(server):
    session = await initialized(server)
    unknown = await call(server, session, "prompts/get", {"name": "nope"})
    assert unknown["error"]["code"] == -32602
    missing = await call(server, session, "prompts/get", {"name": "greet", "arguments": {}})
    assert missing["error"]["code"] == -32602 and missing["error"]["data"] == {"missing": ["name"]}
    not_string = await call(server, session, "prompts/get", {"name": "greet", "arguments": {"name": 3}})
    assert not_string["error"]["code"] == -32602


async def test_completion_for_prompt_arguments_and_template_variables(server):
    session = await initialized(server)
    params = {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": "Al"}}
    result = (await call(server, session, "completion/complete", params))["result"]
    assert result == {"completion": {"values": ["Alice", "Alan"], "total": 2, "hasMore": False}}
    params = {
        "ref": {"type": "ref/resource", "uri": "demo://greeting/{name}"},
        "argument": {"name": "name", "value": "B"},
    }
    assert (await call(server, session, "completion/complete", params))["result"]["completion"]["values"] == [
        "Bob"
    ]


async def test_completion_errors_are_invalid_params(server):
    session = await initialized(server)
    for params in [
        {"ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "x", "value": ""}},
        {"ref": {"type": "ref/other"}, "argument": {"name": "x", "value": ""}},
        {"ref": {"type": "ref/prompt", "name": "greet"}},
    ]:
        assert (await call(server, session, "completion/complete", params))["error"]["code"] == -32602


async def test_completion_is_capped_at_100_values():
    class Many(MemoryProvider):
        async def complete(self, ref, argument_name, value, context_arguments):
            return Completion(values=tuple(str(i) for i in range(250)))

    server = make_server(Many())
    session = await initialized(server)
    params = {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": ""}}
    completion = (await call(server, session, "completion/complete", params))["result"]["completion"]
    assert len(completion["values"]) == 100 and completion["hasMore"] is True and completion["total"] == 250


async def test_completion_context_arguments_reach_the_provider_from_2025_06_18():
    seen = []

    class Recording(MemoryProvider):
        async def complete(self, ref, argument_name, value, context_arguments):
            seen.append(dict(context_arguments))
            return Completion()

    server = make_server(Recording())
    params = {
        "ref": {"type": "ref/prompt", "name": "greet"},
        "argument": {"name": "style", "value": ""},
        "context": {"arguments": {"name": "Ada"}},
    }
    for version in ("2025-03-26", "2025-06-18"):
        session = await initialized(server, version)
        assert "result" in await call(server, session, "completion/complete", params)
    assert seen == [{}, {"name": "Ada"}]


@pytest.mark.parametrize(
    ("uri", "why"),
    [
        ("demo://read me", "' ' must be percent-encoded"),
        ("demo://readme\n", "'\\n' must be percent-encoded"),
        ("demo://caf\u00e9", "'\u00e9' must be percent-encoded"),
        ("readme", "no scheme"),
        ("1demo://readme", "no scheme"),
        ("://readme", "no scheme"),
        ("", "empty"),
        ("demo://a%zz", "not an RFC 3986 URI"),
        ("demo://a#b#c", "not an RFC 3986 URI"),
        ("demo://greeting/{name}", "not an RFC 3986 URI"),
        ("http://example.com:80a/", "not an RFC 3986 URI"),
    ],
)
@pytest.mark.parametrize("method", ["resources/read", "resources/subscribe", "resources/unsubscribe"])
async def test_a_uri_that_is_not_rfc_3986_is_invalid_params_with_the_reason(server, uri, why, method):
    # server/resources.mdx: servers MUST validate all resource URIs (RFC 3986).
    session = await initialized(server)
    error = (await call(server, session, method, {"uri": uri}))["error"]
    assert error["code"] == -32602 and error["data"] == {"uri": uri}
    assert error["message"].startswith(f"Invalid resource URI {uri!r}: ") and why in error["message"]
    assert session.subscriptions == set()


@pytest.mark.parametrize(
    "uri",
    [
        "demo://greeting/Ada%20L",
        "file:///home/ada/notes.txt",
        "https://user@example.com:8443/a/b?q=1&r=%2F#frag",
        "urn:isbn:0451450523",
        "http://[::1]:8080/x",
        "data:text/plain;base64,SGVsbG8=",
    ],
)
async def test_rfc_3986_uris_of_any_shape_are_accepted(server, uri):
    session = await initialized(server)
    assert (await call(server, session, "resources/subscribe", {"uri": uri}))["result"] == {}


@pytest.mark.parametrize(("version", "kept"), [("2025-03-26", False), ("2025-06-18", True)])
async def test_meta_on_resource_contents_is_sent_from_2025_06_18(version, kept):
    from mcp_protocol.definitions import Resource

    async def read(uri, variables, ctx):
        return [{"uri": uri, "text": "x", "_meta": {"k": 1}}]

    server = make_server(MemoryProvider(resources=[(Resource("demo://m", "m"), read)]))
    session = await initialized(server, version)
    contents = (await call(server, session, "resources/read", {"uri": "demo://m"}))["result"]["contents"]
    assert ("_meta" in contents[0]) is kept
