"""prometheus_client internals the metrics flush relies on.

A ``Histogram`` child keeps one counter value per bucket (``_buckets``, not cumulative, in the
order of its upper bounds) and one for the sum (``_sum``); ``observe()`` adds one observation, and
there is no public way to add the many a process tallied since its last flush
(``transports/metrics.py``, multiprocess mode).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def add_observations(child: Any, bucket_counts: Iterable[float], total: float) -> None:
    """Add, to the histogram ``child``, ``bucket_counts`` observations per bucket (not cumulative,
    one per upper bound in order) whose values add up to ``total``."""
    for bucket, observed in zip(child._buckets, bucket_counts, strict=True):
        if observed:
            bucket.inc(observed)
    child._sum.inc(total)
