"""django-simple-history internals the registry's history writer relies on (3.13).

The historical model of a tracked model is kept on the class as a ``HistoryDescriptor`` (its
``model`` attribute); going through the descriptor instead would build a manager class on every
call. ``registry/models/history.py`` writes historical rows itself, so it needs the model directly.
"""

from __future__ import annotations

from typing import Any

from simple_history.manager import HistoryDescriptor


def historical_model(model: type[Any], manager_name: str) -> type[Any]:
    """The historical model of ``model`` (``manager_name``: ``HistoricalRecords.manager_name``)."""
    for klass in model.__mro__:
        descriptor = klass.__dict__.get(manager_name)
        if isinstance(descriptor, HistoryDescriptor):
            found: type[Any] = descriptor.model
            return found
    raise LookupError(f"{model.__name__} has no history")
