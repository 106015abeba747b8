"""Safe templating, RFC 6570 matching and the handler allow-list."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_protocol.uri_template import parse_template
from registry import handlers
from registry.validation.templating import placeholders, render_json, render_text


def test_text_rendering_substitutes_argument_values_only() -> None:
    values = {"name": "Ann", "n": 2, "flag": True, "items": ["a"], "none": None}
    assert (
        render_text("{{name}} {{ n }} {{flag}} {{ items }} [{{ none }}] [{{ missing }}]", values)
        == 'Ann 2 true ["a"] [] []'
    )
    assert render_text("{{ name|json }} {{ n | json }}", values) == '"Ann" 2'
    assert (
        render_text("{{ name.upper }} {{ name.__class__ }} {% if x %} {{ }}", values) == "  {% if x %} {{ }}"
    )


def test_json_escape_puts_any_value_safely_inside_a_json_string() -> None:
    template = '{"id":{{ id|json }},"data":"Data for ID: {{ id|json_escape }}"}'
    for value in ['say "hi"\\', "line\nbreak", "ünï", "123"]:
        assert json.loads(render_text(template, {"id": value})) == {
            "id": value,
            "data": f"Data for ID: {value}",
        }
    assert render_text("{{ n|json_escape }}", {"n": [1, "a"]}) == '[1, \\"a\\"]'
    assert placeholders("{{ a|json_escape }} {{ b|json }}") == {"a", "b"}


def test_rendering_never_re_renders_inserted_values() -> None:
    assert render_text("{{ a }}", {"a": "{{ b }}", "b": "secret"}) == "{{ b }}"


def test_json_rendering_keeps_types_of_whole_placeholders() -> None:
    template = {"n": "{{ n }}", "s": "n={{ n }}", "list": ["{{ flag }}", 1], "key {{ n }}": "x"}
    assert render_json(template, {"n": 3, "flag": False}) == {
        "n": 3,
        "s": "n=3",
        "list": [False, 1],
        "key {{ n }}": "x",
    }
    assert placeholders(template) == {"n", "flag"}


@pytest.mark.parametrize(
    ("template", "uri", "expected"),
    [
        ("test://template/{id}/data", "test://template/123/data", {"id": "123"}),
        ("test://template/{id}/data", "test://template/1/2/data", None),
        ("x://u/{name}", "x://u/Ada%20L", {"name": "Ada L"}),
        ("file:///{+path}", "file:///a/b/c.txt", {"path": "a/b/c.txt"}),
        ("x://a{/seg*}", "x://a/b/c", {"seg": "b/c"}),
        ("x://s{?q,lang}", "x://s?q=a%20b&lang=en", {"q": "a b", "lang": "en"}),
        ("x://s{?q,lang}", "x://s", {}),
        ("x://f{.fmt}{;v}", "x://f.json;v=2", {"fmt": "json", "v": "2"}),
        ("x://{a,b}", "x://1,2", {"a": "1", "b": "2"}),
        ("x://doc{#frag}", "x://doc#top", {"frag": "top"}),
        # RFC 6570 §2.4.1 prefix: at most N characters of the value, counted before encoding.
        ("x://{var:3}", "x://abc", {"var": "abc"}),
        ("x://{var:3}", "x://ab", {"var": "ab"}),
        ("x://{var:3}", "x://abcd", None),
        ("x://{var:3}", "x://%C3%A9t%C3%A9", {"var": "été"}),
        ("x://s{?q:2}", "x://s?q=abc", None),
        ("x://{id:2}/{id}", "x://ab/abcdef", {"id": "abcdef"}),
        ("x://{id:2}/{id}", "x://zz/abcdef", None),
        ("x://{b}/{a}/{b}", "x://1/2/3", None),
    ],
)
def test_uri_template_matching_extracts_the_variables(template: str, uri: str, expected: Any) -> None:
    assert parse_template(template).match(uri) == expected


def test_uri_template_lists_variables_once_in_order() -> None:
    assert parse_template("x://{b}/{a}/{b}{?c}").variables == ("b", "a", "c")


def test_handler_names_are_an_allow_list_filled_by_autodiscovery() -> None:
    assert "demo.echo" in handlers.names("tool")  # registry/mcp_handlers.py, found at startup
    assert "conformance.progress" in handlers.names("tool")
    assert "demo.user_profile" in handlers.names("resource")
    with pytest.raises(handlers.HandlerNotRegistered):
        handlers.get("tool", "os.system")


def test_a_handler_name_cannot_be_taken_twice() -> None:
    @handlers.tool_handler("test.once")
    def first(arguments: dict[str, Any], ctx: Any) -> str:
        return "1"

    try:
        with pytest.raises(ValueError, match="already registered"):

            @handlers.tool_handler("test.once")
            def second(arguments: dict[str, Any], ctx: Any) -> str:
                return "2"
    finally:
        handlers.unregister("tool", "test.once")
