"""What cites the docs finds them: the README stays short and names pages that exist, and every
``docs/<page>.md`` a comment, docstring or config file cites exists, with the heading it quotes.
(Links inside docs/ are checked by ``mkdocs build --strict`` in the test command.)"""

from __future__ import annotations

import re
import subprocess
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
