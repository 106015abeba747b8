"""Which server capabilities an endpoint advertises: those its content can honour (issue 40 item
3, "capabilities advertised only where some mirrored upstream has them").

A server declares the features it supports (basic/lifecycle.mdx "Capability Negotiation"; 2026-07-28
``server/discover``), and a client relies on them: ``completions`` means ``completion/complete``
answers, ``logging`` that log messages come, ``resources.subscribe`` that updates are sent,
``prompts`` that there are prompts to list. Our own definitions support everything the provider
offers (``ProviderCapabilities``). A definition mirrored from an upstream (``origin``: the
upstream's name) supports only what that upstream declared: a completion is asked of it, its log
messages are relayed, its resources are read from it. So an endpoint serving only mirrored
definitions advertises the union of its upstreams' capabilities, not ours.

The rule (``definitions.supported``, beside the snapshot that runs it), per snapshot (the whole
one for ``/mcp``, a virtual server's selection for ``/mcp/<slug>``), computed once when the
snapshot (or the endpoint's view of it) is built, never on a request:

- no sources recorded (a provider without upstreams), a definition or skill of our own in it, or
  nothing at all in it → ``None``: the provider's capabilities as they are (an empty endpoint
  keeps advertising what its own definitions could be, as before);
- else what is really there: ``tools``, ``resources``, ``prompts`` for the kinds it serves (an
  upstream declaring prompts, whose prompts this endpoint does not select, gives it none), and of
  what the upstreams its definitions come from declared (their last handshake), ``logging``,
  ``completions`` (where it serves prompts or resource templates, what completion completes) and
  ``resources.subscribe`` (where it serves resources).

``listChanged`` is ours whatever the source (our fan-out announces every mirrored change), so it
is not narrowed; nor are the tasks and skills extensions (our task runner wraps any tool; skills
are our own).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from .definitions import Snapshot
from .provider import ProviderCapabilities

# The ProviderCapabilities flags a source may lack.
FLAGS = ("tools", "resources", "resources_subscribe", "prompts", "completions", "logging")


def declared(capabilities: Mapping[str, Any]) -> frozenset[str]:
    """The flags of a server's wire ``ServerCapabilities`` (an upstream's, as its handshake said)."""
    flags = {name for name in ("tools", "resources", "prompts", "completions", "logging")
             if isinstance(capabilities.get(name), dict)}
    resources = capabilities.get("resources")
    if isinstance(resources, dict) and resources.get("subscribe") is True:
        flags.add("resources_subscribe")
    return frozenset(flags)


def narrowed(capabilities: ProviderCapabilities, snapshot: Snapshot | None) -> ProviderCapabilities:
    """``capabilities`` less what ``snapshot``'s content does not support."""
    features = None if snapshot is None else snapshot.features
    if features is None:
        return capabilities
    return dataclasses.replace(
        capabilities, **{flag: getattr(capabilities, flag) and flag in features for flag in FLAGS})
