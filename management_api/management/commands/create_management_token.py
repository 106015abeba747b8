"""``manage.py create_management_token USER --name NAME [--days N]``: issue a management API token.

Prints the token once (it is stored only as its SHA-256 digest) for automation to send as
``Authorization: Bearer mcpm_…`` to ``/api/v1/``. The token acts as USER, with USER's model
permissions; USER must be active staff for the API to let it in.
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
        parser.add_argument("username")
        parser.add_argument("--name", required=True, help="What the token is for, e.g. 'CI deploy'.")
        parser.add_argument("--days", type=float, default=None, help="Expire after this many days.")

    def handle(self, *args: Any, **options: Any) -> None:
        users = get_user_model()
        try:
            user = users.objects.get(**{users.USERNAME_FIELD: options["username"]})
        except users.DoesNotExist:
            raise CommandError(f"No user {options['username']!r}.") from None
        if not user.is_staff:
            self.stderr.write(f"Warning: {options['username']!r} is not staff: the API refuses the token.")
        expires = timezone.now() + timedelta(days=options["days"]) if options["days"] else None
        _, token = ManagementToken.issue(user, options["name"], expires)
        self.stdout.write(token)
