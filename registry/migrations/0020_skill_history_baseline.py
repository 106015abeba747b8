"""The skills that existed before their history did get a first version ("+"), in one change set by
the system, as 0015 did for the other definitions: every live skill has a known state, so it can be
diffed, exported ``--at`` and reverted."""

from __future__ import annotations

from typing import Any

from django.db import migrations
from django.utils import timezone

MODELS = ("Skill", "SkillFile")


def baseline(apps: Any, schema_editor: Any) -> None:
    alias = schema_editor.connection.alias
    rows = {name: list(apps.get_model("registry", name).objects.using(alias).all()) for name in MODELS}
    if not any(rows.values()):
        return
    now = timezone.now()
    changeset = (
        apps.get_model("registry", "ChangeSet")
        .objects.using(alias)
        .create(
            source="system",
            actor="system",
            note="skill history started: the skills as they were",
            kinds=["resources"],  # skill files are resources (SEP-2640)
        )
    )
    for name, found in rows.items():
        historical = apps.get_model("registry", f"Historical{name}")
        fields = [f.attname for f in apps.get_model("registry", name)._meta.concrete_fields]
        historical.objects.using(alias).bulk_create(
            [
                historical(
                    **{field: getattr(row, field) for field in fields},
                    history_date=now,
                    history_type="+",
                    history_change_reason="",
                    changeset_id=changeset.pk,
                )
                for row in found
            ],
            batch_size=500,
        )


class Migration(migrations.Migration):
    dependencies = [("registry", "0019_skill_history")]

    operations = [migrations.RunPython(baseline, migrations.RunPython.noop)]
