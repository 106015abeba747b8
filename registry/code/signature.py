"""A Python function's signature and docstring, read as MCP: schemas, descriptions, arguments.

``read(func)`` gives a ``Signature``:

- ``input_schema``: a JSON Schema 2020-12 object built by pydantic from the typed parameters (the
  ``Context`` parameter left out); a parameter without a default is required; its description
  comes from the docstring's ``Args:`` section (Google style: ``name: text`` or
  ``name (type): text``).
- ``output_schema``: from the return annotation when it describes data (a ``TypedDict`` from
  ``typing_extensions`` on Python 3.11, a dataclass, a pydantic model, ``dict``, ``list``, a
  number...). server/tools.mdx "Output Schema" requires an object schema, so anything else is
  wrapped as ``{"result": ...}``, as the official SDK does. ``str``, ``None`` or no annotation:
  no output schema (the result is text or content blocks).
- ``description``: the docstring up to its ``Args:``/``Returns:`` sections.

``bind`` turns the arguments a client sent (already validated against ``input_schema`` by the
protocol core) into keyword arguments of the declared types (a dataclass parameter gets a
dataclass); ``tool_result`` turns a return value into a ``CallToolResult``.
"""

from __future__ import annotations

import inspect
import json
import re
import typing
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model

from mcp_protocol.context import Context
from mcp_protocol.errors import ToolError

from ..serving.results import text_block, tool_result

SECTION = re.compile(r"^(Args|Arguments|Parameters|Params|Returns?|Raises|Yields|Examples?|Notes?):\s*$")
ARG_LINE = re.compile(r"^(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")
NO_OUTPUT = (str, type(None), Any, inspect.Signature.empty)


@dataclass(frozen=True)
class Param:
    name: str
    description: str | None
    required: bool


@dataclass(frozen=True)
class Signature:
    description: str | None
    params: tuple[Param, ...]
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    context_param: str | None
    model: type[BaseModel]
    output: TypeAdapter[Any] | None
    wrapped: bool

    def bind(
        self, arguments: dict[str, Any], ctx: Context | None, error: type[Exception] = ToolError
    ) -> dict[str, Any]:
        """Keyword arguments for the function; ``error`` (a tool error by default) when the values
        do not convert to the declared types."""
        try:
            parsed = self.model.model_validate(arguments)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            raise error(f"Invalid arguments: {problems}") from None
        values = {name: getattr(parsed, name) for name in type(parsed).model_fields}
        if self.context_param:
            values[self.context_param] = ctx
        return values

    def tool_result(self, value: Any) -> dict[str, Any]:
        if self.output is not None:
            data = self.output.dump_python(value, mode="json")
            structured = {"result": data} if self.wrapped else data
            # server/tools.mdx "Structured Content": also serialized in a TextContent block.
            return {
                "content": [text_block(json.dumps(data, ensure_ascii=False))],
                "structuredContent": structured,
            }
        if isinstance(value, str | list) or (
            isinstance(value, dict) and ("content" in value or "structuredContent" in value)
        ):
            return tool_result(value)
        if value is None:
            return {"content": []}
        return {"content": [text_block(json.dumps(value, ensure_ascii=False, default=str))]}


def split_docstring(func: Any) -> tuple[str | None, dict[str, str]]:
    """The description and the per-parameter texts of a Google-style docstring."""
    doc = inspect.getdoc(func)
    if not doc:
        return None, {}
    description: list[str] = []
    params: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    arg_indent = -1  # indentation of the "name: text" lines; deeper lines continue the text
    for line in doc.splitlines():
        stripped, indent = line.strip(), len(line) - len(line.lstrip())
        heading = SECTION.match(stripped) if indent == 0 else None
        if heading:
            section, current, arg_indent = heading.group(1), None, -1
        elif section is None:
            description.append(line)
        elif section in ("Args", "Arguments", "Parameters", "Params") and stripped:
            match = ARG_LINE.match(stripped)
            if match and (arg_indent < 0 or indent <= arg_indent):
                current, arg_indent = match.group(1).lstrip("*"), indent
                params[current] = match.group(3).strip()
            elif current is not None:
                params[current] = f"{params[current]} {stripped}".strip()
    text = "\n".join(description).strip()
    return text or None, params


def _is_context(name: str, annotation: Any) -> bool:
    if annotation is inspect.Parameter.empty:
        return name in ("ctx", "context")
    return isinstance(annotation, type) and issubclass(annotation, Context)


def read(func: Any) -> Signature:
    """The MCP view of ``func`` (raises ``TypeError`` for what cannot be described)."""
    hints = typing.get_type_hints(func, include_extras=True)
    description, texts = split_docstring(func)
    fields: dict[str, Any] = {}
    params: list[Param] = []
    context_param: str | None = None
    for name, parameter in inspect.signature(func).parameters.items():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            raise TypeError(f"{func.__qualname__}: *args and **kwargs cannot be described as MCP arguments")
        annotation = hints.get(name, parameter.annotation)
        if _is_context(name, annotation):
            context_param = name
            continue
        required = parameter.default is inspect.Parameter.empty
        kind = Any if annotation is inspect.Parameter.empty else annotation
        default = ... if required else parameter.default
        fields[name] = (kind, Field(default, description=texts.get(name)))
        params.append(Param(name, texts.get(name), required))
    # Unknown arguments are dropped, not refused: clients add their own (the SDK does the same).
    model = create_model(f"{func.__name__}_arguments", __config__=ConfigDict(extra="ignore"), **fields)
    schema = model.model_json_schema()
    schema.pop("title", None)
    returns = hints.get("return", inspect.Signature.empty)
    output, output_schema, wrapped = None, None, False
    if returns not in NO_OUTPUT:
        output = TypeAdapter(returns)
        output_schema = output.json_schema(mode="serialization")
        if output_schema.get("type") != "object":
            defs = output_schema.pop("$defs", None)
            output_schema = {
                "type": "object",
                "properties": {"result": output_schema},
                "required": ["result"],
            }
            if defs:
                output_schema["$defs"] = defs
            wrapped = True
        output_schema.pop("title", None)
    return Signature(description, tuple(params), schema, output_schema, context_param, model, output, wrapped)
