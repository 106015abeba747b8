"""ETag and ``If-Match`` on the definition endpoints (RFC 9110 §8.8.3, §13.1.1).

The ETag of a definition is its ``version`` (``registry.models.concurrency``), a strong validator:
``"7"``. GET, and every successful write, return it. A PUT, PATCH or DELETE with ``If-Match`` that
names no current version gets 412 and changes nothing, so two automation writers never silently
overwrite each other; ``If-Match: *`` matches any existing row. A write without ``If-Match`` is
accepted (last writer wins, as in the admin before the guard) — unless another writer commits
between this request's read and its save, which the model's version guard turns into a 409.

The forms of ``If-Match``, decided here once (``history.py`` reads the header through
``if_match_tags`` too):

- ``"3"``, ``"3", "4"``, ``*``: the syntax of RFC 9110 §13.1.1, compared as it says.
- ``W/"3"``: valid syntax, but If-Match compares strongly, so a weak tag never matches: 412, whose
  message says so and names the tag to send.
- ``3`` (unquoted, as people type it after reading ``ETag: "3"``): no entity tag at all. Taking it
  as ``"3"`` would guess; a 400 that shows the quoted form teaches the header instead, before
  anything is compared or written.
"""

from __future__ import annotations

import re
from typing import Any

from django.db import IntegrityError, models, transaction
from django.utils.http import quote_etag
from rest_framework.request import Request
from rest_framework.response import Response

from registry.models.concurrency import VersionConflict

from .errors import BadPrecondition, Conflict, PreconditionFailed

ENTITY_TAG = re.compile(r'(?:W/)?"[^"]*"')  # RFC 9110 §8.8.3 (Django's parse_etags drops the rest)


def etag_of(instance: models.Model) -> str:
    return quote_etag(str(instance.version))


def if_match_tags(header: str) -> list[str]:
    """The entity tags of an ``If-Match`` header, or ``["*"]``; 400 for anything else."""
    if header.strip() == "*":
        return ["*"]
    tags = [piece.strip() for piece in header.split(",")]
    wrong = next((tag for tag in tags if not ENTITY_TAG.fullmatch(tag)), None)
    if wrong is not None:
        quoted = quote_etag(wrong.strip('"').removeprefix("W/").strip('"'))
        raise BadPrecondition(
            f"If-Match takes the ETag as the server sent it, in double quotes: If-Match: {quoted} "
            f"(not {wrong}), or a comma-separated list of such tags, or *."
        )
    return tags


def check_if_match(request: Request, instance: models.Model) -> bool:
    """Raise 412 unless ``If-Match`` is absent or names the current version (400 if it is no
    entity tag). Returns whether the request carried ``If-Match``."""
    header = request.headers.get("If-Match")
    if header is None:
        return False
    tags = if_match_tags(header)
    current = etag_of(instance)
    # RFC 9110 §13.1.1: strong comparison, so a weak tag (W/"7") never matches.
    if "*" in tags or current in tags:
        return True
    weak = " If-Match compares strongly (RFC 9110 §13.1.1): a weak W/ tag never matches." if any(
        tag.startswith("W/") for tag in tags) else ""
    raise PreconditionFailed(f"If-Match {header!r} does not name the current version ({current}).{weak}")


class VersionedViewSetMixin:
    """For ``ModelViewSet``s of ``Versioned`` models. (Every operation of theirs is described in
    ``extend_schema``: drf-spectacular would otherwise show this docstring as its description.)"""

    # The serializer's name of the row's ``version`` (a virtual server's ``version`` is the
    # serverInfo.version clients see; its counter is ``revision``).
    etag_field = "version"

    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        response: Response = super().retrieve(request, *args, **kwargs)  # type: ignore[misc]
        response["ETag"] = quote_etag(str(response.data[self.etag_field]))
        return response

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        try:
            with transaction.atomic():
                response: Response = super().create(request, *args, **kwargs)  # type: ignore[misc]
        except IntegrityError:
            raise self._taken() from None
        response["ETag"] = quote_etag(str(response.data[self.etag_field]))
        return response

    def update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        # The precondition before the body (RFC 9110 §13.2.2): a stale writer hears 412, not
        # the validation errors of an edit it should not make.
        try:
            with transaction.atomic():
                instance = self.get_object()  # type: ignore[attr-defined]
                check_if_match(request, instance)
                serializer = self.get_serializer(  # type: ignore[attr-defined]
                    instance, data=request.data, partial=kwargs.get("partial", False))
                serializer.is_valid(raise_exception=True)
                serializer.save()
        except VersionConflict as exc:
            raise self._conflict(request, exc) from None
        except IntegrityError:
            raise self._taken() from None
        return Response(serializer.data, headers={"ETag": etag_of(serializer.instance)})

    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        with transaction.atomic():
            # Locked (PostgreSQL) so no save lands between the check and the delete.
            instance = self.get_object()  # type: ignore[attr-defined]
            locked = type(instance)._default_manager.select_for_update().filter(pk=instance.pk).first()
            check_if_match(request, locked or instance)
            (locked or instance).delete()
        return Response(status=204)

    @staticmethod
    def _taken() -> Exception:
        # The uniqueness checks passed, then another writer committed the same name or URI first.
        return Conflict("Another writer committed a definition with the same name or URI first; retry.")

    @staticmethod
    def _conflict(request: Request, exc: VersionConflict) -> Exception:
        if request.headers.get("If-Match") is not None:
            return PreconditionFailed(f"Another writer committed first: {exc}.")
        return Conflict(f"Another writer committed first: {exc}.")
