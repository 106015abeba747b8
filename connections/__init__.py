"""Acting for the user (issue 42 items 1-3): providers (third-party OAuth authorization servers an
operator registers), the token vault (one token per user and provider, encrypted at rest), and the
connect page that gets a user's token by the provider's authorization code flow with PKCE.

- ``models``: ``Provider``, ``ConnectedToken`` (the vault's rows), ``ConnectAttempt`` (one run of
  the connect flow: its signed reference used once, its ``state`` and PKCE verifier);
- ``cipher``: the vault's MultiFernet from ``CONNECTIONS_VAULT_KEYS`` (first key encrypts, all
  decrypt: rotation without downtime);
- ``vault``: store, read (cached, so a tool call does not touch the database), refresh (one in
  flight per token), revoke;
- ``provider_client``: the token, refresh and revocation requests, through the outbound rules;
- ``reference``: the signed, short-lived, single-use link a URL elicitation carries;
- ``credentials``: ``credential_for(principal, provider, elicitation_id)``, what an http tool (and
  later an upstream server's call path) asks for a user's token;
- ``views``: ``/connect/<provider>/``, its callback, and the user's "Connected services" page.
"""
