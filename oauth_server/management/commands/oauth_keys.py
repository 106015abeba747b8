"""``manage.py oauth_keys list|rotate [--algorithm ES256|RS256|PS256]``: the built-in authorization
server's signing keys. ``rotate`` makes a new key (published at once, signing after
``KEY_PUBLISH_SECONDS``) and retires the others once the tokens they signed have expired. Only
key ids and dates are printed: key material never leaves the database (docs/guides/oauth-server.md)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from oauth_server.keys import published, rotate


class Command(BaseCommand):
    help = "List or rotate the built-in authorization server's signing keys (no key material is shown)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=["list", "rotate"],
                            help="list: the keys and their state; rotate: a new key, the others retired.")
        parser.add_argument("--algorithm", choices=["ES256", "RS256", "PS256"], default=None,
                            help="rotate: the new key's algorithm (default: MCP_OAUTH_SIGNING_ALGORITHM).")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["action"] == "rotate":
            try:
                key = rotate(options["algorithm"])
            except ValueError as exc:
                raise CommandError(str(exc)) from None
            self.stdout.write(f"new signing key {key.kid} ({key.algorithm})")
            return
        now = timezone.now()
        for key in published():
            if key.retired_at is None:
                state = "current"
            elif key.retired_at > now:
                state = f"retiring, published until {key.retired_at:%Y-%m-%d %H:%M:%S}"
            else:
                state = "retired"
            self.stdout.write(
                f"{key.kid}  {key.algorithm}  created {key.created_at:%Y-%m-%d %H:%M:%S}  {state}"
            )
