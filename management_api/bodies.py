"""What a request body may hold: the serializer's fields, under their names or under the MCP wire
names of the same values (``inputSchema`` for ``input_schema``); any other member is a 400 that
names it, so a typo or a field of another kind is never stored as nothing.

Before this, DRF dropped unknown members: POSTing a tool with MCP's own ``inputSchema`` answered
201 and stored the default, empty schema. A read-only field sent back (``id``, ``version`` of a
GET-modify-PUT round trip) is still ignored, as DRF ignores it: it is a field, only not writable.

``StrictBodyMixin`` is mixed into every serializer that reads a body (nested ones too: a prompt's
arguments and messages, a skill's files), before ``serializers.Serializer`` in the bases.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from rest_framework import serializers

# MCP's names (2025-11-25 schema: Tool, Resource, ResourceTemplate, BaseMetadata) of values these
# serializers name in snake case. Each applies where the serializer has its target field.
WIRE_NAMES = {
    "inputSchema": "input_schema",
    "outputSchema": "output_schema",
    "mimeType": "mime_type",
    "uriTemplate": "uri_template",
    "_meta": "meta",
}
# Sent by the browsable API's HTML forms along with the fields; never a field.
FORM_ONLY = frozenset({"csrfmiddlewaretoken"})


def unknown_field(name: str, fields: list[str]) -> str:
    near = difflib.get_close_matches(name, fields, n=1)
    hint = f" Did you mean {near[0]!r}?" if near else ""
    return f"Unknown field {name!r}.{hint} The fields are: {', '.join(fields)}."


def aliases_of(serializer: type[serializers.Serializer]) -> str:
    """The MCP names a serializer accepts, for its documentation: "`inputSchema` (`input_schema`)"."""
    fields = serializer().fields
    return ", ".join(
        f"`{wire}` (`{name}`)"
        for wire, name in WIRE_NAMES.items()
        if name in fields and not fields[name].read_only
    )


class StrictBodyMixin:
    """Refuse members that are no field; accept the MCP wire names of fields as aliases."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, Mapping):
            data = self._check_members(data)
        return super().to_internal_value(data)  # type: ignore[misc]

    def _check_members(self, data: Mapping[str, Any]) -> Mapping[str, Any]:
        fields = self.fields  # type: ignore[attr-defined]
        writable = [name for name, field in fields.items() if not field.read_only]
        errors: dict[str, list[str]] = {}
        renamed: dict[str, str] = {}
        for key in data:
            target = WIRE_NAMES.get(key)
            if target is not None and target in writable:
                if target in data:
                    errors[key] = [f"{key!r} is the MCP name of {target!r}; send one of them, not both."]
                renamed[key] = target
            elif key not in fields and key not in FORM_ONLY:
                errors[key] = [unknown_field(key, writable)]
        if errors:
            raise serializers.ValidationError(errors)
        if not renamed:
            return data
        if hasattr(data, "getlist"):  # a QueryDict (a form post): keep its lists
            copy = data.copy()  # type: ignore[attr-defined]
            for key, target in renamed.items():
                copy.setlist(target, copy.getlist(key))
                del copy[key]
            return copy  # type: ignore[no-any-return]
        return {renamed.get(key, key): value for key, value in data.items()}
