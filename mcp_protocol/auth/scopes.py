"""What a grant lets a principal see: a filtered ``Snapshot`` per (snapshot, grant), cached.

The core asks ``view(snapshot)`` for the snapshot of the current principal (``principal.current``)
and serves lists, calls, reads and gets from it, so anything outside the grant is exactly as
unknown as a definition that does not exist: same error code, same message (no existence oracle;
product.md "tools/list shows only what the caller may call"). A full grant returns the snapshot
itself (open mode pays nothing). Views are cached per snapshot version and grant digest, so a
``tools/list`` of a scoped key costs one dict lookup more than an open one; the view's ``version``
names both, so the wire cache and the cursors of two grants never mix.

Skill files (SEP-2640) are granted with their skill: a grant names a skill by its root URI
(``skill://<path>``) among its resources, or by a tag; a nested skill's files are also readable
through a granted enclosing skill, whose supporting files they are.

Resources read through a template (not listed) are granted when the template that serves them is:
``granted_uri`` asks the whole snapshot which template serves the URI (``uri_template``: the one
matcher, and the one rule for overlapping templates, that ``resources/read`` uses too) and then
whether the grant holds that template. Matching against the granted templates alone would let a
key granted ``demo://docs{/name*}`` read ``demo://docs/internal/7``, which
``demo://docs/internal/{id}`` serves.
"""

from __future__ import annotations

from ..definitions import Snapshot
from .principal import Grant, current

MAX_VIEWS = 512


class _Views:
    def __init__(self) -> None:
        self._views: dict[tuple[str, str], Snapshot] = {}

    def get(self, snapshot: Snapshot, grant: Grant) -> Snapshot:
        key = (snapshot.version, grant.digest)
        view = self._views.get(key)
        if view is None:
            if len(self._views) >= MAX_VIEWS:
                self._views.clear()  # new snapshots retire old views; a bound keeps it simple
            view = self._views[key] = _filter(snapshot, grant)
        return view


def _filter(snapshot: Snapshot, grant: Grant) -> Snapshot:
    return Snapshot(
        version=f"{snapshot.version}~{grant.digest}",
        tools=tuple(t for t in snapshot.tools if grant.allows("tools", t.name, t.tags)),
        resources=tuple(r for r in snapshot.resources if grant.allows("resources", r.uri, r.tags)),
        resource_templates=tuple(
            t for t in snapshot.resource_templates if grant.allows("resources", t.uri_template, t.tags)
        ),
        prompts=tuple(p for p in snapshot.prompts if grant.allows("prompts", p.name, p.tags)),
        # SEP-2640: skills are resources; a grant names one by its root URI (skill://<path>).
        skills=tuple(s for s in snapshot.skills if grant.allows("resources", s.root, s.tags)),
        endpoints=snapshot.endpoints,
        sources=snapshot.sources,
    )


_views = _Views()


def view(snapshot: Snapshot, grant: Grant | None = None) -> Snapshot:
    """``snapshot`` as the current principal (or ``grant``) may see it."""
    grant = current().grant if grant is None else grant
    if grant.everything and not grant.tags:
        return snapshot
    return _views.get(snapshot, grant)


def granted_uri(snapshot: Snapshot, full: Snapshot, uri: str) -> bool:
    """May the current principal read ``uri``? ``snapshot`` is its view, ``full`` the whole one."""
    if snapshot is full or snapshot.resource(uri) is not None:
        return True
    if full.resource(uri) is not None:
        return False  # a listed resource outside the grant
    if full.skills and full.skill_index.file(uri) is not None:
        return snapshot.skill_index.file(uri) is not None  # a file of a granted skill
    served = full.serving_template(uri)
    return served is not None and snapshot.resource_template(served[0].uri_template) is not None
