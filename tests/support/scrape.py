"""Reading ``/metrics`` in tests: one scrape parsed with prometheus_client's own text parser."""

from __future__ import annotations

from collections.abc import Mapping

import httpx
from prometheus_client.parser import text_string_to_metric_families


class Scrape:
    def __init__(self, text: str) -> None:
        self.samples: list[tuple[str, dict[str, str], float]] = [
            (s.name, dict(s.labels), s.value)
            for family in text_string_to_metric_families(text)
            for s in family.samples
        ]

    def value(self, name: str, **labels: str) -> float:
        """The sum of the samples of ``name`` whose labels include ``labels`` (0 when none)."""
        return sum(v for n, ls, v in self.samples if n == name and _within(labels, ls))

    def has(self, name: str) -> bool:
        return any(n == name for n, _, _ in self.samples)


def _within(wanted: Mapping[str, str], labels: Mapping[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in wanted.items())


def scrape(base_url: str, **kwargs: object) -> Scrape:
    response = httpx.get(f"{base_url}/metrics", timeout=10, **kwargs)  # type: ignore[arg-type]
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    return Scrape(response.text)
