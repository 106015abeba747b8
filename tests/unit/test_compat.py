"""Each private internal of a dependency we lean on (``mcp_django/compat/``,
``mcp_protocol/compat/``), pinned: these fail when an upgrade changes the thing we use, before
the product breaks in a subtler way."""

from __future__ import annotations

import inspect

import pytest
from django.db import connection, models, transaction
from oauth2_provider.oauth2_validators import OAuth2Validator
from oauthlib.oauth2.rfc6749.grant_types.authorization_code import (
    AuthorizationCodeGrant,
    code_challenge_method_s256,
)
from prometheus_client import CollectorRegistry, Histogram

from access.models import ApiKey, AuditRecord
from mcp_django.compat import django as django_compat
from mcp_django.compat.httpx2 import use_network_backend
from mcp_django.compat.oauth2_provider import RefreshTokenHook, effective_max_age, validate_client_id_url
from mcp_django.compat.oauthlib import add_grant_type, set_code_challenge_methods
from mcp_django.compat.simple_history import historical_model
from mcp_protocol.compat.prometheus_client import add_observations
from mcp_protocol.compat.pyjwt import published_alg
from registry.models import Tool


def _noop() -> None:
    pass


@pytest.mark.django_db(transaction=True)
def test_on_commit_entries_are_savepoint_ids_callable_robust_and_a_savepoint_rollback_drops_its_own() -> None:
    def in_savepoint() -> None:
        pass

    def untagged() -> None:
        pass

    with transaction.atomic():
        transaction.on_commit(_noop)
        entries = django_compat.on_commit_entries(connection)
        assert entries is connection.run_on_commit  # the list itself: changes.py edits it
        assert entries[-1][1] is _noop and entries[-1][0] == set() and entries[-1][2] is False
        try:
            with transaction.atomic():
                assert django_compat.open_savepoints(connection)
                transaction.on_commit(in_savepoint)
                django_compat.queue_untagged(connection, untagged)
                assert entries[-2][0] == django_compat.open_savepoints(connection)
                raise RuntimeError("roll the savepoint back")
        except RuntimeError:
            pass
        kept = [entry[1] for entry in django_compat.on_commit_entries(connection)]
        assert kept == [_noop, untagged]


def test_do_update_keeps_the_signature_the_registry_overrides() -> None:
    names = list(inspect.signature(models.Model._do_update).parameters)
    assert names[:7] == ["self", "base_qs", "using", "pk_val", "values", "update_fields", "forced_update"]
    assert django_compat.do_update_result(1, ()) is True and django_compat.do_update_result(0, ()) is False
    assert django_compat.do_update_result(2, (["id"],)) == [(), ()]


@pytest.mark.django_db
def test_update_statement_is_the_update_a_save_sends() -> None:
    row = Tool.objects.create(name="pinned", description="d", kind="template", template_text="x")
    field = Tool._meta.get_field("description")
    sql, params = django_compat.update_statement(
        Tool._base_manager.all(), row.pk, [(field, None, "changed")], "default"
    ) or ("", ())
    assert sql.startswith("UPDATE ") and "description" in sql and "changed" in params
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
    row.refresh_from_db()
    assert row.description == "changed"


@pytest.mark.django_db
def test_prefetched_lists_are_kept_where_forget_prefetched_clears_them() -> None:
    from registry.models import Prompt

    Prompt.objects.create(name="p", description="d")
    prompt = Prompt.objects.prefetch_related("arguments").get(name="p")
    assert prompt._prefetched_objects_cache
    django_compat.forget_prefetched(prompt)
    assert not prompt._prefetched_objects_cache


def test_the_historical_model_is_found_on_the_history_descriptor() -> None:
    history = historical_model(ApiKey, "history")
    assert history is ApiKey.history.model
    with pytest.raises(LookupError):
        historical_model(AuditRecord, "history")


def test_authorization_code_grant_keeps_its_pkce_methods_in_a_dict_we_can_narrow() -> None:
    grant = AuthorizationCodeGrant(request_validator=None)
    assert {"plain", "S256"} <= set(grant._code_challenge_methods)
    set_code_challenge_methods(grant, {"S256": code_challenge_method_s256})
    assert set(grant._code_challenge_methods) == {"S256"}
    # oauthlib reads it when it checks the method (validate_authorization_request, validate_code_challenge).
    source = inspect.getsource(AuthorizationCodeGrant)
    assert "self._code_challenge_methods" in source


def test_a_token_endpoint_routes_grant_types_through_a_dict_we_can_extend() -> None:
    from oauthlib.oauth2 import WebApplicationServer

    server = WebApplicationServer(request_validator=None)
    handler = object()
    add_grant_type(server, "urn:example:grant", handler)
    assert server.grant_types["urn:example:grant"] is handler  # what create_token_response looks up
    assert "self.grant_types.get(request.grant_type" in inspect.getsource(type(server).create_token_response)


def test_oauth_toolkit_creates_refresh_tokens_through_the_hook_we_override() -> None:
    names = list(inspect.signature(OAuth2Validator._create_refresh_token).parameters)
    assert names == ["self", "request", "refresh_token_code", "access_token", "previous_refresh_token"]
    assert "self._create_refresh_token(" in inspect.getsource(OAuth2Validator)  # _save_bearer_token calls it

    seen = []

    class Base:
        def _create_refresh_token(self, request: object, code: str, access: object, previous: object) -> str:
            return f"token for {code}"

    class Hooked(RefreshTokenHook, Base):
        def refresh_token_created(self, request: object, token: object) -> None:
            seen.append(token)

    assert Hooked()._create_refresh_token(None, "c", None, None) == "token for c"
    assert seen == ["token for c"]


def test_a_histogram_child_takes_many_observations_per_bucket_at_once() -> None:
    histogram = Histogram("pinned_seconds", "d", ["tool"], buckets=(0.1, 1.0), registry=CollectorRegistry())
    child = histogram.labels("t")
    add_observations(child, [2, 0, 1], 3.5)  # two under 0.1, one over 1.0
    samples = {(s.name, s.labels.get("le")): s.value for s in histogram.collect()[0].samples}
    assert samples[("pinned_seconds_bucket", "0.1")] == 2
    assert samples[("pinned_seconds_bucket", "1.0")] == 2
    assert samples[("pinned_seconds_bucket", "+Inf")] == 3
    assert samples[("pinned_seconds_count", None)] == 3
    assert samples[("pinned_seconds_sum", None)] == 3.5


def test_a_pyjwk_keeps_the_jwk_it_was_built_from_with_or_without_alg() -> None:
    import jwt

    key = {"kty": "oct", "k": "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LTMyYg"}
    assert published_alg(jwt.PyJWK({**key, "alg": "HS256"})) == "HS256"
    unpinned = jwt.PyJWK(key)
    # The public name defaults the algorithm from the key type: it cannot tell the two apart.
    assert unpinned.algorithm_name == "HS256"
    assert published_alg(unpinned) is None


def test_a_formset_tells_which_rows_are_marked_for_deletion() -> None:
    from django import forms

    class Row(forms.Form):
        name = forms.CharField()

    rows = forms.formset_factory(Row, can_delete=True)(
        {
            "form-TOTAL_FORMS": "2",
            "form-INITIAL_FORMS": "2",
            "form-0-name": "gone",
            "form-0-DELETE": "on",
            "form-1-name": "kept",
        }
    )
    assert rows.is_valid()
    assert [django_compat.should_delete_form(rows, f) for f in rows.forms] == [True, False]


def test_oauth_toolkit_checks_a_client_id_url_by_the_cimd_rules() -> None:
    from oauth2_provider.cimd import CIMDError

    parsed = validate_client_id_url("https://client.example/oauth/metadata.json")
    assert parsed.geturl() == "https://client.example/oauth/metadata.json"
    assert parsed.hostname == "client.example"
    for refused in ("http://client.example/m.json", "https://client.example", "https://u@client.example/m",
                    "https://client.example/a/../m.json"):
        with pytest.raises(CIMDError):
            validate_client_id_url(refused)


def test_oauth_toolkit_bounds_a_documents_cache_lifetime_from_its_cache_control() -> None:
    from oauth2_provider.settings import oauth2_settings

    floor = oauth2_settings.CIMD_METADATA_MIN_AGE_SECONDS
    ceiling = oauth2_settings.CIMD_METADATA_MAX_AGE_SECONDS
    assert effective_max_age("max-age=600") == max(floor, min(600, ceiling))
    assert effective_max_age("no-store") == floor
    assert effective_max_age(None) == ceiling
    assert effective_max_age(f"max-age={ceiling * 10}") == ceiling


def test_an_httpx2_transport_sends_through_the_pool_given_its_network_backend() -> None:
    import httpcore2
    import httpx2

    class Backend(httpcore2.AnyIOBackend):
        pass

    backend = Backend()
    transport = httpx2.AsyncHTTPTransport()
    use_network_backend(transport, backend)
    pool = transport._pool
    assert isinstance(pool, httpcore2.AsyncConnectionPool)
    assert pool._network_backend is backend
    assert "ssl_context" in inspect.signature(httpcore2.AsyncConnectionPool).parameters
