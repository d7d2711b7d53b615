"""Knowledge-graph loaders: RoG records, per-sample subgraph dirs, PathQuestion TSV -> the KG store."""

from ingest.kg.loader import LoadReport, load_path, load_records
from ingest.kg.records import KGRecord

__all__ = ["KGRecord", "LoadReport", "load_path", "load_records"]
