"""Where the core leans on a dependency's private internals: one module per dependency (as DRF's
``rest_framework/compat.py``), each use pinned by ``tests/unit/test_compat.py``. The Django
side's are in ``mcp_django/compat/``.

- ``prometheus_client.py``  adding many observations to a histogram child at once
- ``pyjwt.py``              the ``alg`` a JWK was published with
"""
