"""The registry's prompts, with their arguments and messages (``Definition`` rows: see
``base.py``)."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import models

from ..changes.publish import ChangeQuerySet
from ..changes.reach import Touches, through_parent
from ..validation.content_blocks import validate_content_block
from ..validation.validators import ROLES, validate_name, validate_string_list
from .base import Definition, check_handler
from .history import Recorded
from .upstreams import UpstreamMirror


class Prompt(Definition, UpstreamMirror):
    mcp_kind = "prompts"
    selection_kind = "prompts"
    remembered = ("name", "tags")
    code_key = ("name", "PROMPTS")

    name = models.CharField(max_length=128, unique=True, validators=[validate_name])
    handler = models.CharField(
        max_length=128,
        blank=True,
        help_text="Optional @prompt_handler name; when set it produces the messages.",
    )
    completion_handler = models.CharField(
        max_length=128, blank=True, help_text="Optional @completion_handler name for argument completion."
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        errors: dict[str, str] = {}
        check_handler(errors, "handler", "prompt", self.handler, required=False)
        check_handler(errors, "completion_handler", "completion", self.completion_handler, required=False)
        if errors:
            raise ValidationError(errors)


class PromptArgument(Recorded):
    mcp_kind = "prompts"
    reached_through = "prompt"  # changes/reach.py: it reaches where its prompt does

    prompt = models.ForeignKey(Prompt, on_delete=models.CASCADE, related_name="arguments")
    position = models.PositiveIntegerField(default=0)
    name = models.CharField(max_length=128, validators=[validate_name])
    title = models.CharField(max_length=255, blank=True)
    description = models.TextField(blank=True)
    required = models.BooleanField(default=False)
    completion_values = models.JSONField(
        default=list,
        blank=True,
        validators=[validate_string_list],
        help_text='Values offered by completion/complete, e.g. ["python", "rust"].',
    )

    objects = ChangeQuerySet.as_manager()

    class Meta:
        ordering = ["position", "id"]
        constraints = [
            models.UniqueConstraint(fields=["prompt", "name"], name="registry_prompt_argument_unique_name")
        ]

    def touches(self) -> Touches:
        return through_parent(self, "prompt")  # an argument or a message changes its prompt

    def __str__(self) -> str:
        return self.name


class PromptMessage(Recorded):
    mcp_kind = "prompts"
    reached_through = "prompt"

    prompt = models.ForeignKey(Prompt, on_delete=models.CASCADE, related_name="messages")
    position = models.PositiveIntegerField(default=0)
    role = models.CharField(max_length=16, choices=[(r, r) for r in ROLES], default="user")
    content = models.JSONField(
        validators=[validate_content_block],
        help_text="A content block; strings may use {{ argument }}, e.g. "
        '{"type": "text", "text": "Review {{ code }}"}.',
    )

    objects = ChangeQuerySet.as_manager()

    class Meta:
        ordering = ["position", "id"]

    def touches(self) -> Touches:
        return through_parent(self, "prompt")  # an argument or a message changes its prompt

    def __str__(self) -> str:
        return f"{self.role} message {self.position}"
