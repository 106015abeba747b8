"""Django ``ValidationError`` (from ``full_clean``) → DRF's field-error shape, and the API's own
HTTP errors.

``full_clean`` reports ``{"field": [messages]}`` with ``__all__`` for errors of the whole row; DRF
clients expect ``{"field": ["…"], "non_field_errors": ["…"]}``, each message an ``ErrorDetail``
with its code. An invalid JSON Schema names where it is wrong with an RFC 6901 pointer inside the
message (``validators.validate_object_schema``).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import NON_FIELD_ERRORS
from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import exceptions, serializers, status
from rest_framework.fields import get_error_detail
from rest_framework.settings import api_settings


def drf_errors(exc: DjangoValidationError) -> dict[str, Any] | list[Any]:
    """The same messages and codes, keyed as DRF keys them."""
    detail = get_error_detail(exc)
    if isinstance(detail, dict) and NON_FIELD_ERRORS in detail:
        detail[api_settings.NON_FIELD_ERRORS_KEY] = detail.pop(NON_FIELD_ERRORS)
    return detail


def raise_drf(exc: DjangoValidationError) -> None:
    raise serializers.ValidationError(drf_errors(exc)) from None


class PreconditionFailed(exceptions.APIException):
    """RFC 9110 §13.1.1: ``If-Match`` names no current representation of the target."""

    status_code = status.HTTP_412_PRECONDITION_FAILED
    default_detail = "The object changed since the version named in If-Match."
    default_code = "precondition_failed"


class BadPrecondition(exceptions.APIException):
    """An ``If-Match`` that is no entity tag (``versioning.if_match_tags``)."""

    status_code = status.HTTP_400_BAD_REQUEST
    default_detail = 'If-Match takes entity tags in double quotes, e.g. If-Match: "3".'
    default_code = "bad_if_match"


class Conflict(exceptions.APIException):
    """A write without ``If-Match`` raced with another writer that committed first."""

    status_code = status.HTTP_409_CONFLICT
    default_detail = "The object was changed by another writer while this request ran; retry it."
    default_code = "conflict"
