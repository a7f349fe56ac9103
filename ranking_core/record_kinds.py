"""The kinds of saved record, in one registry: the name the database stores for each, how people
read it, and the stored parts every record of the kind has. The store
(:mod:`ranking_core.storage`), ``riskgrid records`` and the dashboard's Saved records page read
it. Nothing heavy is imported here, so the command line's help stays quick.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["KINDS", "RECORD_KINDS", "RecordKind"]


@dataclass(frozen=True)
class RecordKind:
    """One kind of saved record.

    Attributes
    ----------
    label : one record, in a sentence ("learned grid").
    heading : many records, as a heading ("Learned grids").
    blobs : the stored parts every record of the kind has (a record missing one is damaged).
    """

    label: str
    heading: str
    blobs: tuple[str, ...]


RECORD_KINDS: Mapping[str, RecordKind] = MappingProxyType(
    {
        "rating_set": RecordKind("rating set", "Rating sets", ("frame",)),
        "meter_data": RecordKind("meter data", "Meter data", ("frame",)),
        "learned_grid": RecordKind("learned grid", "Learned grids", ("grid",)),
        "seg_table": RecordKind("SEG table", "SEG tables", ("file",)),
    }
)
KINDS = tuple(RECORD_KINDS)  # the stored names, in the order lists show them
