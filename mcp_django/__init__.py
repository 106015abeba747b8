"""The Django adapter of ``mcp_protocol`` (the core, which imports no Django): an app to put in
``INSTALLED_APPS``.

- ``conf.py``      ``mcp_settings``: the ``MCP`` setting over ``DEFAULTS`` (the only defaults,
                   ``ACCESS_DEFAULTS`` included); ``build_server``; imports nothing of the core
- ``service.py``   the process's ``RuntimeHost``, its runtimes built from settings (server, access
                   policy, transport config, origin guard, resolver), reset on ``setting_changed``;
                   handed to the endpoint, the operations views and the management API
- ``servers.py``   the ASGI servers' start and stop: uvicorn's lifespan and SIGTERM hook, daphne's
                   reactor triggers (the core knows an event loop, not who runs it)
- ``routing.py``   ``mcp_path``, ``legacy_sse_paths``, ``lifespan``, ``EndpointFirst`` for Channels
- ``checks.py``    system checks of the ``MCP`` setting (a backend option it does not take
                   included) and of the routing
- ``users.py``     ``django_user``: a Django session cookie or DRF token as the caller of ``/mcp``
- ``management/commands/mcp_stdio.py``  the stdio transport as a management command
"""
