"""Tool.http_signing_scheme (issue 37 item 7): every row that exists when this runs is ``v1``, the
scheme its upstream already verifies, so a deploy changes no signature; then the default becomes
``v2`` for the tools made from now on."""

import django.core.validators
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('registry', '0020_skill_history_baseline'),
    ]

    operations = [
        # Existing rows (and their history): v1.
        migrations.AddField(model_name='historicaltool', name='http_signing_scheme', field=models.CharField(choices=[('v2', 'v2: timestamp, method, URL, body digest'), ('v1', 'v1: timestamp and body')], default='v1', help_text='http kind: what the signature covers; docs/guides/http-tools.md "Signed calls".', max_length=2, verbose_name='HTTP signature scheme')),
        migrations.AddField(model_name='tool', name='http_signing_scheme', field=models.CharField(choices=[('v2', 'v2: timestamp, method, URL, body digest'), ('v1', 'v1: timestamp and body')], default='v1', help_text='http kind: what the signature covers; docs/guides/http-tools.md "Signed calls".', max_length=2, verbose_name='HTTP signature scheme')),
        # New rows: v2.
        migrations.AlterField(model_name='historicaltool', name='http_signing_scheme', field=models.CharField(choices=[('v2', 'v2: timestamp, method, URL, body digest'), ('v1', 'v1: timestamp and body')], default='v2', help_text='http kind: what the signature covers; docs/guides/http-tools.md "Signed calls".', max_length=2, verbose_name='HTTP signature scheme')),
        migrations.AlterField(model_name='tool', name='http_signing_scheme', field=models.CharField(choices=[('v2', 'v2: timestamp, method, URL, body digest'), ('v1', 'v1: timestamp and body')], default='v2', help_text='http kind: what the signature covers; docs/guides/http-tools.md "Signed calls".', max_length=2, verbose_name='HTTP signature scheme')),
        migrations.AlterField(
            model_name='historicaltool',
            name='http_signing_secret_env',
            field=models.CharField(blank=True, help_text='http kind: sign each request (X-MCP-Signature: HMAC-SHA256) with the secret in this variable, read at call time.', max_length=128, validators=[django.core.validators.RegexValidator('^[A-Za-z_][A-Za-z0-9_]*$', "An environment variable name: letters, digits, '_'.")], verbose_name='HTTP signing secret environment variable'),
        ),
        migrations.AlterField(
            model_name='tool',
            name='http_signing_secret_env',
            field=models.CharField(blank=True, help_text='http kind: sign each request (X-MCP-Signature: HMAC-SHA256) with the secret in this variable, read at call time.', max_length=128, validators=[django.core.validators.RegexValidator('^[A-Za-z_][A-Za-z0-9_]*$', "An environment variable name: letters, digits, '_'.")], verbose_name='HTTP signing secret environment variable'),
        ),
    ]
