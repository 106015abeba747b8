"""The fan-out: from a committed change to the notifications every affected stream must get, once.

- ``notifications.py``: ``KINDS`` and THE mapping from a change (a registry commit, a lost bus, a
  key's grant) to the notifications it causes and who gets each; used by the HTTP fan-out, stdio,
  ``subscriptions/listen`` and key-scope changes alike.
- ``listener.py``: ``Fanout``, every worker's reader of the bus ``changes`` channel (snapshot
  rebuild, listen streams, then the writer), in commit order.
- ``writer.py``: ``ChangeWriter``, which writes one change's notifications into the standalone-stream
  log of every live session it reaches, in parts, exactly once across workers.
- ``claim.py``: who writes a change and each part (``take_turn``), and the ``LeaseKeeper`` that
  keeps the writer's leases alive; a writer that died is taken over (``Claim.RETAKEN``).

Does not know about HTTP (it only writes logs) and does not import Django.
"""

from .listener import Fanout, change_key
from .notifications import KINDS, Change
from .writer import ChangeWriter

__all__ = ["KINDS", "Change", "ChangeWriter", "Fanout", "change_key"]
