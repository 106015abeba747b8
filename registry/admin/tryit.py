"""The admin's "try it": run a definition through ``RegistryProvider`` and report the result.

Each run builds a private provider from the database (so it sees the row as saved, committed or
not); a tool runs as the admin form holds it, saved or not and enabled or not (``try_tool``), in
a provider of its own that is never started, so no client hears of it. Each run has a ``Context``
whose ``NullOutbound`` captures progress and log notifications. There is no client behind it, so
sampling, elicitation and roots fail the way they fail for a client that did not declare the
capability. Arguments are checked against ``inputSchema`` (and ``structuredContent``
against ``outputSchema``) as the core does before and after a real call.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from asgiref.sync import async_to_sync
from jsonschema import Draft202012Validator

from mcp_protocol.context import Context
from mcp_protocol.errors import MCPError
from mcp_protocol.methods.tools import execute_tool
from mcp_protocol.outbound import NullOutbound
from mcp_protocol.session import Session

from ..models import Prompt, Tool
from ..provider import RegistryProvider
from ..serving.specs import RegistryState, ToolSpec
from ..snapshot import tool_definition, tool_spec

TRY_SESSION_ID = "admin-try-it"
TRY_PROTOCOL_VERSION = "2025-11-25"


@dataclass
class Outcome:
    result: Any = None
    error: str | None = None
    notifications: list[dict[str, Any]] = field(default_factory=list)
    note: str | None = None  # what the run was not: saved, enabled

    def as_json(self) -> dict[str, Any]:
        return {
            "result": self.result,
            "error": self.error,
            "notifications": self.notifications,
            "note": self.note,
        }


def _provider() -> RegistryProvider:
    provider = RegistryProvider()
    provider.rebuild()
    return provider


def _context(principal: str | None) -> tuple[Context, NullOutbound]:
    session = Session(
        id=TRY_SESSION_ID,
        protocol_version=TRY_PROTOCOL_VERSION,
        log_level="debug",
        state="ready",
        principal=principal,
    )
    outbound = NullOutbound()
    return Context(
        session=session, outbound=outbound, progress_token="try-it", client_request_timeout=5.0
    ), outbound


def _schema_errors(schema: Any, instance: Any) -> list[str]:
    errors = sorted(Draft202012Validator(schema).iter_errors(instance), key=lambda e: list(e.absolute_path))
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '(root)'}: {e.message}" for e in errors]


def _disabled(kind: str) -> Outcome:
    return Outcome(error=f"This {kind} is disabled: clients cannot see it. Enable it and save to try it.")


class _TrialProvider(RegistryProvider):
    """The registry as saved, with the tool on trial as the form holds it (saved or not, enabled
    or not) in place of its row. Private to one run: never started, so it publishes nothing, and
    the workers' snapshots never see it."""

    def __init__(self, trial: ToolSpec) -> None:
        super().__init__()
        self._trial = trial

    def state(self) -> RegistryState:
        state = super().state()
        return replace(state, tools={**state.tools, self._trial.name: self._trial})


def try_tool(
    row: Tool, arguments: dict[str, Any], principal: str | None = None, *, unsaved: bool = False
) -> Outcome:
    """Run ``row`` as it stands (a saved row, or the admin form's unsaved instance, validated)."""
    notes = []
    if unsaved:
        notes.append("Ran the form as it stands, not saved: clients still see the saved version.")
    if not row.enabled:
        notes.append("This tool is disabled: clients cannot see or call it.")
    definition = tool_definition(row)
    if definition.approval != "none":
        # The one trying it is staff: asking them (or the queue) for leave to run it would gate
        # nothing (mcp_protocol/approvals.py applies the policy to clients' calls).
        policy = definition.approval
        notes.append(f"Ran without its approval policy ({policy}): clients' calls are asked first.")
        definition = replace(definition, approval="none")
    problems = _schema_errors(definition.input_schema, arguments)
    if problems:
        return Outcome(
            error="The arguments do not match inputSchema: " + "; ".join(problems),
            note=" ".join(notes) or None,
        )
    provider = _TrialProvider(tool_spec(row))
    ctx, outbound = _context(principal)
    try:
        # The core's own step from a call to its result (a ToolError becomes an isError result
        # there, once: issue 36 item 7), as a client's call takes it.
        result = async_to_sync(execute_tool)(provider, definition, arguments, ctx, TRY_PROTOCOL_VERSION)
    except MCPError as exc:
        return Outcome(
            error=f"Protocol error {exc.code}: {exc.message}",
            notifications=_captured(outbound),
            note=" ".join(notes) or None,
        )
    outcome = Outcome(result=result, notifications=_captured(outbound), note=" ".join(notes) or None)
    if definition.output_schema and not result.get("isError"):
        if "structuredContent" not in result:
            outcome.error = "The tool has an outputSchema but returned no structuredContent."
        else:
            problems = _schema_errors(definition.output_schema, result["structuredContent"])
            if problems:
                outcome.error = "structuredContent does not match outputSchema: " + "; ".join(problems)
    return outcome


def shown(value: Any) -> Any:
    """``value`` for reading as JSON: base64 ``data`` and ``blob`` (images, audio, binary
    resources), which the page shows as what they are, shortened to their size."""
    if isinstance(value, list):
        return [shown(item) for item in value]
    if not isinstance(value, dict):
        return value
    return {
        key: f"<{len(item) * 3 // 4} bytes of base64, shown above>"
        if key in ("data", "blob") and isinstance(item, str) and len(item) > 64
        else shown(item)
        for key, item in value.items()
    }


def try_prompt(row: Prompt, arguments: dict[str, Any], principal: str | None = None) -> Outcome:
    if not row.enabled:
        return _disabled("prompt")
    provider = _provider()
    prompt = provider.snapshot().prompt(row.name)
    if prompt is None:
        return Outcome(error="This prompt is not in the registry snapshot (save it first).")
    missing = [a.name for a in prompt.arguments if a.required and a.name not in arguments]
    if missing:
        return Outcome(error=f"Missing required arguments: {', '.join(missing)}")
    if not all(isinstance(v, str) for v in arguments.values()):
        return Outcome(error="Prompt arguments are strings: give every value as a JSON string.")
    ctx, outbound = _context(principal)
    try:
        result = async_to_sync(provider.get_prompt)(prompt, arguments, ctx)
    except MCPError as exc:
        return Outcome(error=f"Protocol error {exc.code}: {exc.message}", notifications=_captured(outbound))
    return Outcome(result=result, notifications=_captured(outbound))


def try_read(uri: str, enabled: bool, principal: str | None = None) -> Outcome:
    if not enabled:
        return _disabled("resource")
    provider = _provider()
    ctx, outbound = _context(principal)
    try:
        contents = async_to_sync(provider.read_resource)(uri, ctx)
    except MCPError as exc:
        return Outcome(error=f"Protocol error {exc.code}: {exc.message}", notifications=_captured(outbound))
    return Outcome(result={"contents": contents}, notifications=_captured(outbound))


def serves_resource(uri: str) -> bool:
    """Whether ``uri`` is a concrete resource of the registry (a row or code): ``resources/read``
    serves those before any template."""
    return uri in _provider().state().resources


def _captured(outbound: NullOutbound) -> list[dict[str, Any]]:
    return [{"method": method, "params": params} for method, params in outbound.notifications]
