"""What a row was, as read from the database: the fields that say which endpoints a change reaches.

A rename or a retag can take a definition out of a virtual server's selection, and that server's
clients must hear of it (``changes/reach.py``): the change reaches the endpoints of the row's old
state as well as its new one. The old state is remembered when the row is read (``from_db``, the
pattern of Django's "Customizing model loading"), so a save costs no extra query; a row built
with a primary key but never read (a revert, a shell) is read once before its save
(``recall``, from ``signals.py``'s ``pre_save``). After each save it is what the database holds.
"""

from __future__ import annotations

from typing import Any, ClassVar

from django.db import models


def _frozen(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


class Remembered(models.Model):
    # The fields remembered: those a selection sees (name or URI, tags), or a server's slug.
    remembered: ClassVar[tuple[str, ...]]

    class Meta:
        abstract = True

    @classmethod
    def from_db(cls, db: Any, field_names: Any, values: Any) -> Any:
        instance = super().from_db(db, field_names, values)
        if all(name in field_names for name in cls.remembered):
            instance.remember()
        return instance

    def refresh_from_db(self, *args: Any, **kwargs: Any) -> None:
        super().refresh_from_db(*args, **kwargs)
        if not self.get_deferred_fields() & set(self.remembered):
            self.remember()

    def remember(self) -> None:
        """The row as it is now is what the database holds (read, or just saved)."""
        self._stored = {name: _frozen(getattr(self, name)) for name in self.remembered}

    def stored(self) -> dict[str, Any] | None:
        """The remembered fields as the database held them (None: a new row)."""
        stored: dict[str, Any] | None = self.__dict__.get("_stored")
        return stored

    def recall(self, using: str | None) -> None:
        """Before a save: read the remembered fields of a row never read (one query)."""
        if self.pk is None or "_stored" in self.__dict__:
            return
        old = type(self)._base_manager.using(using).filter(pk=self.pk).only(*self.remembered).first()
        if old is not None:
            self._stored = old._stored
