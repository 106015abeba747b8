# The index Django made for AuditRecord.outcome (db_index=True) is dropped by name: AlterField would
# rebuild the whole audit table on SQLite (copy, drop, rename) for what is one DROP INDEX.
# PostgreSQL also has the varchar_pattern_ops twin ("_like") Django makes for an indexed CharField.

from django.db import migrations, models

INDEX = "access_auditrecord_outcome_625dde72"


def drop(apps, schema_editor):
    schema_editor.execute(f'DROP INDEX IF EXISTS "{INDEX}"')
    schema_editor.execute(f'DROP INDEX IF EXISTS "{INDEX}_like"')


def create(apps, schema_editor):
    schema_editor.execute(f'CREATE INDEX "{INDEX}" ON "access_auditrecord" ("outcome")')
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            f'CREATE INDEX "{INDEX}_like" ON "access_auditrecord" ("outcome" varchar_pattern_ops)')


class Migration(migrations.Migration):

    dependencies = [
        ('access', '0002_audit_spool_id'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='auditrecord',
                    name='outcome',
                    field=models.CharField(max_length=20),
                ),
            ],
            database_operations=[migrations.RunPython(drop, create)],
        ),
    ]
