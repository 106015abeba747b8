# The models moved here from the registry app (registry/0007_management_api_models_moved) in
# Django's state only: the token table keeps its name and its rows. Their content types move with
# them, so the permissions granted on them (add a token, view live sessions, ...) stay granted.

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

MODELS = ('managementtoken', 'livesession')


def move_content_types(apps, schema_editor, source='registry', target='management_api'):
    content_types = apps.get_model('contenttypes', 'ContentType')
    db = schema_editor.connection.alias
    taken = set(content_types.objects.using(db).filter(app_label=target).values_list('model', flat=True))
    content_types.objects.using(db).filter(app_label=source, model__in=set(MODELS) - taken).update(
        app_label=target)


def move_content_types_back(apps, schema_editor):
    move_content_types(apps, schema_editor, source='management_api', target='registry')


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('contenttypes', '0002_remove_content_type_name'),
        ('registry', '0007_management_api_models_moved'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='ManagementToken',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('name', models.CharField(help_text="What the token is for, e.g. 'CI deploy'.", max_length=128)),
                        ('digest', models.CharField(editable=False, max_length=64, unique=True)),
                        ('hint', models.CharField(editable=False, help_text="The token's first characters.", max_length=16)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('expires_at', models.DateTimeField(blank=True, help_text='Empty: never expires.', null=True)),
                        ('last_used_at', models.DateTimeField(blank=True, editable=False, null=True)),
                        ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='management_tokens', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'verbose_name': 'management API token',
                        'db_table': 'registry_managementtoken',
                        'ordering': ['user_id', 'name', 'id'],
                    },
                ),
                migrations.CreateModel(
                    name='LiveSession',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ],
                    options={
                        'permissions': [('view_livesession', 'Can view live MCP sessions'), ('delete_livesession', 'Can end live MCP sessions')],
                        'managed': False,
                        'default_permissions': (),
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(move_content_types, move_content_types_back, elidable=False),
    ]
