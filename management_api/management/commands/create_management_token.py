"""``manage.py create_management_token --user USER --name NAME [--days N]``: issue a management API
token.

Prints the token once (it is stored only as its SHA-256 digest) for automation to send as
``Authorization: Bearer mcpm_…`` to ``/api/v1/``. The token acts as USER, with USER's model
permissions.

Who may mint for whom: the admin lets a staff user add tokens only for themselves (a superuser for
anyone). This command is run by an operator with shell access, who holds the database and
``SECRET_KEY`` already, so it may issue a token for any user; but the user is always named
explicitly (``--user``: no positional, no default), and must be active staff, since the API refuses
anyone else's token.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from management_api.tokens import ManagementToken


class Command(BaseCommand):
    help = "Issue a management API token for a user and print it (once)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", required=True, help="The user the token acts as (active staff).")
        parser.add_argument("--name", required=True, help="What the token is for, e.g. 'CI deploy'.")
        parser.add_argument("--days", type=float, default=None, help="Expire after this many days.")

    def handle(self, *args: Any, **options: Any) -> None:
        users = get_user_model()
        try:
            user = users.objects.get(**{users.USERNAME_FIELD: options["user"]})
        except users.DoesNotExist:
            raise CommandError(f"No user {options['user']!r}.") from None
        if not (user.is_active and user.is_staff):
            raise CommandError(f"{options['user']!r} is not active staff: the API would refuse the token.")
        expires = timezone.now() + timedelta(days=options["days"]) if options["days"] else None
        _, token = ManagementToken.issue(user, options["name"], expires)
        self.stdout.write(token)
