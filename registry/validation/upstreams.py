"""Which fields of a row mirrored from an upstream are the operator's (issue 40 item 2):
``OVERRIDABLE`` (enabled, name, title, description, annotations, tags); the others are what the
upstream said, changed only by syncing. An edit of an overridable field is recorded in
``upstream_overrides`` so a sync keeps it (the REST API's serializers, the admin). The rules of an
upstream's own configuration are ``kinds/http_client/upstream_rules.py``'s.
"""

from __future__ import annotations

from typing import Any

# The fields of a mirrored row the operator may change (issue 40 item 2).
OVERRIDABLE = ("enabled", "name", "title", "description", "annotations", "tags")
# Fields of a mirrored row that are neither the upstream's nor the operator's to edit: the mirror's
# own bookkeeping and the row's timestamps/version.
MIRROR_FIELDS = ("upstream", "upstream_name", "upstream_definition", "upstream_overrides", "upstream_missing")




def is_mirrored(row: Any) -> bool:
    return getattr(row, "upstream_id", None) is not None


def owned_changes(row: Any, values: dict[str, Any]) -> list[str]:
    """The fields of ``values`` that would change an upstream-owned field of mirrored ``row``."""
    if not is_mirrored(row):
        return []
    return sorted(name for name, value in values.items()
                  if name not in OVERRIDABLE and getattr(row, name, value) != value)


def record_overrides(row: Any, values: dict[str, Any]) -> None:
    """Mark the overridable fields ``values`` changes as the operator's (kept over the upstream's)."""
    if not is_mirrored(row):
        return
    changed = [name for name in OVERRIDABLE if name in values and getattr(row, name) != values[name]]
    row.upstream_overrides = sorted(set(row.upstream_overrides or []) | set(changed))
