"""Which lapsed leases a sweep takes over (``tasks/lapses.py``, issue 38 item 1): only those seen
lapsed across ``window`` with the store answering every sweep between; a failed sweep (the store
away) forgets every sighting, so an outage longer than a lease never makes a live owner dead."""

from __future__ import annotations

from mcp_protocol.tasks.lapses import Sightings


def test_a_lease_is_taken_over_only_once_seen_lapsed_for_the_window() -> None:
    sightings = Sightings(window=5.0)
    assert sightings.due(["t1"], now=100.0) == []  # first seen: not yet
    assert sightings.due(["t1", "t2"], now=103.0) == []
    assert sightings.due(["t1", "t2"], now=105.0) == ["t1"]
    assert sightings.due(["t2"], now=108.0) == ["t2"]


def test_a_renewed_lease_is_forgotten_and_seen_afresh_if_it_lapses_again() -> None:
    sightings = Sightings(window=5.0)
    sightings.due(["t1"], now=100.0)
    assert sightings.due([], now=102.0) == []  # renewed by its owner meanwhile
    assert sightings.due(["t1"], now=106.0) == []  # lapsed again: a new first sighting
    assert sightings.due(["t1"], now=111.0) == ["t1"]


def test_a_failed_sweep_forgets_every_sighting() -> None:
    sightings = Sightings(window=5.0)
    sightings.due(["t1"], now=100.0)
    sightings.forget()  # the store was away: that time does not count
    assert sightings.due(["t1"], now=112.0) == []
    assert sightings.due(["t1"], now=117.0) == ["t1"]
