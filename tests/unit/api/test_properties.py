"""Property-based tests of the whole API from its own OpenAPI document (schemathesis, in-process
through Django's WSGI handler, bounded in examples and time): no generated request gets a 500,
every answer is one the document lists, and the database holds only valid definitions after."""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import status_code_conformance

from management_api.tokens import ManagementToken
from registry.models import Prompt, PromptArgument, PromptMessage, Resource, ResourceTemplate, Tool

pytestmark = pytest.mark.django_db

DOCUMENT = SchemaGenerator().get_schema(request=None, public=True)
WRITES = ["POST", "PATCH"]  # PUT takes the same bodies as POST


def load(phases: list[str]) -> Any:
    """Bounded for the suite's time budget: the schema's examples, 10 generated requests per
    operation (valid and invalid), no shrinking; ``coverage`` (boundary values: nulls, empty and
    oversized values, wrong types) only where bodies are written, where it finds the most."""
    loaded = schemathesis.openapi.from_dict(DOCUMENT)
    loaded.config.phases.update(phases=phases)
    loaded.config.generation.update(max_examples=10, no_shrink=True, deterministic=True)
    return loaded


writes = load(["examples", "coverage", "fuzzing"]).include(method=WRITES)
reads = load(["examples", "fuzzing"]).exclude(method=WRITES)
APP = WSGIHandler()


@pytest.fixture
def auth(superuser: Any) -> dict[str, str]:
    return {"Authorization": f"Bearer {ManagementToken.issue(superuser, 'schemathesis')[1]}"}


def check(case: Any, auth: dict[str, str]) -> None:
    response = case.call(app=APP, headers=auth)
    case.validate_response(response, checks=[not_a_server_error, status_code_conformance])
    for model in (Tool, Resource, ResourceTemplate, Prompt, PromptArgument, PromptMessage):
        for row in model.objects.all():
            row.full_clean(exclude=["prompt"] if model in (PromptArgument, PromptMessage) else None)


@writes.parametrize()
@settings(deadline=None, suppress_health_check=list(HealthCheck))
def test_no_write_gets_a_500_or_an_undocumented_answer_and_only_valid_rows_are_stored(
        case: Any, auth: dict[str, str]) -> None:
    check(case, auth)


@reads.parametrize()
@settings(deadline=None, suppress_health_check=list(HealthCheck))
def test_no_other_request_gets_a_500_or_an_undocumented_answer(case: Any, auth: dict[str, str]) -> None:
    check(case, auth)
