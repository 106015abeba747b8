"""The reference server ``@modelcontextprotocol/server-everything`` (TypeScript SDK, nobody here
wrote it) mirrored as an upstream over Streamable HTTP on loopback (issue 40)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.test import override_settings

from registry.models import ChangeSet, Prompt, Resource, ResourceTemplate, Tool, Upstream
from registry.snapshot import build_state
from registry.upstreams.sync import sync_upstream
from tests.support import everything

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not everything.installed(), reason="needs scripts/install-tools.sh"),
]


@pytest.fixture(scope="module")
def server() -> Iterator[everything.Everything]:
    with everything.Everything() as running:
        yield running


def test_the_reference_server_is_mirrored_every_kind_with_the_prefix(server: everything.Everything) -> None:
    with override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1"]):
        row = Upstream.objects.create(name="everything", prefix="ev", url=server.url, timeout=10)
        report = sync_upstream(row)
        assert report.error == "" and report.health == "up", report.to_json()
        assert Tool.objects.filter(upstream=row, name="ev_echo", kind="upstream").exists(), report.refused
        assert Tool.objects.filter(upstream=row).count() >= 10
        # Its schemas are draft-07 (zod): kept in their dialect, checked against its meta-schema.
        echo = Tool.objects.get(name="ev_echo")
        assert echo.input_schema["$schema"].startswith("http://json-schema.org/draft-07")
        assert Resource.objects.filter(upstream=row, uri__startswith="demo://resource/static/").exists()
        assert Prompt.objects.filter(upstream=row, name="ev_simple-prompt").exists()
        # Its templates are named with spaces ("Dynamic Text Resource"): refused with the reason
        # (our names are [A-Za-z0-9_.-]), never renamed.
        refused = {r.name: r.reason for r in report.refused}
        assert sorted(refused) == ["demo://resource/dynamic/blob/{resourceId}",
                                   "demo://resource/dynamic/text/{resourceId}"]
        assert "Name must be" in refused["demo://resource/dynamic/text/{resourceId}"]
        assert not ResourceTemplate.objects.filter(upstream=row).exists()
        [args] = [p for p in build_state().snapshot.prompts if p.name == "ev_args-prompt"]
        assert any(a.required for a in args.arguments)

        before = ChangeSet.objects.count()
        again = sync_upstream(row)
        assert not again.changed and ChangeSet.objects.count() == before
