"""``GET /api/v1/registry/export`` and ``POST /api/v1/registry/import?mode=merge|replace&dry_run=1``:
the whole registry as one document (``registry.transfer``, the format of ``export_registry`` /
``import_registry``). Export needs permission to view every kind, skills included (the export
carries their files), virtual servers and upstreams; import needs to view, add, change and delete
the four definition kinds, and the skills' (the virtual servers', the upstreams') too when the
document has a ``skills`` (``servers``, ``upstreams``) section (it creates, rewrites and, with
``replace``, deletes them; a document without one leaves them alone,
``registry/skills/transfer.py``, ``registry/transfer/documents.py``)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import permissions, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from registry.skills import transfer as skill_transfer
from registry.transfer import documents as transfer

from .authors import AuthoredMixin

MODELS = ("tool", "resource", "resourcetemplate", "prompt")
SKILLS = "skill"  # the model of the document's "skills" section (registry.skill_transfer.SECTION)
SERVERS = "virtualserver"  # the model of its "servers" section (issue 39)
UPSTREAMS = "upstream"  # the model of its "upstreams" section (issue 40)
WRITE = ("add", "change", "delete", "view")
EXAMPLE = {"tools": [{"name": "greet", "kind": "template", "template_text": "Hello {{ who }}",
                      "input_schema": {"type": "object", "properties": {"who": {"type": "string"}}}}],
           "resources": [], "resource_templates": [], "prompts": []}


class CanExport(permissions.BasePermission):
    def has_permission(self, request: Request, view: Any) -> bool:
        kinds = (*MODELS, SKILLS, SERVERS, UPSTREAMS)
        return bool(request.user.has_perms([f"registry.view_{m}" for m in kinds]))


class CanImport(permissions.BasePermission):
    """Like the admin and the skills endpoint: writing skills needs the skill permissions
    (issue 37 item 5: an import was a way round them)."""

    def has_permission(self, request: Request, view: Any) -> bool:
        models = [*MODELS]
        models += [SKILLS] if _has_section(request, skill_transfer.SECTION) else []
        models += [SERVERS] if _has_section(request, "servers") else []
        models += [UPSTREAMS] if _has_section(request, "upstreams") else []
        return bool(request.user.has_perms([f"registry.{action}_{m}" for m in models for action in WRITE]))


def _has_section(request: Request, section: str) -> bool:
    # Read after IsAdminUser passed (DRF checks the classes in order), so only staff get the body
    # parsed here; a body that is no object is the import's own 400.
    document = request.data
    return isinstance(document, dict) and section in document


class ImportQuery(serializers.Serializer):
    mode = serializers.ChoiceField(choices=transfer.MODES, default="merge")
    dry_run = serializers.BooleanField(default=False)


class ExportView(APIView):
    permission_classes = [permissions.IsAdminUser, CanExport]

    @extend_schema(summary="Export the whole registry as one document",
                   description="Every tool, resource, resource template, prompt, skill and virtual "
                   "server as one JSON document, the format `POST registry/import` and "
                   "`manage.py import_registry` read.",
                   responses={200: OpenApiTypes.OBJECT, 401: OpenApiTypes.OBJECT, 403: OpenApiTypes.OBJECT},
                   examples=[OpenApiExample("A registry", value=EXAMPLE, response_only=True)])
    def get(self, request: Request) -> Response:
        return Response(transfer.export_document())


class ImportView(AuthoredMixin, APIView):
    permission_classes = [permissions.IsAdminUser, CanImport]

    @extend_schema(
        summary="Import a registry document atomically (merge, or replace everything)",
        description="Import a document as `registry/export` writes it, in one transaction: every item "
        "is validated as the admin validates it, and any error refuses the whole import (400, each "
        "error with its JSON pointer). `?dry_run=1` reports what would change without writing.",
        parameters=[
            OpenApiParameter("mode", str, enum=list(transfer.MODES), default="merge",
                             description="merge: create and update the document's items; replace: "
                             "also delete every definition the document does not name."),
            OpenApiParameter("dry_run", bool, default=False,
                             description="Report what would change, with each item's field-by-field diff "
                             "(sections' \"diff\": {key: [{path, before, after}]}); write nothing."),
        ],
        request=OpenApiTypes.OBJECT,
        responses={200: OpenApiTypes.OBJECT, 400: OpenApiTypes.OBJECT, 401: OpenApiTypes.OBJECT,
                   403: OpenApiTypes.OBJECT},
        examples=[
            OpenApiExample("A registry", value=EXAMPLE, request_only=True),
            OpenApiExample("Applied", response_only=True, status_codes=["200"], value={
                "mode": "merge", "dry_run": False, "changed": 1,
                "tools": {"created": ["greet"], "updated": [], "deleted": [], "unchanged": 0}}),
            OpenApiExample("Refused", response_only=True, status_codes=["400"], value={"errors": [
                {"path": "/tools/0/input_schema", "message": "The schema must be a JSON object."}]}),
        ],
    )
    def post(self, request: Request) -> Response:
        query = ImportQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        outcome = transfer.import_document(request.data, **query.validated_data)
        return Response(outcome.as_json(), status=400 if outcome.errors else 200)
