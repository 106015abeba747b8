"""Where the Django side leans on a dependency's private internals: one module per dependency,
as DRF's ``rest_framework/compat.py``, each use pinned by ``tests/unit/test_compat.py`` so an
upgrade that changes the thing we lean on fails there, not in production.

- ``django.py``           the on-commit list of a connection (``run_on_commit``, its savepoint
                          ids), ``Model._do_update``'s result, the UPDATE statement of a save,
                          a prefetch cache, a formset's rows marked for deletion
- ``simple_history.py``   the historical model behind a ``HistoryDescriptor``
- ``oauthlib.py``         the PKCE methods an authorization code grant accepts
- ``oauth2_provider.py``  the hook where django-oauth-toolkit creates a refresh token; its CIMD
                          URL rules and document checks

The core's own (``prometheus_client``) is ``mcp_protocol/compat/``: the core imports no Django.
"""
