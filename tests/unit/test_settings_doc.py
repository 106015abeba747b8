"""The settings reference (docs/reference/settings.md) is what ``mcpsite.settings_doc`` generates
from the code, names every variable the settings read, and quotes their inline defaults right."""

from __future__ import annotations

import re
from pathlib import Path

from mcpsite import settings_doc

ROOT = Path(__file__).resolve().parents[2]
# Where variables are read with a default written inline (the rest come from code: settings_doc.Code).
READERS = [
    "mcpsite/settings.py",
    "mcpsite/fleet.py",
    "registry/management/commands/ensure_dev_admin.py",
    "registry/management/commands/ensure_admin.py",
    "scripts/serve.sh",
]
VARIABLE = r"(?:MCP|DJANGO|REGISTRY|API)_[A-Z_]+|SECRET_KEY|REDIS_URL|DATABASE_URL"
INLINE_DEFAULT = [
    re.compile(rf'os\.environ\.get\("({VARIABLE})", "([^"]*)"\)'),  # Python: os.environ.get(NAME, "x")
    re.compile(rf"\$\{{({VARIABLE}):-([^}}]*)\}}"),  # shell: ${NAME:-x}
    # mcpsite/environment.py: env(NAME, parser, literal), a number or a string literal
    re.compile(rf'\benv\("({VARIABLE})", \w+, "?(-?[\d.]+|[^",()]*?)"?\)'),
]
BOOLEAN_DEFAULT = re.compile(rf'env_bool\("({VARIABLE})", (True|False)\)')


def test_the_committed_settings_page_is_the_generated_one() -> None:
    assert settings_doc.PAGE.read_text() == settings_doc.generate(), (
        "docs/reference/settings.md is out of date: run .venv/bin/python -m mcpsite.settings_doc"
    )


def test_every_variable_the_settings_read_is_documented() -> None:
    source = (ROOT / "mcpsite/settings.py").read_text()
    read = set(re.findall(rf'"({VARIABLE})"', source))
    documented = {var.name for var in settings_doc.variables()}
    assert read, "no variable found: the pattern no longer matches settings.py"
    assert read - documented == set()


def test_defaults_written_inline_are_quoted_as_written() -> None:
    quoted = {
        var.name: match.group(1)
        for var in settings_doc.variables()
        if isinstance(var.default, settings_doc.Text)
        and (match := re.fullmatch(r"`([^`]*)`", var.default.text))
    }
    seen = []
    for path in READERS:
        source = (ROOT / path).read_text()
        found = [(m.group(1), m.group(2)) for pattern in INLINE_DEFAULT for m in pattern.finditer(source)]
        found += [
            (m.group(1), "1" if m.group(2) == "True" else "0") for m in BOOLEAN_DEFAULT.finditer(source)
        ]
        for name, default in found:
            if name in quoted:
                seen.append(name)
                assert quoted[name] == default, (
                    f"{path} defaults {name} to {default!r}, the page says {quoted[name]!r}"
                )
    # The check is live: the common inline defaults were found where they are read.
    assert {
        "MCP_KEY_PREFIX",
        "MCP_AUDIT_RETENTION_DAYS",
        "API_THROTTLE_USER",
        "MCP_BIND_PORT",
        "DJANGO_DEBUG",
    } <= set(seen)


def test_a_default_read_from_code_follows_the_code(monkeypatch) -> None:
    from mcp_django import conf

    monkeypatch.setitem(conf.DEFAULTS, "SESSION_TTL", 42.0)
    assert "| `MCP_SESSION_TTL` | `42` |" in settings_doc.generate()
