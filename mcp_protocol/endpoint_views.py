"""An endpoint's view of a snapshot (``endpoints.py``): what a virtual server serves, cached.

Apart from ``endpoints.py`` because the snapshot type holds the endpoint specs: the specs know
nothing of snapshots, and this module knows both.
"""

from __future__ import annotations

from .definitions import Snapshot
from .endpoints import EndpointSpec, Selection


class _Selected:
    """``select``'s cache: one filtered snapshot per (snapshot version, selection digest)."""

    MAX = 1024

    def __init__(self) -> None:
        self._views: dict[tuple[str, str], Snapshot] = {}

    def get(self, snapshot: Snapshot, selection: Selection) -> Snapshot:
        key = (snapshot.version, selection.digest)
        view = self._views.get(key)
        if view is None:
            if len(self._views) >= self.MAX:
                self._views.clear()  # new snapshots retire old views; a bound keeps it simple
            view = self._views[key] = _filter(snapshot, selection)
        return view


def _filter(snapshot: Snapshot, selection: Selection) -> Snapshot:
    allows = selection.allows
    return Snapshot(
        # Names the selection, so the wire cache and the cursors of two endpoints never mix.
        version=f"{snapshot.version}@{selection.digest}",
        tools=tuple(t for t in snapshot.tools if allows("tools", t.name, t.tags)),
        resources=tuple(r for r in snapshot.resources if allows("resources", r.uri, r.tags)),
        resource_templates=tuple(
            t for t in snapshot.resource_templates if allows("resource_templates", t.uri_template, t.tags)
        ),
        prompts=tuple(p for p in snapshot.prompts if allows("prompts", p.name, p.tags)),
        skills=tuple(s for s in snapshot.skills if allows("skills", s.root, s.tags)),
        endpoints=snapshot.endpoints,
        sources=snapshot.sources,
    )


_selected = _Selected()


def select(snapshot: Snapshot, endpoint: EndpointSpec | None) -> Snapshot:
    """``snapshot`` as ``endpoint`` serves it (the whole snapshot for the catch-all ``None``)."""
    if endpoint is None:
        return snapshot
    return _selected.get(snapshot, endpoint.selection)
