"""Issue 24 item 10: the admin's "try it" page of an id that is not one (``/admin/registry/tool/abc/
try/``) is a 404 like the change page's, not a 500 with a traceback."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

MODELS = ("tool", "resource", "resourcetemplate", "prompt")


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("object_id", ["abc", "1.5", "999999", "_2E_2E"])
def test_try_it_page_of_an_id_that_names_no_row_is_404(admin_user: Any, model: str, object_id: str) -> None:
    client = Client(raise_request_exception=False)  # a 500 is an answer here, not an exception
    client.force_login(admin_user)
    assert client.get(f"/admin/registry/{model}/{object_id}/try/").status_code == 404
    assert client.post(f"/admin/registry/{model}/{object_id}/try/", {"uri": "x:y"}).status_code == 404
