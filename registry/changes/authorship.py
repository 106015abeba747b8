"""Who is changing the registry, and from where: the author a change set is opened with.

The admin, the REST API and the import path say it around their writes with ``authored(...)``
(a context variable, so it follows the request's thread or task and nothing else); a write with
no author said is ``system`` from a ``shell``, and management commands that write say
``command``. Read once per change set, when it opens (``publish.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Author:
    source: str = "shell"  # ChangeSet.Source
    actor: str = "system"  # user:<name>, token:<name> or system
    user_id: int | None = None
    note: str = ""  # what the change is, when it is more than an edit: "revert of change set 12"


NOBODY = Author()
_current: ContextVar[Author | None] = ContextVar("registry_author", default=None)


def current() -> Author:
    return _current.get() or NOBODY


def of_user(user: Any, source: str) -> Author:
    """A Django user (the admin; the API's session or token user) as the author."""
    if user is None or not getattr(user, "is_authenticated", False):
        return Author(source=source)
    return Author(source=source, actor=f"user:{user.get_username()}", user_id=user.pk)


@contextmanager
def authored(author: Author) -> Iterator[Author]:
    token = _current.set(author)
    try:
        yield author
    finally:
        _current.reset(token)
