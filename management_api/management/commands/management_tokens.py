"""``manage.py management_tokens list [--user USER]`` and ``management_tokens revoke ID...``: the
management API tokens of ``/api/v1/`` (``management_api/tokens.py``) from the shell, as the admin
lists and deletes them. ``create_management_token`` issues one.

``list`` prints each token's id, its user, its hint (the first characters: the token itself is not
stored), its expiry and last use, and its name. ``revoke`` deletes the row, as the admin's delete
does: the token's digest is then unknown, so the next request with it is a 401.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from management_api.tokens import ManagementToken
from mcp_django.tables import table, when


class Command(BaseCommand):
    help = "List or revoke management API tokens (create_management_token issues them)."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        listing = sub.add_parser("list", help="every token: id, user, hint, expiry, last use, name")
        listing.add_argument("--user", help="only the tokens acting as this username")
        revoke = sub.add_parser(
            "revoke", help="revoke tokens by id (as list shows it); they stop working at once"
        )
        revoke.add_argument("ids", nargs="+", type=int, metavar="ID", help="a token's id, from list")

    def handle(self, *args: Any, **options: Any) -> None:
        getattr(self, f"do_{options['action']}")(options)

    def do_list(self, options: dict[str, Any]) -> None:
        tokens = ManagementToken.objects.select_related("user")
        if options["user"]:
            tokens = tokens.filter(user__username=options["user"])
        rows = [
            (
                str(t.pk),
                t.user.get_username(),
                f"{t.hint}…",
                "expired" if t.expired else when(t.expires_at, "never"),
                when(t.last_used_at, "never"),
                t.name,
            )
            for t in tokens
        ]
        for line in table(("ID", "USER", "HINT", "EXPIRES", "LAST USED", "NAME"), rows):
            self.stdout.write(line)

    def do_revoke(self, options: dict[str, Any]) -> None:
        ids = options["ids"]
        found = {t.pk: t for t in ManagementToken.objects.select_related("user").filter(pk__in=ids)}
        unknown = [str(i) for i in ids if i not in found]
        if unknown:  # nothing revoked: a typo must not leave the caller guessing which went
            raise CommandError(
                f"no management API token with id {', '.join(unknown)}; see management_tokens list"
            )
        for token in found.values():
            token.delete()
            self.stdout.write(f"Revoked {token} of {token.user.get_username()}.")
