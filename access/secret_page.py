"""The page that shows a new credential's secret once: the answer to the admin's add POST of an API
key (``access.admin``) or a management API token (``management_api.admin``).

Reloading it does not show the secret again: its script (``static/access/secret-once.js``)
replaces the page's history entry with the credential's own page, so a reload is a GET of that
page instead of the add form posted again (which would make a second credential). It also
carries the copy button.

Not a message: Django's messages travel in the ``messages`` cookie, signed but not encrypted, so a
secret put there can be read back from ``Set-Cookie`` (and from the browser's cookie jar, proxies'
logs, ...). The secret is rendered in the body of this one response and nowhere else: no cookie,
no session, no redirect URL; ``Cache-Control: no-store`` keeps it out of caches.
"""

from __future__ import annotations

from typing import Any

from django.contrib.admin import ModelAdmin
from django.db import models
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.cache import add_never_cache_headers


def show_secret_once(request: HttpRequest, model_admin: ModelAdmin, obj: models.Model, secret: str) -> Any:
    opts = obj._meta
    context = {
        **model_admin.admin_site.each_context(request),
        "title": f"The new {opts.verbose_name}",
        "opts": opts,
        "object": obj,
        "secret": secret,
        "changelist_url": reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist"),
        "after_url": reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[obj.pk]),
    }
    response = TemplateResponse(request, "admin/access/secret_once.html", context)
    add_never_cache_headers(response)  # Cache-Control: max-age=0, no-cache, no-store, must-revalidate
    return response
