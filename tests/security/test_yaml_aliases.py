"""YAML alias trees ("billion laughs") stored as definitions (issue 37 item 6): the 570-byte
OpenAPI document that stored a 922 KB input schema and the 329-byte ``SKILL.md`` that stored
1.9 MB of frontmatter, sent from outside (the REST import, the admin's skill zip upload), are
refused with the line of the first alias and store nothing; and a stored schema or frontmatter
has a size bound whatever it came from."""

from __future__ import annotations

import io
import zipfile
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.test import Client
from rest_framework.test import APIClient

from registry.models import Tool
from registry.models.skills import Skill, parse_skill_md

pytestmark = pytest.mark.django_db


def laughs(indent: str, levels: int) -> str:
    """Anchors a..: each a list of nine of the previous (YAML flow style, one line a level)."""
    lines = [f"{indent}a: &a [x,x,x,x,x,x,x,x,x]"]
    for level in range(1, levels):
        name, previous = chr(ord("a") + level), chr(ord("a") + level - 1)
        lines.append(f"{indent}{name}: &{name} [{','.join('*' + previous for _ in range(9))}]")
    return "\n".join(lines) + "\n"


OPENAPI_BOMB = (
    "openapi: 3.0.3\ninfo: {title: t, version: '1'}\nservers: [{url: 'https://api.example.com'}]\n"
    "x-l:\n" + laughs("  ", 6)
    + "paths:\n  /a:\n    get:\n      operationId: a\n      parameters:\n      - {name: q, in: query, "
    "schema: {type: array, items: {enum: *f}}}\n      responses: {'200': {description: ok}}\n"
)
SKILL_BOMB = (
    "---\nname: laughs\ndescription: d\nmetadata:\n  l:\n" + laughs("    ", 6) + "  all: *f\n---\nBody.\n"
)


@pytest.fixture
def api(superuser: User) -> APIClient:
    client = APIClient()
    client.force_login(superuser)
    return client


def test_the_bombs_are_the_sizes_of_the_report() -> None:
    assert len(OPENAPI_BOMB) <= 570 and len(SKILL_BOMB) <= 329


def test_the_570_byte_openapi_bomb_is_a_400_naming_the_alias_and_stores_nothing(api: APIClient) -> None:
    for dry_run in (True, False):
        answer = api.post("/api/v1/registry/openapi",
                          {"document": OPENAPI_BOMB, "source": "bomb", "dry_run": dry_run}, format="json")
        assert answer.status_code == 400, answer.content[:300]
        message = answer.json()["errors"][0]["message"]
        assert "aliases are not accepted" in message and "*a at line 6" in message
    assert not Tool.objects.exists()


def test_the_329_byte_skill_md_bomb_is_refused_by_the_admin_upload(superuser: User) -> None:
    with pytest.raises(ValueError, match="aliases are not accepted"):
        parse_skill_md(SKILL_BOMB)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("SKILL.md", SKILL_BOMB)
    buffer.seek(0)
    buffer.name = "laughs.zip"
    admin = Client()
    admin.force_login(superuser)
    answer = admin.post("/admin/registry/skill/add/", {
        "path": "laughs", "frontmatter": "{}", "body": "", "tags": "[]", "enabled": "on", "upload": buffer,
        "files-TOTAL_FORMS": "0", "files-INITIAL_FORMS": "0", "files-MIN_NUM_FORMS": "0",
        "files-MAX_NUM_FORMS": "1000",
    })
    assert answer.status_code == 200
    assert any("aliases are not accepted" in e for e in answer.context["adminform"].form.errors["upload"])
    assert not Skill.objects.filter(path="laughs").exists()


def test_an_anchor_without_an_alias_still_loads() -> None:
    frontmatter, _ = parse_skill_md("---\nname: s\ndescription: &d plain\n---\nBody.\n")
    assert frontmatter == {"name": "s", "description": "plain"}


def big_schema(size: int) -> dict[str, Any]:
    return {"type": "object", "properties": {"q": {"enum": ["x" * 1000] * (size // 1000)}}}


def test_a_schema_past_the_stored_size_bound_is_a_field_error() -> None:
    tool = Tool(name="big", kind="template", input_schema=big_schema(300_000),
                output_schema=big_schema(300_000))
    with pytest.raises(ValidationError) as info:
        tool.full_clean()
    errors = info.value.message_dict
    assert "at most 262144" in errors["input_schema"][0] and "at most 262144" in errors["output_schema"][0]


def test_frontmatter_past_the_stored_size_bound_is_a_field_error() -> None:
    frontmatter = {"name": "big", "description": "d", "metadata": {"x": "y" * 70_000}}
    skill = Skill(path="big", frontmatter=frontmatter)
    with pytest.raises(ValidationError) as info:
        skill.full_clean()
    assert "at most 65536" in info.value.message_dict["frontmatter"][0]
