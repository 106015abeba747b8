"""Create, list and revoke API keys for ``/mcp``.

    manage.py mcp_keys create "ci bot" --owner alice --tools search,fetch --expires-days 90
    manage.py mcp_keys list [--status active|expired|revoked]
    manage.py mcp_keys revoke 1a2b3c4d          # the key's prefix (or mcp_1a2b3c4d_…)

``create`` prints the token once, on stdout (alone, so scripts can capture it); it is not stored.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from access.models import STATUSES, ApiKey
from mcp_django.tables import table, when


def _list(value: str | None) -> list[str]:
    if value is None:
        return ["*"]
    return [v.strip() for v in value.split(",") if v.strip()]


class Command(BaseCommand):
    help = "Create, list and revoke API keys for /mcp."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        create = sub.add_parser("create", help="a new key; prints its token once")
        create.add_argument("name", help="what the key is for, e.g. 'ci bot'")
        create.add_argument("--owner", help="username of the key's owner")
        create.add_argument("--tools", help="comma-separated tool names (default: every tool, *)")
        create.add_argument("--resources", help="comma-separated resource URIs / URI templates (default *)")
        create.add_argument("--prompts", help="comma-separated prompt names (default *)")
        create.add_argument("--tags", default="", help="comma-separated tags granted too")
        create.add_argument("--expires-days", type=float, help="expire after this many days")
        create.add_argument("--rate", default="", help="N/S: this key's request rate")
        create.add_argument("--tool-rate", default="", help="N/S: this key's rate per tool")
        listing = sub.add_parser("list", help="every key: prefix, status, owner, expiry, last use, name")
        listing.add_argument("--status", choices=STATUSES, help="only the keys in this state")
        revoke = sub.add_parser("revoke", help="revoke a key by its prefix")
        revoke.add_argument("prefix", help="the key's prefix, as list shows it (mcp_<prefix>_… or <prefix>)")

    def handle(self, *args: Any, **options: Any) -> None:
        getattr(self, f"do_{options['action']}")(options)

    def do_create(self, options: dict[str, Any]) -> None:
        owner = None
        if options["owner"]:
            try:
                owner = get_user_model().objects.get(username=options["owner"])
            except get_user_model().DoesNotExist:
                raise CommandError(f"no user {options['owner']!r}") from None
        expires = options["expires_days"]
        if expires is not None and not 0 < expires < 36500:  # not an already expired key
            raise CommandError(f"--expires-days must be more than 0 (and under 100 years), not {expires:g}")
        key = ApiKey(
            name=options["name"],
            owner=owner,
            tools=_list(options["tools"]),
            resources=_list(options["resources"]),
            prompts=_list(options["prompts"]),
            tags=[t for t in _list(options["tags"]) if t != "*"],
            rate=options["rate"],
            tool_rate=options["tool_rate"],
            expires_at=timezone.now() + timedelta(days=expires) if expires is not None else None,
        )
        key.prefix, key.digest = "x", "x"  # placeholders for validation; replaced by issue()
        try:
            key.full_clean(exclude=["prefix", "digest"])
        except ValidationError as exc:
            problems = "; ".join(
                f"--{field.replace('_', '-')}: {' '.join(messages)}"
                for field, messages in exc.message_dict.items()
            )
            raise CommandError(f"key not created: {problems}") from None
        fields = {
            f: getattr(key, f)
            for f in ("owner", "tools", "resources", "prompts", "tags", "rate", "tool_rate", "expires_at")
        }
        created, token = ApiKey.issue(key.name, **fields)
        self.stderr.write(f"Created key {created} (id {created.pk}). The token, shown only now:")
        self.stdout.write(token)

    def do_list(self, options: dict[str, Any]) -> None:
        keys = ApiKey.objects.select_related("owner")
        if options["status"]:
            keys = keys.with_status(options["status"])
        rows = [
            (
                f"mcp_{key.prefix}_…",
                key.status,
                key.owner.get_username() if key.owner else "-",
                when(key.expires_at, "never"),
                when(key.last_used_at, "never"),
                key.name,
            )
            for key in keys
        ]
        for line in table(("KEY", "STATUS", "OWNER", "EXPIRES", "LAST USED", "NAME"), rows):
            self.stdout.write(line)

    def do_revoke(self, options: dict[str, Any]) -> None:
        prefix = options["prefix"].removeprefix("mcp_").split("_")[0]
        try:
            key = ApiKey.objects.get(prefix=prefix)
        except ApiKey.DoesNotExist:
            raise CommandError(f"no key with prefix {prefix!r}") from None
        key.revoke()
        self.stdout.write(f"Revoked {key}.")
