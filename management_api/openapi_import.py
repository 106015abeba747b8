"""``POST /api/v1/registry/openapi``: an OpenAPI 3.0/3.1 document as http tools
(``registry.transfer.openapi``, as ``manage.py import_openapi`` and the admin upload). The body names the
document (a JSON object, or its JSON/YAML text), the import's ``source`` and its options; the
answer is the plan (``dry_run``) or what was done. Needs permission to add, change, delete and view
tools (``prune`` deletes)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import permissions, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from registry.transfer.openapi.document import InvalidDocument, load
from registry.transfer.openapi.importer import Options, Rules, run

from .bodies import StrictBodyMixin


class CanImportTools(permissions.BasePermission):
    def has_permission(self, request: Request, view: Any) -> bool:
        actions = ("add", "change", "delete", "view")
        return bool(request.user.has_perms([f"registry.{a}_tool" for a in actions]))


def names() -> serializers.ListField:
    return serializers.ListField(child=serializers.CharField(max_length=200), required=False, default=list)


class OpenApiImportRequest(StrictBodyMixin, serializers.Serializer):
    document = serializers.JSONField(help_text="The OpenAPI document: an object, or its JSON or YAML text.")
    source = serializers.RegexField(r"^[A-Za-z0-9_.:-]{1,128}$", help_text="This import's name.")
    base_url = serializers.URLField(required=False, default="", allow_blank=True)
    prefix = serializers.RegexField(r"^[A-Za-z0-9_.-]{0,64}$", required=False, default="", allow_blank=True)
    include_tags = names()
    exclude_tags = names()
    include_paths = names()
    exclude_paths = names()
    methods = names()
    tags = names()
    timeout = serializers.FloatField(min_value=0.1, max_value=300.0, required=False, default=10.0)
    secret_header = serializers.CharField(max_length=128, required=False, default="", allow_blank=True)
    secret_env = serializers.CharField(max_length=128, required=False, default="", allow_blank=True)
    disabled = serializers.BooleanField(required=False, default=False)
    dry_run = serializers.BooleanField(required=False, default=False)
    prune = serializers.BooleanField(required=False, default=False)


class OpenApiImportView(APIView):
    permission_classes = [permissions.IsAdminUser, CanImportTools]

    @extend_schema(
        summary="Import an OpenAPI 3.0/3.1 document as http tools",
        description="One http tool per operation of the document (filtered by tags, paths and "
        "methods), named after its operationId. Importing the same `source` again updates its "
        "tools; `prune` deletes the ones the document no longer has; `dry_run` only plans.",
        request=OpenApiImportRequest,
        responses={200: OpenApiTypes.OBJECT, 400: OpenApiTypes.OBJECT, 401: OpenApiTypes.OBJECT,
                   403: OpenApiTypes.OBJECT},
        examples=[OpenApiExample("Planned", response_only=True, status_codes=["200"], value={
            "openapi": "3.0.4", "applied": False, "summary": {"create": 1},
            "changes": [{"action": "create", "name": "getPetById", "detail": "GET /pet/{petId}"}]})],
    )
    def post(self, request: Request) -> Response:
        form = OpenApiImportRequest(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        try:
            document = data["document"] if isinstance(data["document"], dict) else load(str(data["document"]))
            report = run(
                document,
                Options(source=data["source"], base_url=data["base_url"], prefix=data["prefix"],
                        timeout=data["timeout"], secret_header=data["secret_header"],
                        secret_env=data["secret_env"], enabled=not data["disabled"],
                        tags=tuple(data["tags"])),
                Rules(tuple(data["include_tags"]), tuple(data["exclude_tags"]), tuple(data["include_paths"]),
                      tuple(data["exclude_paths"]), tuple(data["methods"])),
                dry_run=data["dry_run"], prune=data["prune"],
            )
        except InvalidDocument as exc:
            return Response({"errors": [{"path": "/document", "message": str(exc)}]}, status=400)
        return Response(report.as_dict())
