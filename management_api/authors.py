"""Who writes through the REST API, for the registry's change sets and history
(``registry.changes.authorship``): ``token:<name>`` for a management API token (its user kept too), else
the signed-in user; the source is ``api``. One request is one change set (its writes are one
transaction: ``versioning.py``, ``transfer.py``).
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

from rest_framework.request import Request
from rest_framework.response import Response

from registry.changes.authorship import Author, authored, of_user

from .tokens import ManagementToken


def author_of(request: Request) -> Author:
    if isinstance(request.auth, ManagementToken):
        return Author(source="api", actor=f"token:{request.auth.name}", user_id=request.user.pk)
    return of_user(request.user, "api")


class AuthoredMixin:
    """For API views that write registry rows: the request's author is set once it is
    authenticated (``initial``) and until its response is finished."""

    _authored: AbstractContextManager[Author] | None

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)  # type: ignore[misc]
        self._authored = authored(author_of(request))
        self._authored.__enter__()

    def finalize_response(self, request: Request, response: Response, *args: Any, **kwargs: Any) -> Response:
        done = getattr(self, "_authored", None)
        if done is not None:
            self._authored = None
            done.__exit__(None, None, None)
        return super().finalize_response(request, response, *args, **kwargs)  # type: ignore[misc]
