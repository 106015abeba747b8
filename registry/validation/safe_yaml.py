"""The one YAML loader of the project: ``load`` reads YAML as plain data, with no alias.

``yaml.safe_load`` already builds no objects from tags, but it expands aliases: a document of a
few hundred bytes whose anchors each repeat the previous one nine times ("billion laughs") becomes
millions of nodes, and what the importer or the skill loader then stores is that expansion
(issue 37 item 6: 570 bytes of OpenAPI became a 922 KB input schema, 329 bytes of ``SKILL.md``
1.9 MB of frontmatter). Hand-written OpenAPI documents and skill frontmatter do not need aliases,
and JSON (what both are stored as) has none, so an alias is refused with its line (YAML 1.2
§3.2.2.2 "Anchors and Aliases"); an anchor alone is harmless and is let through.

Every YAML reader of the project goes through ``load``; ``yaml.safe_dump`` stays as it is (it
writes no aliases for the plain trees it is given).
"""

from __future__ import annotations

from typing import Any

import yaml

YAMLError = yaml.YAMLError


class AliasRefused(yaml.YAMLError):
    pass


class NoAliasLoader(yaml.SafeLoader):
    """``SafeLoader`` whose composer refuses an alias where it meets one, before any expansion."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            mark = event.start_mark
            raise AliasRefused(f"YAML aliases are not accepted (*{event.anchor} at line {mark.line + 1}, "
                               f"column {mark.column + 1}): write the value out")
        return super().compose_node(parent, index)


def load(text: str | bytes) -> Any:
    """``text`` as plain data (``yaml.YAMLError``, or its ``AliasRefused``, when it is not)."""
    return yaml.load(text, Loader=NoAliasLoader)
