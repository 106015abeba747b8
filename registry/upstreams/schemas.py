"""An upstream tool's schemas in another JSON Schema dialect.

The registry's own tools are JSON Schema 2020-12 (``validators.validate_object_schema``); an
upstream's are the upstream's, served as it wrote them and validated by it when called. The spec
lets a schema name its dialect (2025-11-25 basic/index.mdx "JSON Schema Usage": schemas without
``$schema`` are 2020-12; others MAY be used), and the TypeScript SDK's servers send draft-07. So a
mirrored tool's schema that names a dialect ``jsonschema`` knows (draft-04, -06, -07, 2019-09) is
checked against that dialect's meta-schema, with the same caps as ours (size, depth, an object
schema, the ``x-mcp-header`` rules): a hostile schema is refused either way.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.exceptions import ValidationError
from jsonschema.exceptions import SchemaError
from jsonschema.validators import validator_for

from ..validation.validators import (
    JSON_SCHEMA_2020_12,
    MAX_SCHEMA_BYTES,
    MAX_SCHEMA_DEPTH,
    nests_deeper_than,
    validate_x_mcp_headers,
)


def foreign(schema: Any) -> bool:
    """Whether ``schema`` names a dialect other than 2020-12 (checked here, not by the field)."""
    return isinstance(schema, dict) and schema.get("$schema") not in (None, JSON_SCHEMA_2020_12)


def problem(schema: dict[str, Any], field: str) -> str | None:
    """Why a foreign-dialect schema is refused (None: it is fine)."""
    dialect = schema.get("$schema")
    checker: Any = validator_for(schema, default=None)
    if checker is None:
        return f"{field}: $schema {str(dialect)[:100]!r} is not a JSON Schema dialect this server knows"
    if nests_deeper_than(schema, MAX_SCHEMA_DEPTH):
        return f"{field}: the schema nests objects and arrays more than {MAX_SCHEMA_DEPTH} deep"
    if len(json.dumps(schema, separators=(",", ":")).encode()) > MAX_SCHEMA_BYTES:
        return f"{field}: the schema is over {MAX_SCHEMA_BYTES} bytes"
    if schema.get("type") != "object":
        return f'{field}: the schema must have "type": "object"'
    try:
        checker.check_schema(schema)
        if field == "input_schema":
            validate_x_mcp_headers(schema)
    except SchemaError as exc:
        return f"{field}: not a valid schema of {dialect}: {exc.message}"
    except ValidationError as exc:
        return f"{field}: {' '.join(exc.messages)}"
    return None
