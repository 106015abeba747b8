"""Optimistic concurrency for registry rows: a ``version`` that every save increments, and a save
refused when the row moved on since it was read.

A row read at version *v* saves with ``UPDATE … WHERE pk = … AND version = v`` and becomes *v + 1*;
if another writer committed first, no row matches and the save raises ``VersionConflict`` instead
of silently overwriting that edit (Django's own ``save()`` would fall back to an INSERT). The guard
is in the model, so the admin, the REST API (``If-Match`` → 412), management commands and a shell
share it. Queryset ``update()`` (and so ``bulk_update()``) bumps the version too
(``changes.ChangeQuerySet``), so an ETag always changes with the row. A prompt's arguments and
messages have no version of their own: the API, the admin and imports save the prompt with them,
which bumps the prompt's; a child saved alone (a shell) leaves the prompt's ETag as it was.
"""

from __future__ import annotations

from typing import Any

from django.db import models


class VersionConflict(Exception):
    """The row was changed (or deleted) by another writer since this copy was read."""

    def __init__(self, instance: models.Model, expected: int, current: int | None) -> None:
        self.instance = instance
        self.expected = expected
        self.current = current  # None: the row is gone
        state = "was deleted" if current is None else f"is at version {current}"
        super().__init__(f"{instance._meta.verbose_name} {instance.pk} {state}, not {expected}")


class Versioned(models.Model):
    version = models.PositiveIntegerField(
        default=1, editable=False, help_text="Incremented by every save; the API's ETag."
    )

    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self._state.adding or kwargs.get("force_insert"):
            return super().save(*args, **kwargs)
        expected = self.version
        update_fields = kwargs.get("update_fields")
        if update_fields is not None:
            kwargs["update_fields"] = {*update_fields, "version"}
        self._expected_version = expected
        self.version = expected + 1
        try:
            super().save(*args, **kwargs)
        except BaseException:
            self.version = expected
            raise
        finally:
            del self._expected_version

    def _do_update(self, base_qs: Any, using: Any, pk_val: Any, values: Any,
                   update_fields: Any, forced_update: Any, *rest: Any) -> Any:
        # Django's private save step (its signature pinned with mcp_django/compat/django.py).
        # *rest: Django 6.0 added ``returning_fields`` (and returns the rows instead of a bool);
        # whatever Django returns is passed on untouched so both 5.2 and 6.0 work.
        expected = getattr(self, "_expected_version", None)
        if expected is None:
            return super()._do_update(base_qs, using, pk_val, values, update_fields, forced_update, *rest)
        updated = super()._do_update(base_qs.filter(version=expected), using, pk_val, values,
                                     update_fields, forced_update, *rest)
        if updated:
            return updated
        # Deleted meanwhile (current None) conflicts too: Django would otherwise INSERT it again.
        current = base_qs.filter(pk=pk_val).values_list("version", flat=True).first()
        raise VersionConflict(self, expected, current)
