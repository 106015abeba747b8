"""Mirrored rows made directly, for the upstream calls' tests and bench (issue 40): an ``Upstream``
row and its tools, resource, template and prompt of kind ``upstream``, as the sync would leave
them (a mirrored prompt's arguments in its ``upstream_definition``), in a ``manage.py shell -c``
script a ``LiveServer`` runs before it starts.

    LiveServer(load=[["shell", "-c", mirror_script("up", url, tools=("echo", "slow"))]])

Mirrored names are ``<prefix>_<name>``; ``local_echo`` is a template tool beside them (the "other
tools" a dead upstream must not slow down).
"""

from __future__ import annotations

OBJECT = {"type": "object", "properties": {}}
TOOLS = ("echo", "add", "fail", "big", "slow", "hold", "recorded", "chatty", "interview")


def mirror_script(prefix: str, url: str, *, tools: tuple[str, ...] = TOOLS, timeout: float = 5.0,
                  max_concurrency: int = 16, resources: bool = True, local: bool = False) -> str:
    lines = [
        "from registry.models import Upstream, Tool, Resource, ResourceTemplate, Prompt",
        f"up = Upstream.objects.create(name={prefix!r}, prefix={prefix!r}, url={url!r}, "
        f"transport='streamable-http', timeout={timeout!r}, connect_timeout=2.0, "
        f"max_concurrency={max_concurrency!r})",
    ]
    for name in tools:
        lines.append(
            f"Tool.objects.create(name={prefix + '_' + name!r}, description='mirrored', kind='upstream', "
            f"upstream=up, upstream_name={name!r}, input_schema={OBJECT!r})")
    if resources:
        lines += [
            f"Resource.objects.create(uri='memo://readme', name={prefix + '_readme'!r}, kind='upstream', "
            "upstream=up, upstream_name='memo://readme', mime_type='text/plain')",
            "ResourceTemplate.objects.create(uri_template='memo://notes/{slug}', "
            f"name={prefix + '_note'!r}, kind='upstream', upstream=up, "
            "upstream_name='memo://notes/{slug}', mime_type='text/plain')",
            f"p = Prompt.objects.create(name={prefix + '_greet'!r}, description='Greet someone.', "
            "upstream=up, upstream_name='greet', upstream_definition="
            "{'name': 'greet', 'arguments': [{'name': 'who', 'required': True}]})",
        ]
    if local:
        lines.append(
            "Tool.objects.create(name='local_echo', description='d', kind='template', "
            f"template_text='local', input_schema={OBJECT!r})")
    return "; ".join(lines)
