"""The five buckets of the metric, worst to best: the order of every table."""

from __future__ import annotations

from typing import NamedTuple


class Bucket(NamedTuple):
    key: str
    label: str
    meaning: str


BUCKETS: tuple[Bucket, ...] = (
    Bucket("explore_again", "explore again", "insufficient: did not answer"),
    Bucket("read_returned", "Read a file we returned", "allocation: right file, wrong bytes"),
    Bucket("read_missed", "Read a file we did not return", "recall: file never surfaced"),
    Bucket("search", "Grep/Glob", "recall (weak): still hunting for the file"),
    Bucket("sufficient", "moved on / answered", "sufficient"),
)
KEYS: tuple[str, ...] = tuple(b.key for b in BUCKETS)


_ZERO_COUNTS = dict.fromkeys(KEYS, 0)


def zero_counts() -> dict[str, int]:
    """A fresh ``{bucket: 0}`` mapping in the contract's order (a copy: one is made per
    transcript, and a copy costs ~75 ns, dict.fromkeys of a tuple ~650)."""
    return _ZERO_COUNTS.copy()
