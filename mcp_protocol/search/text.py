"""Text to index terms: identifiers split, words lower-cased, stop words dropped, stems.

Names are split on ``_``, ``.``, ``-`` and camelCase (``chat.postMessage`` → chat, post,
message), and every word is reduced to its Snowball (Porter 2) English stem by PyStemmer, the C
build of the Snowball stemmers, so "uploads", "uploaded" and "uploading" meet "upload". Stems
are cached: a catalog's vocabulary is a few thousand words, and stemming dominated an
uncached build.
"""

from __future__ import annotations

import re
from functools import lru_cache

import Stemmer

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_STEMMER = Stemmer.Stemmer("english")

# Function words that carry no intent in a tool query ("how do I get the list of my files").
STOP_WORDS = frozenset(
    "a an and any are as at be by can do does for from how i if in into is it its me my of on "
    "or our so some that the their them then there these this those to via want was we what "
    "when where which who will with would you your".split()
)


def words(text: str) -> list[str]:
    """Lower-case words of ``text``, names split on ``_``, ``.``, ``-`` and camelCase."""
    return [w.lower() for w in _WORD.findall(text or "")]


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    return str(_STEMMER.stemWord(word))


def terms(text: str) -> list[str]:
    """The index terms of ``text``: its words less stop words, stemmed."""
    return [stem(w) for w in words(text) if w not in STOP_WORDS]
