"""The link a URL elicitation carries (``/connect/<provider>/?ref=...``): a reference signed with
the server's ``SECRET_KEY`` (``django.core.signing``, its own salt), naming the user it was made
for, the provider and the elicitation; valid for ``MAX_AGE`` seconds and for one connect flow
(its nonce becomes ``ConnectAttempt.reference``, a unique column). The page refuses a reference
signed for another user, another provider, an old one, or one already used.

2025-11-25 client/elicitation.mdx "Safe URL Handling": the URL names no credential of the user
and nothing the client could use on its own; it only lets the signed-in user start a flow.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from django.core import signing

SALT = "connections.reference"
MAX_AGE = 600  # s


class BadReference(ValueError):
    pass


@dataclass(frozen=True)
class Reference:
    user_id: int
    provider: str
    elicitation_id: str
    nonce: str


def make(user_id: int, provider: str, elicitation_id: str) -> str:
    return signing.dumps({"u": user_id, "p": provider, "e": elicitation_id, "n": secrets.token_urlsafe(18)},
                         salt=SALT, compress=True)


def read(text: str) -> Reference:
    try:
        data = signing.loads(text, salt=SALT, max_age=MAX_AGE)
    except signing.SignatureExpired:
        raise BadReference("this link has expired: call the tool again for a new one") from None
    except signing.BadSignature:
        raise BadReference("this link is not valid") from None
    try:
        return Reference(int(data["u"]), str(data["p"]), str(data["e"]), str(data["n"]))
    except (KeyError, TypeError, ValueError):
        raise BadReference("this link is not valid") from None
