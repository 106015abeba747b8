"""``UpstreamConfig`` and ``UpstreamTarget``, defined with the serving specs
(``registry/serving/upstream.py``) so the specs carry them without an import cycle."""

from ..serving.upstream import UpstreamConfig, UpstreamTarget

__all__ = ["UpstreamConfig", "UpstreamTarget"]
