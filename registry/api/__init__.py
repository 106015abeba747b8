"""The REST management API, ``/api/v1/`` (Django REST framework).

Modules, one concept each: ``serializers`` (the definitions, validated by the models' own
``full_clean``), ``versioning`` (ETag / If-Match → 412 on the models' ``version``), ``auth``
(management API tokens, model permissions, throttles), ``filters`` and ``pagination`` (listing),
``views`` (the definition viewsets), ``transfer`` (import / export of the whole registry),
``sessions`` (live MCP sessions from the session store), ``urls`` (the router and the schema).

Writes are ordinary model saves inside one transaction per request, so they publish exactly as an
admin edit does (``registry.signals`` → ``registry.changes``: after commit, one bus message per
kind). These are Django views, served by Django's ASGI handler, never on the ``/mcp`` path.
"""
