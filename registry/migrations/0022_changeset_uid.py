"""Every change set gets a ``uid`` (its bus messages' and fan-out claims' name, issue 38 item 6).

Added nullable, filled row by row with a UUID of its own, then made required: ``AddField`` with a
callable default would give every existing row the same value."""

from __future__ import annotations

import uuid
from typing import Any

from django.db import migrations, models

BATCH = 1000


def fill(apps: Any, schema_editor: Any) -> None:
    connection = schema_editor.connection
    ChangeSet = apps.get_model("registry", "ChangeSet")
    if connection.vendor == "postgresql":
        # One statement however many rows (gen_random_uuid: core since PostgreSQL 13).
        table = connection.ops.quote_name(ChangeSet._meta.db_table)
        with connection.cursor() as cursor:
            cursor.execute(f"UPDATE {table} SET uid = gen_random_uuid() WHERE uid IS NULL")
        return
    rows = ChangeSet.objects.using(connection.alias)
    while batch := list(rows.filter(uid__isnull=True).only("pk")[:BATCH]):
        for row in batch:
            row.uid = uuid.uuid4()
        rows.bulk_update(batch, ["uid"])


class Migration(migrations.Migration):
    dependencies = [("registry", "0021_tool_http_signing_scheme")]

    operations = [
        migrations.AddField(
            model_name="changeset", name="uid", field=models.UUIDField(editable=False, null=True)
        ),
        migrations.RunPython(fill, migrations.RunPython.noop, elidable=True),
        migrations.AlterField(
            model_name="changeset",
            name="uid",
            field=models.UUIDField(default=uuid.uuid4, editable=False),
        ),
    ]
