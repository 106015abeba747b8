"""``manage.py ensure_dev_admin``: make sure a development superuser exists and say how to log in.

Used by ``scripts/serve.sh`` (the README's first command). Only with ``DEBUG`` on: a production
deployment creates its admins deliberately (``createsuperuser``). The user is ``admin`` and the
password is ``$MCP_DEV_ADMIN_PASSWORD`` (default ``admin``); an existing user is left untouched.
"""

from __future__ import annotations

import os
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser


class Command(BaseCommand):
    help = "Create the development superuser 'admin' if it does not exist (DEBUG only)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--username", default="admin",
                            help="The superuser's username (default admin); left alone if it exists.")

    def handle(self, *args: Any, **options: Any) -> None:
        if not settings.DEBUG:
            self.stdout.write("DEBUG is off: no development admin created (use createsuperuser).")
            return
        username = options["username"]
        password = os.environ.get("MCP_DEV_ADMIN_PASSWORD", "admin")
        users = get_user_model()
        if users.objects.filter(username=username).exists():
            self.stdout.write(f"Admin login: user '{username}' (already exists; password unchanged).")
            return
        users.objects.create_superuser(username=username, email="", password=password)
        shown = "$MCP_DEV_ADMIN_PASSWORD" if "MCP_DEV_ADMIN_PASSWORD" in os.environ else f"'{password}'"
        self.stdout.write(f"Admin login: user '{username}', password {shown} (development only).")
