# The management API's models moved to their own app (management_api/0001_initial), in Django's
# state only: the table registry_managementtoken stays where it is, with its rows.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('registry', '0006_definition_tags'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name='ManagementToken'),
                migrations.DeleteModel(name='LiveSession'),
            ],
            database_operations=[],
        ),
    ]
