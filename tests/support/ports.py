"""A free loopback port for a server a test (or the bench) starts.

Defined once, by the fleet launcher of ``scripts/fleet.sh`` (``mcpsite/fleet.py``), which needs it
too and cannot import the tests; everything under ``tests/`` and ``bench/`` takes it from here.
A port found free may be taken by another process before the server binds it: the launchers
report a failed start with the server's log.
"""

from mcpsite.fleet import free_port

__all__ = ["free_port"]
