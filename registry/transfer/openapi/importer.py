"""An OpenAPI import: the plan of what it would do, and doing it.

A *source* names one import (``--source petstore``); each tool it makes remembers it
(``Tool.openapi_source``). Importing the same source again compares every operation with the tool
of the same name:

- ``create``: no tool has the name;
- ``update`` / ``unchanged``: the tool came from this source; only the fields the document and the
  import's options decide are rewritten (``IMPORTED``, and ``tags`` when the import gives some),
  so what an operator tuned afterwards (enabled, headers, concurrency cap, signing, forwarding)
  stays;
- ``conflict``: a tool made by hand or by another source has the name: left alone;
- ``skip``: the operation cannot be a tool (the reason is said), or the rules leave it out;
- ``invalid``: the tool it would make fails validation (the field errors are said);
- ``stale``: a tool of this source whose operation is gone (``prune`` deletes it).

``dry_run`` returns the plan and writes nothing; otherwise creates, updates and prunes happen in
one transaction (clients hear one change).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from ...models import Tool
from . import document as doc
from .operations import NotImportable, Operation, credential_note, operations, tool_fields, tool_name

IMPORTED = ("title", "description", "input_schema", "output_schema", "annotations", "kind", "http_method",
            "http_url", "http_body_template", "http_timeout", "http_secret_header", "http_secret_env")


@dataclass(frozen=True)
class Rules:
    """Which operations to import: none of the excluded, and, when include lists are given, only
    those they name. Paths are shell patterns (``/pet/*``); methods and tags are exact."""

    include_tags: tuple[str, ...] = ()
    exclude_tags: tuple[str, ...] = ()
    include_paths: tuple[str, ...] = ()
    exclude_paths: tuple[str, ...] = ()
    methods: tuple[str, ...] = ()

    def why_not(self, operation: Operation) -> str | None:
        if self.methods and operation.method not in {m.upper() for m in self.methods}:
            return f"method {operation.method} is not included"
        if self.include_tags and not set(operation.tags) & set(self.include_tags):
            return "no included tag"
        if set(operation.tags) & set(self.exclude_tags):
            return "an excluded tag"
        if self.include_paths and not any(fnmatch.fnmatchcase(operation.path, p) for p in self.include_paths):
            return "path not included"
        if any(fnmatch.fnmatchcase(operation.path, p) for p in self.exclude_paths):
            return "path excluded"
        return None


@dataclass(frozen=True)
class Options:
    source: str
    base_url: str = ""
    prefix: str = ""
    timeout: float = 10.0
    secret_header: str = ""
    secret_env: str = ""
    enabled: bool = True  # for new tools only; a re-import keeps each tool's own switch
    tags: tuple[str, ...] = ()  # access tags (API keys and OAuth scopes grant by tag); kept if none


@dataclass
class Change:
    action: str
    name: str
    detail: str = ""
    fields: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"action": self.action, "name": self.name, "detail": self.detail}


@dataclass
class Plan:
    openapi: str
    changes: list[Change] = field(default_factory=list)
    applied: bool = False
    credentials: str = ""  # the document's security schemes, when no --secret-header was given

    def count(self, action: str) -> int:
        return sum(1 for c in self.changes if c.action == action)

    def summary(self) -> dict[str, int]:
        actions = ("create", "update", "unchanged", "conflict", "skip", "invalid", "stale")
        return {a: self.count(a) for a in actions}

    def as_dict(self) -> dict[str, Any]:
        return {"openapi": self.openapi, "applied": self.applied, "summary": self.summary(),
                "credentials": self.credentials, "changes": [c.as_dict() for c in self.changes]}


def plan(document: dict[str, Any], options: Options, rules: Rules = Rules()) -> Plan:
    """What importing ``document`` would do (validates it first: ``InvalidDocument``)."""
    openapi = doc.check(document)
    result = Plan(openapi, credentials="" if options.secret_header else credential_note(document))
    existing = {t.name: t for t in Tool.objects.all()}
    seen: set[str] = set()
    for operation in operations(document):
        name = tool_name(operation, options.prefix)
        label = f"{operation.method} {operation.path}"
        reason = rules.why_not(operation)
        if reason:
            result.changes.append(Change("skip", name, f"{label}: {reason}"))
            continue
        try:
            fields = tool_fields(document, openapi, operation, options.base_url)
        except NotImportable as exc:
            result.changes.append(Change("skip", name, f"{label}: {exc}"))
            continue
        if name in seen:
            result.changes.append(Change("skip", name, f"{label}: another operation has this name"))
            continue
        seen.add(name)
        fields.update(kind="http", http_timeout=options.timeout, http_secret_header=options.secret_header,
                      http_secret_env=options.secret_env)
        if options.tags:
            fields["tags"] = list(options.tags)
        result.changes.append(_compare(name, label, fields, existing.get(name), options))
    for name, tool in sorted(existing.items()):
        if tool.openapi_source == options.source and name not in seen:
            result.changes.append(Change("stale", name, "its operation is no longer in the document"))
    return result


def _compare(name: str, label: str, fields: dict[str, Any], tool: Tool | None, options: Options) -> Change:
    if tool is not None and tool.openapi_source != options.source:
        owner = f"source {tool.openapi_source!r}" if tool.openapi_source else "made by hand"
        return Change("conflict", name, f"{label}: a tool with this name exists ({owner}); left alone")
    row = tool or Tool(name=name, openapi_source=options.source, enabled=options.enabled)
    changed = [k for k, v in fields.items() if tool is not None and getattr(tool, k) != v]
    if tool is not None and not changed:
        return Change("unchanged", name, label)
    for key, value in fields.items():
        setattr(row, key, value)
    try:
        row.full_clean()
    except ValidationError as exc:
        problems = "; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())
        return Change("invalid", name, f"{label}: {problems}")
    detail = label if tool is None else f"{label}: {', '.join(sorted(changed))}"
    return Change("create" if tool is None else "update", name, detail, fields)


def apply(result: Plan, options: Options, *, prune: bool = False) -> Plan:
    with transaction.atomic():
        for change in result.changes:
            if change.action == "create":
                row = Tool(name=change.name, openapi_source=options.source, enabled=options.enabled,
                           **change.fields)
                row.full_clean()
                row.save()
            elif change.action == "update":
                row = Tool.objects.get(name=change.name, openapi_source=options.source)
                for key, value in change.fields.items():
                    setattr(row, key, value)
                row.full_clean()
                row.save()
            elif change.action == "stale" and prune:
                Tool.objects.filter(name=change.name, openapi_source=options.source).delete()
                change.detail += " (deleted)"
    result.applied = True
    return result


def run(document: dict[str, Any], options: Options, rules: Rules = Rules(), *, dry_run: bool = False,
        prune: bool = False) -> Plan:
    """Plan, then (unless ``dry_run``) apply: the one entry point of the command, API and admin."""
    result = plan(document, options, rules)
    return result if dry_run else apply(result, options, prune=prune)
