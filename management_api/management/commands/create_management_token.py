"""``manage.py create_management_token --user USER --name NAME [--days N]``: issue a management API
token.

Prints the token once (it is stored only as its SHA-256 digest) for automation to send as
``Authorization: Bearer mcpm_…`` to ``/api/v1/``. The token acts as USER, with USER's model
permissions.

Who may mint for whom: the admin lets a staff user add tokens only for themselves (a superuser for
anyone). This command is run by an operator with shell access, who holds the database and
``SECRET_KEY`` already, so it may issue a token for any user; but the user is always named
explicitly (``--user``: no positional, no default), and must be active staff, since the API refuses
anyone else's token. ``--days`` is a positive number of days up to ``MAX_DAYS``; the token is
validated by the model's own ``full_clean`` (its name, its expiry) before it is stored.
"""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from management_api.tokens import ManagementToken

MAX_DAYS = 3650  # ten years: longer is a token that never expires, which is no --days at all


class Command(BaseCommand):
    help = "Issue a management API token for a user and print it (once)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", required=True, help="The user the token acts as (active staff).")
        parser.add_argument("--name", required=True, help="What the token is for, e.g. 'CI deploy'.")
        parser.add_argument("--days", type=float, default=None,
                            help=f"Expire after this many days (more than 0, at most {MAX_DAYS}).")

    def handle(self, *args: Any, **options: Any) -> None:
        users = get_user_model()
        try:
            user = users.objects.get(**{users.USERNAME_FIELD: options["user"]})
        except users.DoesNotExist:
            raise CommandError(f"No user {options['user']!r}.") from None
        if not (user.is_active and user.is_staff):
            raise CommandError(f"{options['user']!r} is not active staff: the API would refuse the token.")
        days = options["days"]
        if days is not None and not (math.isfinite(days) and 0 < days <= MAX_DAYS):
            raise CommandError(f"--days must be more than 0 and at most {MAX_DAYS}, not {days:g}.")
        expires = timezone.now() + timedelta(days=days) if days is not None else None
        try:
            _, token = ManagementToken.issue(user, options["name"], expires)
        except ValidationError as exc:
            problems = "; ".join(f"{field}: {' '.join(errors)}" for field, errors in exc.message_dict.items())
            raise CommandError(f"Not a valid token: {problems}") from None
        self.stdout.write(token)
