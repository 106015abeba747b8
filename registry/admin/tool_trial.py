"""The tool change form's "try it": run the form's data as posted, saved or not, enabled or not,
and answer in JSON for the panel under the form (``static/registry/tool-form.js``).

Nothing is saved: the form is validated (the model's rules, as a save would apply them) into an
instance that is never written, and run by ``tryit.try_tool`` in a provider of its own, so no
change set is recorded, nothing is published on the bus and no worker's snapshot changes.
Running unsaved data is editing by other means: it needs the change permission (of the row, or
of tools in general plus the add permission for a tool not saved yet), like the saved row's page.
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib.admin import ModelAdmin
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse

from ..models import Tool
from . import tryit

ARGUMENTS_FIELD = "_try_arguments"


def _arguments(request: HttpRequest) -> dict[str, Any] | str:
    """The posted arguments object, or why they are not one."""
    raw = request.POST.get(ARGUMENTS_FIELD, "") or "{}"
    try:
        value = json.loads(raw)
    except ValueError as exc:
        return f"The arguments are not valid JSON: {exc}."
    if not isinstance(value, dict):
        return "The arguments must be a JSON object."
    return value


def run_form(admin: ModelAdmin, request: HttpRequest, object_id: str | None) -> HttpResponse:
    if request.method != "POST":
        return JsonResponse({"error": "POST the tool's change form to try it."}, status=405)
    obj = None
    if object_id is not None:
        obj = admin.get_object(request, unquote(object_id))
        if obj is None:
            raise Http404(f"No tool with id {object_id!r}.")
    if not admin.has_change_permission(request, obj) or (
        obj is None and not admin.has_add_permission(request)
    ):
        raise PermissionDenied
    form = admin.get_form(request, obj, change=obj is not None)(
        request.POST, request.FILES, instance=obj or Tool()
    )
    if not form.is_valid():
        errors = {name: [e["message"] for e in found] for name, found in form.errors.get_json_data().items()}
        return JsonResponse(
            {
                "error": "The form has errors; nothing was run. Fix them (saving shows each "
                "beside its field).",
                "field_errors": errors,
            },
            status=400,
        )
    arguments = _arguments(request)
    if isinstance(arguments, str):
        return JsonResponse({"error": arguments}, status=400)
    outcome = tryit.try_tool(form.instance, arguments, request.user.get_username(), unsaved=True)
    return JsonResponse({**outcome.as_json(), "shown": tryit.shown(outcome.result)})
