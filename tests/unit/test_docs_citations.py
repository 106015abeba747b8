"""What cites the docs finds them: the README stays short and names pages that exist, and every
``docs/<page>.md`` a comment, docstring or config file cites exists, with the heading it quotes.
(Links inside docs/ are checked by ``mkdocs build --strict`` in the test command.)"""

from __future__ import annotations

import ast
import io
import re
import subprocess
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# A path under one of this site's own folders or pages ("docs/gen-ai/mcp.md" of another project
# cited in a comment is not ours).
OURS = "|".join(re.escape(entry.name) for entry in sorted((ROOT / "docs").iterdir()))
CITATION = re.compile(rf'(docs/(?:{OURS})(?:/[\w/-]+(?:\.md)?)?)(?:\s+"([^"\n]+)")?')
HEADING = re.compile(r"^#+\s+(.*?)\s*$", re.MULTILINE)


def tracked(*patterns: str) -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "--", *patterns], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return [ROOT / name for name in listed if not name.startswith("docs/")]


def headings(page: Path) -> set[str]:
    return {title.replace("`", "") for title in HEADING.findall(page.read_text())}


def test_the_readme_is_short() -> None:
    assert len((ROOT / "README.md").read_text().splitlines()) < 200


def test_every_cited_docs_page_exists_with_the_heading_it_quotes() -> None:
    sources = tracked("*.py", "*.toml", "*.sh", "*.yaml", "*.yml", "*.html", "*Dockerfile", "README.md")
    cited = []
    for source in sources:
        for page, heading in CITATION.findall(source.read_text()):
            target = ROOT / page
            where = f"{source.relative_to(ROOT)} cites {page}"
            assert target.exists(), f"{where}, which does not exist"
            if heading and target.is_file():
                assert heading.replace("`", "") in headings(target), f'{where} "{heading}": no such heading'
            cited.append(page)
    # The check is live: the settings module, the README and the http kind cite pages.
    assert {"docs/reference/settings.md", "docs/guides/http-tools.md", "docs/getting-started.md"} <= set(
        cited
    )


# Spec citations ([L] basic/transports.mdx, [26] server/discover, [06+], [24]-[11], SEP-1699) in the
# product's comments and docstrings, each key listed in docs/reference/spec-citations.md.
PRODUCT = ("mcpsite", "mcp_protocol", "mcp_django", "registry", "access", "oauth_server", "management_api")
SPEC_CITATIONS = ROOT / "docs" / "reference" / "spec-citations.md"
# A run of bracketed tokens not indexing anything (no name, `]` or `)` before it): `[L][26]`.
BRACKET_RUN = re.compile(r"(?<![\w\])\[])((?:\[[^\[\]\s]{1,12}\][+-]?)+)")
# What a citation key looks like: a revision's two digits, an era's capital, a revision's date,
# each optionally "and later" (+). Other bracketed words in prose ("[redacted]") are not keys.
KEY_SHAPE = re.compile(r"\d{2}\+?|[A-Z]\+?|\d{4}-\d{2}-\d{2}")
SEP = re.compile(r"\bSEP-(\d+)\b")


def comments_and_docstrings(path: Path) -> list[tuple[int, str]]:
    source = path.read_text()
    found = [
        (token.start[0], token.string)
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT
    ]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            docstring = ast.get_docstring(node, clean=False)
            if docstring:
                found.append((node.body[0].lineno, docstring))
    return found


def citation_keys(text: str) -> list[str]:
    keys = []
    for run in BRACKET_RUN.findall(text):
        keys += [k for k in re.findall(r"\[([^\[\]]+)\]", run) if KEY_SHAPE.fullmatch(k)]
    return keys


def listed_keys() -> tuple[set[str], set[str]]:
    """The keys and SEP numbers the page lists (a backticked `[key]` or `SEP-n` opening a row)."""
    page = SPEC_CITATIONS.read_text()
    keys = set(re.findall(r"^\| `\[([^\]]+)\]` \|", page, re.MULTILINE))
    dates = set(re.findall(r"^\| `\[[^\]]+\]` \| (\d{4}-\d{2}-\d{2}) \|", page, re.MULTILINE))
    return keys | dates, set(re.findall(r"^\| SEP-(\d+) \|", page, re.MULTILINE))


def resolves(key: str, listed: set[str]) -> bool:
    return key.removesuffix("+") in listed


def test_every_spec_citation_key_in_the_product_code_is_listed() -> None:
    listed, seps = listed_keys()
    assert {"L", "M", "24", "03", "06", "11", "26", "2026-07-28"} <= listed
    unlisted, cited = [], set()
    for source in tracked(*(f"{package}/*.py" for package in PRODUCT)):
        for line, text in comments_and_docstrings(source):
            where = f"{source.relative_to(ROOT)}:{line}"
            for key in citation_keys(text):
                cited.add(key)
                if not resolves(key, listed):
                    unlisted.append(f"{where} [{key}]")
            unlisted += [f"{where} SEP-{n}" for n in SEP.findall(text) if n not in seps]
    assert not unlisted, f"not in {SPEC_CITATIONS.relative_to(ROOT)}: {unlisted}"
    # The check is live: the core cites the legacy era and the modern revision by key.
    assert {"L", "26", "11", "06+"} <= cited


def test_a_citation_key_is_told_from_indexing_and_prose() -> None:
    assert citation_keys('([L] basic/transports.mdx "Session Management")') == ["L"]
    assert citation_keys("[L][26] basic/transports.mdx; [24]-[11]; [06+]") == ["L", "26", "24", "11", "06+"]
    assert citation_keys("entries[i][2], self._keys(tid)[2], a [redacted] value, list[Any]") == []
    assert not resolves("Q", listed_keys()[0])
