"""Key strings shared by the KG loader and readers (one place, so both always agree)."""

from __future__ import annotations

import zlib

# Distinct triples per KGFacts bucket (a bucket holds each of its entities' triples in both directions).
# A cold KG action reads one whole bucket: 32 instead of 128 made cold actions 17-30 % faster on Neo4j and
# 1.0-2.3x on the embedded store (1.4x at batch 256), for ~2 % more store files (docs/BENCHMARKS.md,
# issue 23, fourth session). The count is stored per sample (KGSample.facts_buckets), so graphs loaded
# before stay readable.
FACTS_BUCKET_TRIPLES = 32


def sample_key(dataset: str, sample_id: str) -> str:
    """``KGSample.key``: ``<dataset>/<sample_id>``."""
    return f"{dataset}/{sample_id}"


def entity_key(dataset: str, name: str) -> str:
    """``KGEntity.key``: ``<dataset>/<name>`` (one entity per name per dataset)."""
    return f"{dataset}/{name}"


def fold(name: str) -> str:
    """The case-insensitive, trimmed form used for fallback matching."""
    return name.strip().lower()


def entity_lkey(dataset: str, name: str) -> str:
    """``KGEntity.lkey``: ``<dataset>/<folded name>``."""
    return f"{dataset}/{fold(name)}"


def facts_key(skey: str, bucket: int) -> str:
    """``KGFacts.key``: ``<sample key>|<bucket number>``."""
    return f"{skey}|{bucket}"


def facts_bucket_count(n_triples: int) -> int:
    """How many ``KGFacts`` buckets a sample of ``n_triples`` distinct triples is split into."""
    return max(1, -(-n_triples // FACTS_BUCKET_TRIPLES))


def facts_bucket(name: str, buckets: int) -> int:
    """The bucket holding entity ``name``: a stable hash of its folded form, so the exact and the
    case-insensitive match of a name always live in the same bucket."""
    return bucket_of_folded(fold(name), buckets)


def bucket_of_folded(folded: str, buckets: int) -> int:
    """:func:`facts_bucket` of a name already folded."""
    return bucket_hash(folded) % buckets if buckets > 1 else 0


def bucket_hash(folded: str) -> int:
    """The stable hash behind a name's bucket (its bucket is this modulo the sample's bucket count)."""
    return zlib.crc32(folded.encode("utf-8"))
