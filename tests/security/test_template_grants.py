"""Issue 24 item 2: a key scoped to one resource template cannot read another template's resources.

One RFC 6570 matcher (``mcp_protocol/uri_template/``) serves the grant check, ``resources/read``,
completion and both providers; a read is granted for the template that serves it, and overlapping
templates resolve by the documented rule (most literal characters, fewest variables, template
text), never by name. Shown here:

- the RFC 6570 examples (§1.2 and §3.2, Levels 1-4) expand as the RFC says, and every expansion
  matches its template again, scalar values coming back exact;
- hypothesis: for random templates and values, ``match(expand(values))`` re-expands to the URI;
- hypothesis: on random template sets, grants and URIs, ``granted_uri`` says yes exactly when the
  template that serves the read is granted;
- the attack of the issue on a real server with ``MCP_AUTH=keys``: templates
  ``demo://docs{/name}`` and ``demo://docs/internal/{id}``, a key granted only the first cannot read
  ``demo://docs/internal/7`` (and can read ``demo://docs/readme``).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_protocol.auth.principal import Grant
from mcp_protocol.auth.scopes import granted_uri, view
from mcp_protocol.definitions import ResourceTemplate
from mcp_protocol.errors import ResourceNotFound
from mcp_protocol.memory_provider import MemoryProvider
from mcp_protocol.uri_template import MAX_URI_LENGTH, parse_template, serving_template
from mcp_protocol.uri_template.matching import Solver
from mcp_protocol.uri_template.template import compiled_program
from tests.support import REGISTRY_PROVIDER, LiveServer, live_server_fixture
from tests.support.mcp_http import POST_HEADERS, initialize_message, notification, request, session_headers

pytestmark = pytest.mark.timeout(120)

# -- RFC 6570 examples -----------------------------------------------------------------------------
RFC_VALUES: dict[str, Any] = {
    "count": ["one", "two", "three"], "dom": ["example", "com"], "dub": "me/too",
    "hello": "Hello World!", "half": "50%", "var": "value", "who": "fred",
    "base": "http://example.com/home/", "path": "/foo/bar", "list": ["red", "green", "blue"],
    "keys": {"semi": ";", "dot": ".", "comma": ","}, "v": "6", "x": "1024", "y": "768",
    "empty": "", "empty_keys": {}, "undef": None,
}
RFC_EXAMPLES = [
    # §1.2 Level 1
    ("{var}", "value"), ("{hello}", "Hello%20World%21"),
    # Level 2
    ("{+var}", "value"), ("{+hello}", "Hello%20World!"), ("{+path}/here", "/foo/bar/here"),
    ("here?ref={+path}", "here?ref=/foo/bar"), ("X{#var}", "X#value"), ("X{#hello}", "X#Hello%20World!"),
    # Level 3
    ("map?{x,y}", "map?1024,768"), ("{x,hello,y}", "1024,Hello%20World%21,768"),
    ("{+x,hello,y}", "1024,Hello%20World!,768"), ("{+path,x}/here", "/foo/bar,1024/here"),
    ("{#x,hello,y}", "#1024,Hello%20World!,768"), ("{#path,x}/here", "#/foo/bar,1024/here"),
    ("X{.var}", "X.value"), ("X{.x,y}", "X.1024.768"), ("{/var}", "/value"),
    ("{/var,x}/here", "/value/1024/here"), ("{;x,y}", ";x=1024;y=768"),
    ("{;x,y,empty}", ";x=1024;y=768;empty"), ("{?x,y}", "?x=1024&y=768"),
    ("{?x,y,empty}", "?x=1024&y=768&empty="), ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
    ("{&x,y,empty}", "&x=1024&y=768&empty="),
    # Level 4
    ("{var:3}", "val"), ("{var:30}", "value"), ("{list}", "red,green,blue"),
    ("{list*}", "red,green,blue"), ("{keys}", "semi,%3B,dot,.,comma,%2C"),
    ("{keys*}", "semi=%3B,dot=.,comma=%2C"), ("{+path:6}/here", "/foo/b/here"),
    ("{+list}", "red,green,blue"), ("{+list*}", "red,green,blue"), ("{+keys}", "semi,;,dot,.,comma,,"),
    ("{+keys*}", "semi=;,dot=.,comma=,"), ("{#path:6}/here", "#/foo/b/here"),
    ("{#list}", "#red,green,blue"), ("{#list*}", "#red,green,blue"), ("{#keys}", "#semi,;,dot,.,comma,,"),
    ("{#keys*}", "#semi=;,dot=.,comma=,"), ("X{.var:3}", "X.val"), ("X{.list}", "X.red,green,blue"),
    ("X{.list*}", "X.red.green.blue"), ("X{.keys}", "X.semi,%3B,dot,.,comma,%2C"),
    ("X{.keys*}", "X.semi=%3B.dot=..comma=%2C"), ("{/var:1,var}", "/v/value"),
    ("{/list}", "/red,green,blue"), ("{/list*}", "/red/green/blue"),
    ("{/list*,path:4}", "/red/green/blue/%2Ffoo"), ("{/keys}", "/semi,%3B,dot,.,comma,%2C"),
    ("{/keys*}", "/semi=%3B/dot=./comma=%2C"), ("{;hello:5}", ";hello=Hello"),
    ("{;list}", ";list=red,green,blue"), ("{;list*}", ";list=red;list=green;list=blue"),
    ("{;keys}", ";keys=semi,%3B,dot,.,comma,%2C"), ("{;keys*}", ";semi=%3B;dot=.;comma=%2C"),
    ("{?var:3}", "?var=val"), ("{?list}", "?list=red,green,blue"),
    ("{?list*}", "?list=red&list=green&list=blue"), ("{?keys}", "?keys=semi,%3B,dot,.,comma,%2C"),
    ("{?keys*}", "?semi=%3B&dot=.&comma=%2C"), ("{&var:3}", "&var=val"),
    ("{&list}", "&list=red,green,blue"), ("{&list*}", "&list=red&list=green&list=blue"),
    ("{&keys}", "&keys=semi,%3B,dot,.,comma,%2C"), ("{&keys*}", "&semi=%3B&dot=.&comma=%2C"),
    # §3.2.2-3.2.9, beyond §1.2
    ("{count}", "one,two,three"), ("{count*}", "one,two,three"), ("{/count}", "/one,two,three"),
    ("{/count*}", "/one/two/three"), ("{;count}", ";count=one,two,three"),
    ("{;count*}", ";count=one;count=two;count=three"), ("{?count}", "?count=one,two,three"),
    ("{?count*}", "?count=one&count=two&count=three"), ("{&count*}", "&count=one&count=two&count=three"),
    ("{half}", "50%25"), ("O{empty}X", "OX"), ("O{undef}X", "OX"), ("{x,y}", "1024,768"),
    ("?{x,empty}", "?1024,"), ("?{x,undef}", "?1024"), ("?{undef,y}", "?768"), ("{+half}", "50%25"),
    ("{base}index", "http%3A%2F%2Fexample.com%2Fhome%2Findex"),
    ("{+base}index", "http://example.com/home/index"), ("O{+empty}X", "OX"), ("O{+undef}X", "OX"),
    ("up{+path}{var}/here", "up/foo/barvalue/here"), ("{#var}", "#value"), ("{#half}", "#50%25"),
    ("foo{#empty}", "foo#"), ("foo{#undef}", "foo"), ("{.who}", ".fred"), ("{.who,who}", ".fred.fred"),
    ("{.half,who}", ".50%25.fred"), ("www{.dom*}", "www.example.com"), ("X{.empty}", "X."),
    ("X{.undef}", "X"), ("{/who}", "/fred"), ("{/who,who}", "/fred/fred"),
    ("{/half,who}", "/50%25/fred"), ("{/who,dub}", "/fred/me%2Ftoo"), ("{/var,empty}", "/value/"),
    ("{/var,undef}", "/value"), ("{;who}", ";who=fred"), ("{;half}", ";half=50%25"),
    ("{;empty}", ";empty"), ("{;v,empty,who}", ";v=6;empty;who=fred"), ("{;v,bar,who}", ";v=6;who=fred"),
    ("{;x,y,undef}", ";x=1024;y=768"), ("{?who}", "?who=fred"), ("{?half}", "?half=50%25"),
    ("{?x,y,undef}", "?x=1024&y=768"), ("{&who}", "&who=fred"), ("{&half}", "&half=50%25"),
    ("{.empty_keys}", ""), ("{/empty_keys*}", ""),
]


@pytest.mark.parametrize(("template", "uri"), RFC_EXAMPLES)
def test_the_rfc_6570_examples_expand_and_match_back(template: str, uri: str) -> None:
    parsed = parse_template(template)
    assert parsed.expand(RFC_VALUES) == uri
    found = parsed.match(uri)
    assert found is not None, f"{template} does not match its own expansion {uri}"
    if all(isinstance(RFC_VALUES.get(name), str | None) for name in parsed.variables):
        # Scalar values come back as values whose expansion is the URI (exact when unambiguous).
        assert parsed.expand(found) == uri


def test_a_path_segment_variable_never_spans_a_slash_unless_exploded() -> None:
    assert parse_template("demo://docs{/name}").match("demo://docs/internal/7") is None
    assert parse_template("demo://docs{/name*}").match("demo://docs/internal/7") == {"name": "internal/7"}
    assert parse_template("demo://docs/{name}").match("demo://docs/internal/7") is None
    assert parse_template("demo://x{#frag}").match("demo://x") == {}  # undefined: no "#"
    assert parse_template("demo://x{.fmt}").match("demo://x.tar.gz") == {"fmt": "tar.gz"}
    assert parse_template("demo://x{;v}").match("demo://x;v") == {"v": ""}


@pytest.mark.timeout(10)
@pytest.mark.parametrize("template", ["demo://x/{id}/end", "demo://x/{+id}/end", "demo://x/{+id:900}/end",
                                      "demo://x{/id}/end", "demo://x/{.id}/end", "demo://x/{#id}/end"])
def test_a_uri_of_many_percent_triplets_that_matches_nothing_is_refused_at_once(template: str) -> None:
    # Two ways to read "%41" (a whole character, or a lone triplet / three characters) made a miss
    # cost 2**n backtracking steps for n triplets: a resources/read of 100 bytes held a worker for
    # hours. Each alternative now excludes the others where they start.
    assert parse_template(template).match("demo://x/" + "%41" * 64 + "/nope") is None


# Variables that can share characters: a backtracking matcher tries every way to split the URI
# between them, O(n**k) for k of them on a URI that matches nothing (3 variables and 300
# characters took seconds, 4096 characters would take hours).
SHARING = ["{a}{b}{c}", "t://{a}.{b}.{c}.{d}", "t://{+a}/{+b}/{+c}/end", "t://{.a}{.b}{.c}",
           "t://{/a*}{/b*}{/c*}", "t://{#a,b,c}", "{x,y,z}", "t://{+a,b}{c}", "t://{;a*}{;b*}{;c*}"]


@pytest.mark.timeout(20)
@pytest.mark.parametrize("template", SHARING)
def test_matching_costs_at_most_one_step_per_node_and_position(template: str) -> None:
    """Each (node, position) of the matcher's program is decided once, whatever the template."""
    nodes, _ = compiled_program(template, False)
    filler = {"t://{+a}/{+b}/{+c}/end": "/", "t://{a}.{b}.{c}.{d}": ".", "{x,y,z}": ","}.get(template, "x")
    uri = ("" if template.startswith("{") else "t://") + filler * (MAX_URI_LENGTH - 10) + " "
    solver = Solver(nodes, uri)
    assert solver.captures() is None
    assert len(solver.can) + len(solver.ends) <= 2 * len(nodes) * (len(uri) + 1)
    assert parse_template(template).match(uri) is None


def test_overlapping_templates_resolve_by_literal_characters_not_by_name() -> None:
    templates = ["demo://docs{/name*}", "demo://docs/internal/{id}", "demo://{+any}"]
    assert serving_template(templates, "demo://docs/internal/7") == ("demo://docs/internal/{id}", {"id": "7"})
    assert serving_template(reversed(templates), "demo://docs/a/b") == (
        "demo://docs{/name*}", {"name": "a/b"})
    assert serving_template(templates, "demo://other") == ("demo://{+any}", {"any": "other"})
    # Equal literals: fewer variables first, then the template text.
    assert serving_template(["x://{a}{b}", "x://{c}"], "x://v")[0] == "x://{c}"  # type: ignore[index]
    assert serving_template(["x://{b}", "x://{a}"], "x://v")[0] == "x://{a}"  # type: ignore[index]


# -- hypothesis: expand then match --------------------------------------------------------------
LITERAL = st.text(alphabet="abcxyz019/-:._~=,;", min_size=0, max_size=4).filter(lambda s: "//" not in s)
VALUE = st.text(alphabet=st.sampled_from("az09-._~/?#[]@!$&'()*+,;=% é中"), max_size=6)


@st.composite
def templates(draw: st.DrawFn) -> str:
    """A template of 1-3 expressions with distinct variables; queries (and a fragment) last."""
    names = iter(draw(st.permutations("abcdefghijkl")))
    out = ["x:" + draw(LITERAL)]
    operators = draw(st.lists(st.sampled_from(["", "+", ".", "/", ";"]), min_size=0, max_size=3))
    operators += draw(st.lists(st.sampled_from(["?", "&"]), max_size=1))
    operators += draw(st.lists(st.just("#"), max_size=1))
    for op in operators or [""]:
        specs = []
        for _ in range(draw(st.integers(1, 2))):
            modifier = draw(st.sampled_from(["", "", "*", ":1", ":3"]))
            specs.append(next(names) + modifier)
        out.append("{" + op + ",".join(specs) + "}")
        if op not in ("?", "&", "#"):
            out.append(draw(LITERAL))
    return "".join(out)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(template=templates(), data=st.data())
def test_matching_an_expansion_gives_values_that_expand_to_it(template: str, data: st.DataObject) -> None:
    parsed = parse_template(template)
    reserved = any(f"{{{op}" in template for op in "+#")
    value = VALUE.filter(lambda v: "%" not in v) if reserved else VALUE  # §3.2.3 passes %XX through
    values = {name: data.draw(st.one_of(st.none(), value)) for name in parsed.variables}
    uri = parsed.expand(values)
    found = parsed.match(uri)
    assert found is not None, (template, values, uri)
    assert parsed.expand(found) == uri, (template, values, uri, found)


# -- hypothesis: the grant check and the read agree ---------------------------------------------
TEMPLATE_POOL = ["t://docs{/name}", "t://docs/internal/{id}", "t://docs{/path*}", "t://{+any}",
                 "t://docs/{name}.{ext}", "t://docs/{name}{.ext}", "t://docs{?q}", "t://u/{id}/p",
                 "t://u/{id}{/rest*}", "t://docs/internal{/id}", "t://a{#f}", "t://a{;v}"]
URI_POOL = ["t://docs", "t://docs/readme", "t://docs/internal/7", "t://docs/internal", "t://docs/a/b",
            "t://docs/a.txt", "t://docs/a.tar.gz", "t://docs?q=1", "t://u/1/p", "t://u/1/p/q",
            "t://u/1", "t://a#x", "t://a", "t://a;v=1", "t://zz", "t://docs/internal/7/8"]


async def _read(provider: MemoryProvider, uri: str) -> str | None:
    try:
        contents = await provider.read_resource(uri, None)  # type: ignore[arg-type]  # unused here
    except ResourceNotFound:
        return None
    return str(contents[0]["text"])


def _provider(pool: list[str]) -> MemoryProvider:
    async def read(uri: str, variables: dict[str, str], ctx: Any, template: str = "") -> list[dict[str, Any]]:
        return [{"uri": uri, "text": template}]

    def reader(template: str) -> Any:
        return lambda uri, variables, ctx: read(uri, variables, ctx, template)

    return MemoryProvider(templates=[(ResourceTemplate(t, f"t{i}"), reader(t)) for i, t in enumerate(pool)])


@settings(max_examples=300, deadline=None)
@given(pool=st.lists(st.sampled_from(TEMPLATE_POOL), min_size=1, max_size=6, unique=True),
       granted=st.sets(st.sampled_from(TEMPLATE_POOL)),
       uri=st.one_of(st.sampled_from(URI_POOL), st.builds(lambda u, s: u + s, st.sampled_from(URI_POOL),
                                                          st.text(alphabet="/.a1;#?=", max_size=3))))
def test_a_read_is_granted_exactly_when_the_template_serving_it_is(
    pool: list[str], granted: set[str], uri: str
) -> None:
    provider = _provider(pool)
    full = provider.snapshot()
    grant = Grant.of(tools=[], resources=granted, prompts=[])
    served_by = asyncio.run(_read(provider, uri))
    allowed = granted_uri(view(full, grant), full, uri)
    assert allowed == (served_by is not None and served_by in granted), (pool, granted, uri, served_by)


# -- the attack, on a real server -----------------------------------------------------------------
TEMPLATES = """
from registry.models import ResourceTemplate
ResourceTemplate.objects.create(name="a_docs", uri_template="demo://docs{/name}", kind="text",
                                text_template="doc {{ name }}")
ResourceTemplate.objects.create(name="b_internal", uri_template="demo://docs/internal/{id}", kind="text",
                                text_template="INTERNAL {{ id }}")
"""


live = live_server_fixture(env={"MCP_AUTH": "keys"}, provider=REGISTRY_PROVIDER,
                          load=[["shell", "-c", TEMPLATES]])


def _call(live: LiveServer, token: str, sid: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    headers = {**session_headers(sid), "authorization": f"Bearer {token}"}
    response = httpx.post(live.url, headers=headers, json=request(2, method, params), timeout=10)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_a_key_granted_one_template_cannot_read_what_another_template_serves(live: LiveServer) -> None:
    token = live.manage("mcp_keys", "create", "docs-only", "--tools", "", "--prompts", "",
                        "--resources", "demo://docs{/name}").strip().splitlines()[-1]
    auth = {"authorization": f"Bearer {token}"}
    opened = httpx.post(live.url, headers={**POST_HEADERS, **auth}, json=initialize_message(), timeout=10)
    for _ in range(50):  # the worker's key ring polls the database every second
        if opened.status_code == 200:
            break
        asyncio.run(asyncio.sleep(0.1))
        opened = httpx.post(live.url, headers={**POST_HEADERS, **auth}, json=initialize_message(), timeout=10)
    assert opened.status_code == 200, opened.text
    sid = opened.headers["mcp-session-id"]
    httpx.post(live.url, headers={**session_headers(sid), **auth},
               json=notification("notifications/initialized"), timeout=10)

    readme = _call(live, token, sid, "resources/read", {"uri": "demo://docs/readme"})
    assert readme["result"]["contents"][0]["text"] == "doc readme"
    internal = _call(live, token, sid, "resources/read", {"uri": "demo://docs/internal/7"})
    assert "result" not in internal and internal["error"]["code"] == -32002, json.dumps(internal)
    listed = _call(live, token, sid, "resources/templates/list", {})
    assert [t["uriTemplate"] for t in listed["result"]["resourceTemplates"]] == ["demo://docs{/name}"]
