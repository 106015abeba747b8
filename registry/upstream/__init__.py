"""Calling upstream HTTP APIs for the ``http`` tool kind (``kinds/http.py`` runs a call with these).

- ``config``: the ``REGISTRY_HTTP_*`` settings and their only defaults, read when asked;
- ``clients``: one pooled ``httpx.AsyncClient`` per serving event loop, opened and closed with the
  runtime (through the provider's ``start``/``stop``), one-shot clients elsewhere.
"""
