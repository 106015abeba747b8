"""``/api/v1/history/``: the registry's change sets and every definition's versions, their diffs,
and reverts (``registry/history/versions.py``).

- ``GET history/``: change sets, newest first (cursor pagination);
  ``GET history/<id>/``: one, with each definition it changed and the field-by-field diff.
- ``POST history/<id>/revert``: undo the change set, every row in one transaction; 409 with
  ``conflicts`` (kind, id, key, reason) and nothing written if any row changed since.
- ``GET history/<kind>/<pk>/``: the versions of one definition, deleted ones included, each with
  its author (the change set's ``actor`` and ``source``) (cursor);
  ``GET history/<kind>/<pk>/<version>/``: its state, and its diff against the version before
  (or ``?against=<version>``).
- ``POST history/<kind>/<pk>/<version>/revert``: make the row what it was at that version, as a
  new version; ``If-Match`` (the ETag the caller saw) → 412 if it moved on; a deleted row is
  restored with its id. The answer is the row as the definition endpoints give it, with its ETag.

A revert is an ordinary edit: its own change set (by this request's author, ``note`` naming what
it reverts), published on commit, so every worker's clients get ``list_changed``. Reading needs a
staff user with ``registry.view_changeset``; a revert needs add, change and delete on every kind
it may touch.
"""

from __future__ import annotations

from typing import Any

from django.http import Http404
from django.utils.http import quote_etag
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import generics, permissions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from registry.history import versions
from registry.models import ChangeSet

from .authors import AuthoredMixin
from .errors import PreconditionFailed
from .pagination import DefinitionCursorPagination
from .serializers import PromptSerializer, ResourceSerializer, ResourceTemplateSerializer, ToolSerializer
from .servers import VirtualServerSerializer
from .skills import SkillSerializer
from .versioning import if_match_tags
from .views import COMMON, ERRORS, IF_MATCH


def answers(body: Any, *codes: int) -> dict[int, Any]:
    """The documented answers of a route (401, 403 and 429 on every one)."""
    return {code: (body if code < 300 else ERRORS[code]) for code in (*codes, *COMMON)}


KIND = OpenApiParameter(
    "kind", str, OpenApiParameter.PATH, enum=list(versions.DEFINITIONS)
)
CONFLICTS = OpenApiResponse(
    OpenApiTypes.OBJECT,
    "Nothing was reverted: the rows that changed since, or no longer validate",
    [
        OpenApiExample(
            "Conflicts",
            value={
                "detail": "Nothing was reverted: rows of this change set conflict.",
                "conflicts": [
                    {"kind": "tools", "id": 3, "key": "greet", "reason": "changed since, by change set 9"}
                ],
            },
        )
    ],
)

SERIALIZERS: dict[str, type[serializers.ModelSerializer]] = {
    "tools": ToolSerializer,
    "resources": ResourceSerializer,
    "resource-templates": ResourceTemplateSerializer,
    "prompts": PromptSerializer,
    "skills": SkillSerializer,
    "servers": VirtualServerSerializer,
}
PREFETCH = {"prompts": ("arguments", "messages"), "skills": ("files",)}


class CanReadHistory(permissions.BasePermission):
    def has_permission(self, request: Request, view: Any) -> bool:
        return bool(
            request.user and request.user.is_staff and request.user.has_perm("registry.view_changeset")
        )


class CanReadKindHistory(CanReadHistory):
    """One definition's versions carry its past states (skill files, http tool headers): the view
    permission on its kind as well as on change sets, as the kind's own routes ask (issue 37's
    habit: no route round a kind's permissions). An unknown kind is left to the view's 404."""

    def has_permission(self, request: Request, view: Any) -> bool:
        model = versions.DEFINITIONS.get(view.kwargs.get("kind", ""))
        allowed = super().has_permission(request, view)
        return allowed and (model is None or versions.may_read(request.user, model))


class CanRevert(CanReadHistory):
    def has_permission(self, request: Request, view: Any) -> bool:
        kinds = [view.kwargs["kind"]] if "kind" in view.kwargs else list(versions.DEFINITIONS)
        needed = [
            f"registry.{action}_{versions.DEFINITIONS[kind]._meta.model_name}"
            for kind in kinds
            if kind in versions.DEFINITIONS
            for action in ("add", "change", "delete")
        ]
        return super().has_permission(request, view) and request.user.has_perms(needed)


class ChangeSetPagination(DefinitionCursorPagination):
    ordering = "-id"


class VersionPagination(ChangeSetPagination):
    ordering = "-history_id"


class ChangeSetSerializer(serializers.ModelSerializer):
    class Meta:
        model = ChangeSet
        fields = ("id", "created_at", "source", "actor", "note", "kinds", "uris")


def version_entry(kind: str, record: Any) -> dict[str, Any]:
    return {
        "version": record.history_id,  # the id of this version (the row's ETag is its "etag")
        "etag": quote_etag(str(record.version)),
        "type": {"+": "created", "~": "changed", "-": "deleted"}[record.history_type],
        "at": record.history_date,
        "changeset": record.changeset_id,
        # Who and from where, so a list of versions answers "who changed this" without opening
        # each change set (issue 37); "system" for a version written before change sets.
        "actor": record.changeset.actor if record.changeset_id else "system",
        "source": record.changeset.source if record.changeset_id else None,
        "kind": kind,
        "id": record.id,
        "key": versions.key_of(record.instance_type, record),
    }


def definition_model(kind: str) -> Any:
    model = versions.DEFINITIONS.get(kind)
    if model is None:
        raise Http404(f"No kind {kind!r}: one of {', '.join(versions.DEFINITIONS)}")
    return model


@extend_schema(
    summary="List the registry's change sets, newest first",
    description="Every change of the registry (an admin save, an API write, an import, a revert) "
    "is one change set: when, by whom, from where, and which lists and resources it changed. "
    "Newest first, a page at a time with `count` and cursor links.",
    responses=answers(ChangeSetSerializer(many=True), 200, 404),
)
class ChangeSetList(generics.ListAPIView):
    permission_classes = [CanReadHistory]
    queryset = ChangeSet.objects.all()
    serializer_class = ChangeSetSerializer
    pagination_class = ChangeSetPagination


class ChangeSetDetail(APIView):
    permission_classes = [CanReadHistory]

    @extend_schema(
        operation_id="history_changeset_retrieve",
        summary="One change set, with the diff of every definition it changed",
        description="One change set and, for each definition it changed, the field-by-field diff "
        "between its state before and after.",
        responses=answers(OpenApiTypes.OBJECT, 200, 404),
    )
    def get(self, request: Request, changeset: int) -> Response:
        row = ChangeSet.objects.filter(pk=changeset).first()
        if row is None:
            raise Http404("No such change set")
        changes = []
        touched = versions.touched(changeset)
        readable = [(m, pk) for m, pk in touched if versions.may_read(request.user, m)]
        for model, object_id in readable:
            kind = versions.kind_of(model)
            before = versions.state_at(model, object_id, changeset - 1)
            after = versions.state_at(model, object_id, changeset)
            latest = versions.versions(model, object_id).first()
            changes.append(
                {
                    "kind": kind,
                    "id": object_id,
                    "key": versions.key_of(model, latest),
                    "diff": versions.diff(before, after),
                }
            )
        # The definitions of kinds the caller may not read are counted, not shown.
        withheld = len(touched) - len(readable)
        return Response({**ChangeSetSerializer(row).data, "changes": changes, "withheld": withheld})


class ChangeSetRevert(AuthoredMixin, APIView):
    permission_classes = [CanRevert]

    @extend_schema(
        operation_id="history_changeset_revert",
        summary="Revert a change set: every row of it in one transaction, or nothing",
        description="Undo a change set as a new change set. If any of its rows changed since, or "
        "would no longer validate, nothing is written: 409 lists the conflicts.",
        request=None,
        responses={**answers(OpenApiTypes.OBJECT, 200, 404), 409: CONFLICTS},
    )
    def post(self, request: Request, changeset: int) -> Response:
        try:
            reverted = versions.revert_changeset(changeset)
        except LookupError as exc:
            raise Http404(str(exc)) from None
        except versions.RevertRefused as exc:
            return Response(
                {
                    "detail": "Nothing was reverted: rows of this change set conflict.",
                    "conflicts": [c.as_dict() for c in exc.conflicts],
                },
                status=status.HTTP_409_CONFLICT,
            )
        return Response({"reverted": [{"kind": k, "id": i} for k, i in reverted]})


@extend_schema(
    summary="The versions of one definition, newest first (deleted ones included)",
    description="Every version of one tool, resource, resource template, prompt, skill or virtual "
    "server, deleted ones included: its version id, ETag, change set, author (`actor`, `source`) "
    "and whether it was a creation, change or deletion.",
    parameters=[KIND],
    responses=answers(OpenApiTypes.OBJECT, 200, 404),
)
class VersionList(generics.ListAPIView):
    permission_classes = [CanReadKindHistory]
    pagination_class = VersionPagination

    def get_queryset(self) -> Any:
        model = definition_model(self.kwargs["kind"])
        return versions.versions(model, self.kwargs["pk"]).select_related("changeset")

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        page = self.paginate_queryset(self.get_queryset())
        kind = self.kwargs["kind"]
        return self.get_paginated_response([version_entry(kind, r) for r in page or []])


class VersionDetail(APIView):
    permission_classes = [CanReadKindHistory]

    @extend_schema(
        operation_id="history_version_retrieve",
        summary="One version: its state and its diff against the one before (or ?against=)",
        description="The state of a definition at one version, and its diff against the version "
        "before it, or against the version `?against=` names.",
        parameters=[KIND, OpenApiParameter("against", int, description="Another version of the same row.")],
        responses=answers(OpenApiTypes.OBJECT, 200, 404),
    )
    def get(self, request: Request, kind: str, pk: int, version: int) -> Response:
        model = definition_model(kind)
        record = versions.versions(model, pk).filter(history_id=version).first()
        if record is None:
            raise Http404("No such version")
        against = request.query_params.get("against")
        if against is not None:
            other = (
                versions.versions(model, pk)
                .filter(history_id=int(against) if against.isdigit() else -1)
                .first()
            )
            if other is None:
                raise Http404("No such version to compare with")
        else:
            other = versions.previous(record)
        after = versions.state(record)
        return Response(
            {
                **version_entry(kind, record),
                "state": after,
                "against": None if other is None else other.history_id,
                "diff": versions.diff(None if other is None else versions.state(other), after),
            }
        )


class VersionRevert(AuthoredMixin, APIView):
    permission_classes = [CanRevert]

    @extend_schema(
        operation_id="history_version_revert",
        summary="Make a definition what it was at a version (a new version; a deleted row is restored)",
        description="Make a definition what it was at a version, as a new version (a deleted one is "
        'restored with its id). With `If-Match: "<version>"`, only if it is still at that version '
        "(else 412); an unquoted tag is a 400.",
        parameters=[KIND, IF_MATCH],
        request=None,
        responses={**answers(OpenApiTypes.OBJECT, 200, 204, 400, 404, 412), 409: CONFLICTS},
    )
    def post(self, request: Request, kind: str, pk: int, version: int) -> Response:
        model = definition_model(kind)
        header = request.headers.get("If-Match")
        try:
            tags = None if header is None else if_match_tags(header)
            row = versions.revert_object(model, pk, version, tags)
        except LookupError as exc:
            raise Http404(str(exc)) from None
        except versions.PreconditionFailed as exc:
            raise PreconditionFailed(
                f"If-Match {header!r} does not name the current version: {exc}."
            ) from None
        except versions.RevertRefused as exc:
            return Response(
                {"detail": "Not reverted.", "conflicts": [c.as_dict() for c in exc.conflicts]},
                status=status.HTTP_409_CONFLICT,
            )
        if row is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        if kind in PREFETCH:
            row = model.objects.prefetch_related(*PREFETCH[kind]).get(pk=row.pk)
        serializer = SERIALIZERS.get(kind)
        # A kind without a serializer here (none today): its stored state.
        data = (serializer(row, context={"request": request}).data if serializer is not None
                else {"id": row.pk, **(versions.state_at(model, row.pk) or {})})
        return Response(data, headers={"ETag": quote_etag(str(row.version))})
