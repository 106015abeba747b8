"""The admin's OpenAPI upload (``/admin/registry/tool/import-openapi/``): a form for a document
file and the import's options, the plan shown on the page. The same importer as the command and
the REST endpoint; "Dry run" is ticked by default, so an operator reads the plan before applying."""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from .document import InvalidDocument, load
from .importer import Options, Plan, Rules, run

MAX_UPLOAD = 5 * 1024 * 1024


def _names(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.replace("\n", ",").split(",") if part.strip())


class OpenApiUploadForm(forms.Form):
    document = forms.FileField(help_text="An OpenAPI 3.0 or 3.1 document, JSON or YAML.")
    source = forms.RegexField(r"^[A-Za-z0-9_.:-]{1,128}$", help_text="This import's name: importing the "
                              "same source again updates its tools and leaves every other tool alone.")
    base_url = forms.URLField(required=False, assume_scheme="https",
                              help_text="The API's URL (default: the document's server).")
    prefix = forms.RegexField(r"^[A-Za-z0-9_.-]{0,64}$", required=False, help_text="e.g. petstore.")
    include_tags = forms.CharField(required=False, help_text="Comma-separated; empty: every tag.")
    exclude_tags = forms.CharField(required=False)
    include_paths = forms.CharField(required=False, help_text="Comma-separated patterns, e.g. /pet/*")
    exclude_paths = forms.CharField(required=False)
    methods = forms.CharField(required=False, help_text="Comma-separated, e.g. GET; empty: all.")
    secret_header = forms.CharField(required=False, max_length=128)
    secret_env = forms.CharField(required=False, max_length=128)
    tags = forms.CharField(required=False, help_text="Access tags for every tool, comma-separated.")
    disabled = forms.BooleanField(required=False, help_text="Create new tools disabled, for review.")
    dry_run = forms.BooleanField(required=False, initial=True, help_text="Show the plan; write nothing.")

    def clean_document(self) -> dict[str, Any]:
        upload = self.cleaned_data["document"]
        if upload.size > MAX_UPLOAD:
            raise forms.ValidationError(f"At most {MAX_UPLOAD // (1024 * 1024)} MB.")
        try:
            return load(upload.read())
        except (InvalidDocument, UnicodeDecodeError) as exc:
            raise forms.ValidationError(str(exc)) from None


def upload_view(model_admin: Any, request: HttpRequest) -> HttpResponse:
    if not (model_admin.has_add_permission(request) and model_admin.has_change_permission(request)):
        raise PermissionDenied
    report: Plan | None = None
    form = OpenApiUploadForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        rules = Rules(*(_names(data[k]) for k in ("include_tags", "exclude_tags", "include_paths",
                                                   "exclude_paths", "methods")))
        options = Options(source=data["source"], base_url=data["base_url"] or "", prefix=data["prefix"] or "",
                          secret_header=data["secret_header"], secret_env=data["secret_env"],
                          enabled=not data["disabled"], tags=_names(data["tags"]))
        try:
            report = run(data["document"], options, rules, dry_run=data["dry_run"])
        except InvalidDocument as exc:
            form.add_error("document", str(exc))
    context = {**model_admin.admin_site.each_context(request), "opts": model_admin.opts, "form": form,
               "title": "Import tools from an OpenAPI document", "report": report}
    return TemplateResponse(request, "admin/registry/tool/import_openapi.html", context)
