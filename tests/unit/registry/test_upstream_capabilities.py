"""An upstream is asked only for what it advertised (issue 40 item 3, "capabilities advertised only
where some mirrored upstream has them"): ``completion/complete`` for a mirrored prompt of an
upstream without the ``completions`` capability is answered empty by us, without a request the
upstream would refuse. Against an official SDK server process on loopback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.test import override_settings

from registry.upstreams import serve
from registry.upstreams.config import UpstreamConfig, UpstreamTarget
from registry.upstreams.pool import UpstreamSessions
from tests.support.changing_upstream import ChangingUpstream

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def up() -> Iterator[ChangingUpstream]:
    with override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1"]), ChangingUpstream() as server:
        yield server


async def test_a_prompt_of_an_upstream_without_completions_completes_to_nothing(up: ChangingUpstream) -> None:
    config = UpstreamConfig(id=1, name="changing", prefix="ch", url=up.url, transport="streamable-http",
                            auth="none", timeout=5.0, connect_timeout=2.0)
    sessions = UpstreamSessions()
    sessions.open()
    try:
        done = await serve.complete(UpstreamTarget(config, "greet"), "ref/prompt", "who", "al", {}, sessions)
        assert done.values == () and done.has_more is False
        # The session is sound: the same upstream still answers what it does advertise.
        prompt = await serve.get_prompt(UpstreamTarget(config, "greet"), {"who": "Ada"}, None, sessions)
        assert prompt["messages"][0]["content"]["text"] == "Hello Ada"
    finally:
        await sessions.close()
