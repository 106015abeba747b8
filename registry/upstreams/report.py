"""``SyncReport``: what a sync did (or, under review, would do), for the admin, the API, the
command and the logs: plain data with a ``to_json()``."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Refused:
    name: str  # the upstream's name, URI or template
    reason: str


@dataclass
class SyncReport:
    upstream: str = ""
    added: list[str] = field(default_factory=list)  # our names (tools, prompts) or URIs / templates
    updated: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    restored: list[str] = field(default_factory=list)
    refused: list[Refused] = field(default_factory=list)
    error: str = ""  # why the upstream could not be listed, or why nothing was applied
    health: str = "unknown"  # Upstream.Health after the sync
    detail: list[str] = field(default_factory=list)  # partial listing, kinds not pruned, and why
    applied: bool = False  # False: a dry run, a review-mode sync stored pending, or an error
    pending: bool = False  # stored for review (apply_pending applies it)

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.missing or self.restored)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)
