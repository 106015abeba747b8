"""``/api/v1/skills/``: skills (SEP-2640) with their files nested, validated as the admin does.

A skill is written with its ``files`` in one request and one transaction (one change published);
a PUT or PATCH that sends ``files`` replaces them all, one that does not keeps them. A file holds
``text`` or ``base64`` (binary content); ``size`` and ``digest`` are computed. ETag and
``If-Match`` as on every definition (``versioning.py``): the skill's ``version``.
"""

from __future__ import annotations

import base64
import binascii
import copy
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import filters, serializers, viewsets

from registry.models import skills as skill_models
from registry.models.skills import Skill, SkillFile

from .auth import DEFINITION_PERMISSIONS
from .authors import AuthoredMixin
from .bodies import StrictBodyMixin
from .errors import drf_errors, raise_drf
from .filters import StrictOrderingFilter
from .pagination import DefinitionCursorPagination
from .parsers import FIELD_MAPPING
from .versioning import VersionedViewSetMixin
from .views import _documented


class SkillFileSerializer(StrictBodyMixin, serializers.Serializer):
    path = serializers.CharField(max_length=1024)
    media_type = serializers.CharField(max_length=255, default="text/plain")
    text = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)
    base64 = serializers.CharField(required=False, help_text="Content of a binary file.")
    size = serializers.IntegerField(read_only=True)
    digest = serializers.CharField(read_only=True)

    def to_representation(self, instance: SkillFile) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": instance.path,
            "media_type": instance.media_type,
            "size": instance.size,
            "digest": instance.digest,
        }
        if instance.is_binary:
            out["base64"] = base64.b64encode(bytes(instance.data or b"")).decode()
        else:
            out["text"] = instance.text
        return out

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("text" in attrs) == ("base64" in attrs):
            raise serializers.ValidationError("A file holds exactly one of text and base64.")
        # A PATCH validates nested items partially: neither "required" nor a default applies, and
        # a file sent in a PATCH replaces the skill's files like any other, so it is whole here.
        if "path" not in attrs:
            raise serializers.ValidationError({"path": "This field is required."})
        media_type = attrs.get("media_type", "text/plain")
        row = SkillFile(path=attrs["path"], media_type=media_type, text=attrs.get("text", ""))
        if "base64" in attrs:
            try:
                row.data, row.is_binary = base64.b64decode(attrs["base64"], validate=True), True
            except (binascii.Error, ValueError) as exc:
                raise serializers.ValidationError({"base64": "Not valid base64."}) from exc
        try:
            row.full_clean(exclude=["skill"])
        except DjangoValidationError as exc:
            raise_drf(exc)
        return {"row": row}


class SkillSerializer(StrictBodyMixin, serializers.ModelSerializer):
    files = SkillFileSerializer(many=True, required=False)
    skill_md = serializers.CharField(read_only=True, help_text="SKILL.md as served.")
    serializer_field_mapping = FIELD_MAPPING

    class Meta:
        model = Skill
        fields = (
            "id",
            "path",
            "frontmatter",
            "body",
            "tags",
            "enabled",
            "files",
            "skill_md",
            "version",
            "updated_at",
        )
        read_only_fields = ("id", "version", "updated_at")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        fields = {k: v for k, v in attrs.items() if k != "files"}
        row = copy.copy(self.instance) if self.instance is not None else Skill()
        for name, value in fields.items():
            setattr(row, name, value)
        try:
            row.full_clean()
        except DjangoValidationError as exc:
            raise serializers.ValidationError(drf_errors(exc)) from None
        files = [f["row"] for f in attrs.get("files") or []]
        paths = [f.path for f in files]
        if len(set(paths)) != len(paths):
            raise serializers.ValidationError({"files": "Two files have the same path."})
        if len(files) + 1 > skill_models.MAX_FILES or sum(len(f.raw) for f in files) > skill_models.MAX_BYTES:
            raise serializers.ValidationError(
                {"files": f"A skill holds at most {skill_models.MAX_FILES} files and 16 MiB."}
            )
        return attrs

    def create(self, validated_data: dict[str, Any]) -> Skill:
        files = validated_data.pop("files", [])
        skill = Skill.objects.create(**validated_data)
        self._write_files(skill, files)
        return skill

    def update(self, instance: Skill, validated_data: dict[str, Any]) -> Skill:
        files = validated_data.pop("files", None)
        for name, value in validated_data.items():
            setattr(instance, name, value)
        instance.save()
        self._write_files(instance, files)
        return instance

    @staticmethod
    def _write_files(skill: Skill, files: list[dict[str, Any]] | None) -> None:
        if files is None:
            return
        skill.files.all().delete()
        for item in files:
            row = item["row"]
            row.skill = skill
            row.save()


@_documented("skills", SkillSerializer, "`files` are written with the skill (each `text` or "
             "`base64`); a list sent replaces them all, one left out keeps them.")  # as every definition
class SkillViewSet(AuthoredMixin, VersionedViewSetMixin, viewsets.ModelViewSet):
    queryset = Skill.objects.prefetch_related("files")
    serializer_class = SkillSerializer
    permission_classes = DEFINITION_PERMISSIONS
    pagination_class = DefinitionCursorPagination
    filter_backends = (filters.SearchFilter, StrictOrderingFilter)
    ordering_fields = ("path", "updated_at")
    ordering = ("path",)
    search_fields = ("path", "body")
