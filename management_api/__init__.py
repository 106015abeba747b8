"""The REST management API, ``/api/v1/`` (Django REST framework), as its own Django app.

It sits above the apps it manages: it imports ``registry`` and ``access``, and neither imports it.

Modules, one concept each: ``tokens`` (management API tokens, the model) and ``auth`` (their
authentication class, model permissions, throttles); ``serializers`` (the definitions, validated by
the models' own ``full_clean``), ``versioning`` (ETag / If-Match → 412 on the models' ``version``),
``filters`` and ``pagination`` (listing), ``views`` (the definition viewsets), ``transfer`` (import
/ export of the whole registry), ``keys`` and ``audit`` (the access app's API keys and audit log),
``sessions`` (live MCP sessions from the session store), ``urls`` (the router and the schema);
``admin`` (the tokens in the Django admin) and ``create_management_token``.

Writes are ordinary model saves inside one transaction per request, so they publish exactly as an
admin edit does (``registry.signals`` → ``registry.changes``: after commit, one bus message per
kind). These are Django views, served by Django's ASGI handler, never on the ``/mcp`` path.
"""
