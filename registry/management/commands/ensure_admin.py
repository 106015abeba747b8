"""``manage.py ensure_admin``: create a superuser from the environment, once, if asked to.

For deployments (compose's one-shot ``migrate`` service): with ``DJANGO_SUPERUSER_USERNAME`` and
``DJANGO_SUPERUSER_PASSWORD`` set (and optionally ``DJANGO_SUPERUSER_EMAIL``, the variables
Django's own ``createsuperuser --noinput`` reads), the user is created unless it exists; without
them nothing happens. Never prints the password; an existing user is left untouched, so a
restart never resets a password changed since.
"""

from __future__ import annotations

import os
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError


class Command(BaseCommand):
    help = "Create the superuser named by DJANGO_SUPERUSER_USERNAME/PASSWORD if it does not exist."

    def handle(self, *args: Any, **options: Any) -> None:
        username = os.environ.get("DJANGO_SUPERUSER_USERNAME", "").strip()
        password = os.environ.get("DJANGO_SUPERUSER_PASSWORD", "")
        if not username:
            self.stdout.write("No DJANGO_SUPERUSER_USERNAME: no admin created.")
            return
        if not password:
            raise CommandError("DJANGO_SUPERUSER_USERNAME is set but DJANGO_SUPERUSER_PASSWORD is empty")
        users = get_user_model()
        if users.objects.filter(username=username).exists():
            self.stdout.write(f"Admin '{username}' exists; left unchanged.")
            return
        email = os.environ.get("DJANGO_SUPERUSER_EMAIL", "")
        try:  # the model's own rules (username characters, the e-mail's form) and the password's
            users(username=username, email=email).full_clean(exclude=["password"])
            validate_password(password, users(username=username, email=email))
        except ValidationError as exc:
            raise CommandError(f"admin not created: {' '.join(exc.messages)}") from None
        users.objects.create_superuser(username=username, email=email, password=password)
        self.stdout.write(f"Admin '{username}' created.")
