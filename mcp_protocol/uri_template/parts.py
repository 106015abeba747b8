"""What a parsed RFC 6570 template is made of: its expressions and their variables."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

Value = str | Sequence[str] | Mapping[str, str]


class TemplateSyntaxError(ValueError):
    pass


@dataclass(frozen=True)
class VarSpec:
    name: str
    explode: bool = False
    prefix: int | None = None  # {var:3}: at most the first 3 characters of the value (§2.4.1)


@dataclass(frozen=True)
class Expression:
    operator: str
    variables: tuple[VarSpec, ...]


Part = str | Expression
