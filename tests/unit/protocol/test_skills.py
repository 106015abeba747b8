"""The skills extension (SEP-2640) in the core, over the memory provider: the capability in both
eras, ``skills/list`` / ``skills/get``, ``skill://`` files through ``resources/read``,
``resources/directory/read``, digests and sizes, nested skills, grants, and the gate."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import pytest

from mcp_protocol.auth import principal as caller
from mcp_protocol.auth.principal import Grant, Principal
from mcp_protocol.jsonrpc import Request
from mcp_protocol.memory_provider import MemoryProvider
from mcp_protocol.server import Server
from mcp_protocol.session import Session
from mcp_protocol.skills import EXTENSION, Skill, SkillFile

from .conftest import RecordingOutbound, call, initialized, make_server, modern_meta

PNG = bytes(range(256)) * 4


def _skill_md(name: str, description: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n\nSkill body.\n"


def _skill(path: str, description: str, *files: SkillFile, tags: tuple[str, ...] = ()) -> Skill:
    name = path.rsplit("/", 1)[-1]
    md = SkillFile("SKILL.md", "text/markdown", text=_skill_md(name, description))
    return Skill(path, {"name": name, "description": description}, (md, *files), tags)


SKILLS = (
    _skill("git-workflow", "Team Git conventions", tags=("public",)),
    _skill(
        "pdf-processing",
        "Extract and fill PDFs",
        SkillFile("references/FORMS.md", "text/markdown", text="# Forms\n"),
        SkillFile("templates/regional/eu-invoice.md", "text/markdown", text="EU invoice\n"),
        SkillFile("assets/logo.png", "image/png", data=PNG),
    ),
    _skill("pdf-processing/form-filler", "Fill forms", SkillFile("notes.txt", "text/plain", text="n\n")),
    _skill("acme/billing/refunds", "Process refunds"),
)


def _provider() -> MemoryProvider:
    return MemoryProvider(tools=(), resources=(), prompts=(), skills=SKILLS)


@pytest.fixture
def skills_server() -> Server:
    return make_server(_provider())


async def test_the_extension_is_declared_in_both_eras(skills_server: Server) -> None:
    init = await skills_server.handle(
        Request(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                  "clientInfo": {"name": "t", "version": "0"}}),
        Session.create(), RecordingOutbound(),
    )
    assert init is not None
    assert init["result"]["capabilities"]["extensions"] == {EXTENSION: {"directoryRead": True}}
    modern = skills_server.capabilities("2026-07-28")
    assert modern["extensions"][EXTENSION] == {"directoryRead": True} and "resources" in modern


async def test_a_server_without_skills_declares_nothing_and_answers_32601(server: Server) -> None:
    session = await initialized(server)
    assert "extensions" not in server.capabilities("2025-11-25")
    for method in ("skills/list", "skills/get", "resources/directory/read"):
        response = await call(server, session, method, {"uri": "skill://x/SKILL.md"})
        assert response["error"]["code"] == -32601


async def test_skills_list_gives_complete_entries_with_digests_and_sizes(skills_server: Server) -> None:
    session = await initialized(skills_server)
    skills = (await call(skills_server, session, "skills/list"))["result"]["skills"]
    by_uri = {s["uri"]: s for s in skills}
    assert list(by_uri) == [
        "skill://git-workflow/SKILL.md",
        "skill://pdf-processing/SKILL.md",
        "skill://pdf-processing/form-filler/SKILL.md",
        "skill://acme/billing/refunds/SKILL.md",
    ]
    pdf = by_uri["skill://pdf-processing/SKILL.md"]
    assert pdf["frontmatter"] == {"name": "pdf-processing", "description": "Extract and fill PDFs"}
    files = {r["uri"]: r for r in pdf["resources"]}
    # Complete, nested skill's files included (SEP-2640 "Resources").
    assert set(files) == {
        "skill://pdf-processing/SKILL.md",
        "skill://pdf-processing/references/FORMS.md",
        "skill://pdf-processing/templates/regional/eu-invoice.md",
        "skill://pdf-processing/assets/logo.png",
        "skill://pdf-processing/form-filler/SKILL.md",
        "skill://pdf-processing/form-filler/notes.txt",
    }
    logo = files["skill://pdf-processing/assets/logo.png"]
    assert logo == {"uri": logo["uri"], "digest": "sha256:" + hashlib.sha256(PNG).hexdigest(), "size": 1024}


async def test_skills_list_pages_whole_entries() -> None:
    server = make_server(_provider(), page_size=3)
    session = await initialized(server)
    first = (await call(server, session, "skills/list"))["result"]
    assert len(first["skills"]) == 3 and "nextCursor" in first
    rest = (await call(server, session, "skills/list", {"cursor": first["nextCursor"]}))["result"]
    assert [s["uri"] for s in rest["skills"]] == ["skill://acme/billing/refunds/SKILL.md"]
    assert "nextCursor" not in rest


async def test_skills_get_and_unknown_uris(skills_server: Server) -> None:
    session = await initialized(skills_server)
    got = (await call(skills_server, session, "skills/get", {"uri": "skill://git-workflow/SKILL.md"}))["result"]
    assert got["skill"]["frontmatter"]["name"] == "git-workflow" and "nextCursor" not in got
    for uri in ("skill://nope/SKILL.md", "skill://pdf-processing/references/FORMS.md"):
        assert (await call(skills_server, session, "skills/get", {"uri": uri}))["error"]["code"] == -32602


async def test_resources_read_serves_text_and_binary_files(skills_server: Server) -> None:
    session = await initialized(skills_server)
    md = (await call(skills_server, session, "resources/read",
                     {"uri": "skill://pdf-processing/SKILL.md"}))["result"]["contents"][0]
    assert md["mimeType"] == "text/markdown" and md["text"].startswith("---\nname: pdf-processing\n")
    logo = (await call(skills_server, session, "resources/read",
                       {"uri": "skill://pdf-processing/assets/logo.png"}))["result"]["contents"][0]
    assert logo["mimeType"] == "image/png" and base64.b64decode(logo["blob"]) == PNG
    missing = await call(skills_server, session, "resources/read", {"uri": "skill://pdf-processing/nope.md"})
    assert missing["error"]["code"] == -32002


async def test_directory_read_lists_direct_children(skills_server: Server) -> None:
    session = await initialized(skills_server)

    async def children(uri: str) -> list[tuple[str, str]]:
        result = (await call(skills_server, session, "resources/directory/read", {"uri": uri}))["result"]
        return [(r["name"], r["mimeType"]) for r in result["resources"]]

    assert await children("skill://pdf-processing") == [
        ("SKILL.md", "text/markdown"),
        ("assets", "inode/directory"),
        ("form-filler", "inode/directory"),
        ("references", "inode/directory"),
        ("templates", "inode/directory"),
    ]
    assert await children("skill://pdf-processing/templates") == [("regional", "inode/directory")]
    assert await children("skill://pdf-processing/templates/regional") == [("eu-invoice.md", "text/markdown")]
    for not_a_directory in ("skill://pdf-processing/SKILL.md", "skill://nowhere", "skill://pdf-processing/"):
        response = await call(skills_server, session, "resources/directory/read", {"uri": not_a_directory})
        assert response["error"]["code"] == -32602


async def test_modern_results_carry_caching_attributes(skills_server: Server) -> None:
    response = await skills_server.handle_stateless(
        Request(1, "skills/get", {"uri": "skill://git-workflow/SKILL.md", "_meta": modern_meta()}),
        RecordingOutbound(),
    )
    assert response is not None
    result: dict[str, Any] = response["result"]
    assert result["skill"]["uri"] == "skill://git-workflow/SKILL.md"
    assert "ttlMs" in result and "cacheScope" in result


async def _as(grant: Grant, server: Server, session: Session, method: str, params: dict[str, Any]) -> Any:
    token = caller.bind(Principal("key:skills", grant))
    try:
        return await server.handle(Request(1, method, params), session, RecordingOutbound())
    finally:
        caller.unbind(token)


async def test_a_grant_scopes_skills_like_resources(skills_server: Server) -> None:
    session = await initialized(skills_server)
    grant = Grant.of(tools=[], prompts=[], resources=["skill://pdf-processing"], tags=["public"])
    listed = await _as(grant, skills_server, session, "skills/list", {})
    assert [s["uri"] for s in listed["result"]["skills"]] == [
        "skill://git-workflow/SKILL.md", "skill://pdf-processing/SKILL.md"
    ]
    # The nested skill's files are supporting files of the granted enclosing skill.
    nested = await _as(grant, skills_server, session, "resources/read",
                       {"uri": "skill://pdf-processing/form-filler/notes.txt"})
    assert nested["result"]["contents"][0]["text"] == "n\n"
    # Outside the grant: exactly as unknown as what does not exist.
    hidden = await _as(grant, skills_server, session, "resources/read",
                       {"uri": "skill://acme/billing/refunds/SKILL.md"})
    assert hidden["error"]["code"] == -32002
    got = await _as(grant, skills_server, session, "skills/get", {"uri": "skill://acme/billing/refunds/SKILL.md"})
    assert got["error"]["code"] == -32602
    listing = await _as(grant, skills_server, session, "resources/directory/read", {"uri": "skill://acme/billing/refunds"})
    assert listing["error"]["code"] == -32602


def test_a_skill_is_refused_when_its_path_does_not_end_in_its_name() -> None:
    md = SkillFile("SKILL.md", "text/markdown", text=_skill_md("other", "d"))
    with pytest.raises(ValueError, match="final path segment"):
        Skill("acme/refunds", {"name": "other", "description": "d"}, (md,))
    with pytest.raises(ValueError, match=r"SKILL\.md"):
        Skill("refunds", {"name": "refunds", "description": "d"}, ())


async def test_a_changed_skill_makes_a_new_snapshot(skills_server: Server) -> None:
    session = await initialized(skills_server)
    provider = skills_server.provider
    assert isinstance(provider, MemoryProvider)
    before = (await call(skills_server, session, "skills/get", {"uri": "skill://git-workflow/SKILL.md"}))
    provider.put_skill(_skill("git-workflow", "Changed conventions"))
    after = (await call(skills_server, session, "skills/get", {"uri": "skill://git-workflow/SKILL.md"}))
    digests = [r["result"]["skill"]["resources"][0]["digest"] for r in (before, after)]
    assert digests[0] != digests[1]
    assert after["result"]["skill"]["frontmatter"]["description"] == "Changed conventions"


async def test_resources_list_shows_each_skill_md_with_its_frontmatter(skills_server: Server) -> None:
    session = await initialized(skills_server)
    listed = (await call(skills_server, session, "resources/list"))["result"]["resources"]
    refunds = next(r for r in listed if r["uri"] == "skill://acme/billing/refunds/SKILL.md")
    assert refunds["name"] == "refunds" and refunds["description"] == "Process refunds"
    assert refunds["mimeType"] == "text/markdown" and refunds["size"] > 0
