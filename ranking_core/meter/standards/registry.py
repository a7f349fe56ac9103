"""Acceptance standards: the accuracy rules a meter or a CGM is judged by, one registry.

Each :class:`Standard` is one published rule set with its criteria; each :class:`Criterion`
quotes its text, paragraph, threshold and boundary. Glucose is in mg/dL; "within ±x mg/dL" and
"within ±x %" include the boundary (|BGM − REF| ≤ x, 100·|BGM − REF| ≤ x·REF). The device type
("bgm", "cgm") of a standard decides which one ``riskgrid meter-report`` judges by default.

The texts are quoted as we read them; where a document could not be opened while writing this
module the entry says so in ``checked``. To add a standard: one :class:`Standard` below, one line
in :data:`STANDARDS`, and a test of its criteria on pairs whose verdict is known by hand.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = [
    "DEVICES",
    "RULES",
    "STANDARDS",
    "Criterion",
    "PairsView",
    "Standard",
    "UnknownProfileError",
    "get_profile",
    "profile_names",
    "profile_title",
    "profiles",
]

# how a criterion's verdict is reached (the words the report prints)
RULES = {
    "share": "observed share ≥ required",
    "lower-bound": "95 % lower bound > required",
    "none": "no pair allowed",
    "at-most": "observed share ≤ required",
}
DEVICES = {"bgm": "blood glucose meter", "cgm": "continuous glucose monitor"}


class UnknownProfileError(ValueError):
    """No standard of that name; the message lists the registered names."""


@dataclass(frozen=True)
class PairsView:
    """What a criterion reads: reference and device glucose (mg/dL, as measured) and, for the
    rate-of-change criteria, both rates in mg/dL/min (NaN where none could be computed)."""

    ref: NDArray[np.float64]
    bgm: NDArray[np.float64]
    ref_rate: NDArray[np.float64] | None = None
    sensor_rate: NDArray[np.float64] | None = None
    parkes_type: int = 1


Select: TypeAlias = "Callable[[PairsView], tuple[NDArray[np.bool_], NDArray[np.bool_]]]"


@dataclass(frozen=True)
class Criterion:
    """One acceptance criterion.

    ``select(pairs)`` gives (scope, hit): the pairs the criterion is over and, among them, the
    ones it counts (within the limit; for ``rule="none"`` and ``"at-most"``, the errors).
    ``companion`` is a second reading printed beside the first, as (column prefix, label,
    select): the reference-conditional share of J and K, criterion I at > 180 mg/dL.
    ``text`` quotes the published criterion and ``paragraph`` names where it stands.
    """

    id: str
    label: str
    required_percent: float
    rule: str
    select: Select = field(repr=False)
    text: str = ""
    paragraph: str = ""
    needs: str = ""
    companion: tuple[str, str, Select] | None = field(default=None, repr=False)


@dataclass(frozen=True)
class Standard:
    """A named rule set: its criteria, the device it is for, its citation and, where the rules
    apply only inside the device's measuring range, that range in mg/dL (by the device's
    reading; ``None``: every pair)."""

    name: str
    title: str
    device: str
    citation: str
    criteria: tuple[Criterion, ...]
    measuring_range: tuple[float, float] | None = None
    checked: str = ""


def within(
    ref: NDArray[np.float64], bgm: NDArray[np.float64], mgdl: float, percent: float, cut: float
) -> NDArray[np.bool_]:
    """|BGM − REF| ≤ ``mgdl`` when REF < ``cut`` mg/dL, 100·|BGM − REF| ≤ ``percent``·REF from
    ``cut`` on (boundaries included)."""
    import numpy as np  # on use: the standards' names and texts load without it (--help)

    gap = np.abs(bgm - ref)
    return np.where(ref < cut, gap <= mgdl, 100.0 * gap <= percent * ref)


def _every(values: NDArray[np.float64]) -> NDArray[np.bool_]:
    import numpy as np

    return np.ones(values.size, dtype=bool)


def _all(d: PairsView) -> NDArray[np.bool_]:
    return _every(d.ref)


def _by_reference(mgdl: float, percent: float, cut: float) -> Select:
    """Every pair; hit when within ±``mgdl`` below REF ``cut`` and ±``percent`` from it on."""
    return lambda d: (_all(d), within(d.ref, d.bgm, mgdl, percent, cut))


def _parkes_ab(d: PairsView) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    from ranking_core.grids.registry import ZoneGrid, get_grid

    zone = get_grid(f"parkes-type{d.parkes_type}", ZoneGrid).zone_index(d.ref, d.bgm)
    return _all(d), zone <= 1


ISO15197 = Standard(
    name="iso15197",
    title="ISO 15197:2013",
    device="bgm",
    citation="ISO 15197:2013, In vitro diagnostic test systems — Requirements for blood-glucose "
    "monitoring systems for self-testing in managing diabetes mellitus, §6.3.3",
    criteria=(
        Criterion(
            "1",
            "within ±15 mg/dL (REF < 100 mg/dL) or ±15 % (REF ≥ 100 mg/dL)",
            95.0,
            "share",
            _by_reference(15, 15, 100),
            text="95 % of the measured glucose values shall fall within either ±15 mg/dL of the "
            "average measured values of the reference measurement procedure at glucose "
            "concentrations < 100 mg/dL or within ±15 % at glucose concentrations ≥ 100 mg/dL.",
            paragraph="§6.3.3 a)",
        ),
        Criterion(
            "2",
            "in Parkes error grid zones A and B",
            99.0,
            "share",
            _parkes_ab,
            text="99 % of individual glucose measured values shall fall within zones A and B of "
            "the Consensus Error Grid (CEG) for type 1 diabetes.",
            paragraph="§6.3.3 b)",
        ),
    ),
    checked="§6.3.3 as quoted in the SEG tool's documentation and Freckmann et al. 2012; the "
    "standard itself is sold and was not opened here",
)
FDA_OTC = Standard(
    name="fda-otc",
    title="FDA OTC SMBG guidance (2020)",
    device="bgm",
    citation="FDA, Self-Monitoring Blood Glucose Test Systems for Over-the-Counter Use, guidance "
    "for industry and FDA staff, September 2020 (first issued October 2016), section on "
    "clinical accuracy",
    criteria=(
        Criterion(
            "1",
            "within ±15 % of the comparator, over the whole range",
            95.0,
            "share",
            _by_reference(0, 15, 0),
            text="95 % of all SMBG results within ±15 % of the comparator results across the "
            "entire claimed measuring range of the device.",
            paragraph="clinical accuracy, first criterion",
        ),
        Criterion(
            "2",
            "within ±20 % of the comparator, over the whole range",
            99.0,
            "share",
            _by_reference(0, 20, 0),
            text="99 % of all SMBG results within ±20 % of the comparator results across the "
            "entire claimed measuring range of the device.",
            paragraph="clinical accuracy, second criterion",
        ),
    ),
    checked="from the guidance's recommendations as we read them; not opened here",
)
FDA_POC = Standard(
    name="fda-poc",
    title="FDA prescription point-of-care BGM guidance (2020)",
    device="bgm",
    citation="FDA, Blood Glucose Monitoring Test Systems for Prescription Point-of-Care Use, "
    "guidance for industry and FDA staff, September 2020 (first issued October 2016), section "
    "on clinical accuracy",
    criteria=(
        Criterion(
            "1",
            "within ±12 mg/dL (REF < 75 mg/dL) or ±12 % (REF ≥ 75 mg/dL)",
            95.0,
            "share",
            _by_reference(12, 12, 75),
            text="95 % of all values within ±12 mg/dL of the comparator method for glucose "
            "concentrations < 75 mg/dL and within ±12 % for glucose concentrations ≥ 75 mg/dL.",
            paragraph="clinical accuracy, first criterion",
        ),
        Criterion(
            "2",
            "within ±15 mg/dL (REF < 75 mg/dL) or ±15 % (REF ≥ 75 mg/dL)",
            98.0,
            "share",
            _by_reference(15, 15, 75),
            text="98 % of all values within ±15 mg/dL of the comparator method for glucose "
            "concentrations < 75 mg/dL and within ±15 % for glucose concentrations ≥ 75 mg/dL.",
            paragraph="clinical accuracy, second criterion",
        ),
    ),
    checked="from the guidance's recommendations as we read them; not opened here",
)
CLSI_POCT12 = Standard(
    name="clsi-poct12",
    title="CLSI POCT12-A3 (hospital meters)",
    device="bgm",
    citation="CLSI POCT12-A3, Point-of-Care Blood Glucose Testing in Acute and Chronic Care "
    "Facilities, 3rd ed., 2013, system accuracy criteria",
    criteria=(
        Criterion(
            "1",
            "within ±12 mg/dL (REF < 100 mg/dL) or ±12.5 % (REF ≥ 100 mg/dL)",
            95.0,
            "share",
            _by_reference(12, 12.5, 100),
            text="95 % of the individual glucose results shall agree within ±12 mg/dL of the "
            "reference for glucose concentrations < 100 mg/dL or within ±12.5 % for glucose "
            "concentrations ≥ 100 mg/dL.",
            paragraph="system accuracy, first criterion",
        ),
        Criterion(
            "2",
            "within ±15 mg/dL (REF < 75 mg/dL) or ±20 % (REF ≥ 75 mg/dL)",
            98.0,
            "share",
            _by_reference(15, 20, 75),
            text="98 % of the individual glucose results shall agree within ±15 mg/dL of the "
            "reference for glucose concentrations < 75 mg/dL or within ±20 % for glucose "
            "concentrations ≥ 75 mg/dL.",
            paragraph="system accuracy, second criterion",
        ),
    ),
    checked="as summarised in the CLSI document's public abstract and the literature; the "
    "document itself is sold and was not opened here",
)

# the iCGM ranges, by the iCGM's own reading (mg/dL)
_ICGM_RANGES: dict[str, Callable[[NDArray[np.float64]], NDArray[np.bool_]]] = {
    "< 70": lambda bgm: bgm < 70,
    "70–180": lambda bgm: (bgm >= 70) & (bgm <= 180),
    "> 180": lambda bgm: bgm > 180,
    "all": _every,
}
_ICGM = "21 CFR 862.1355(b)(1)(iii)"


def _icgm(reading: str, limit: float, relative: bool) -> Select:
    """Pairs whose iCGM reading is in the range ``reading``, and those within ``limit`` mg/dL of
    the reference (or ``limit`` % of it when ``relative``: 100·|BGM − REF| ≤ limit·REF)."""

    def select(d: PairsView) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
        gap = abs(d.bgm - d.ref)
        hit = 100.0 * gap <= limit * d.ref if relative else gap <= limit
        return _ICGM_RANGES[reading](d.bgm), hit

    return select


def _rates(d: PairsView) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    assert d.ref_rate is not None and d.sensor_rate is not None  # needs="rates"
    return d.ref_rate, d.sensor_rate


def _icgm_bound(letter: str, text: str) -> str:
    return (
        f"{text} Criterion ({letter}) must be met using a lower one-sided 95 % confidence "
        "bound exceeding the stated percentage (21 CFR 862.1355(b)(1)(iv))."
    )


ICGM = Standard(
    name="icgm",
    title="FDA iCGM special controls",
    device="cgm",
    citation="21 CFR 862.1355(b)(1)(iii)–(iv), integrated continuous glucose monitoring system "
    "(iCGM) special controls (87 FR 9237, 2022); ranges by the iCGM reading, limits around the "
    "reference, judged inside the device's measuring range",
    measuring_range=(40.0, 400.0),
    checked="paragraph letters and texts as we read the 2022 final order; the eCFR page could "
    "not be opened here. I uses > 250 mg/dL as the regulation reads (Tidepool reads > 180: "
    "shown beside it)",
    criteria=(
        Criterion(
            "A",
            "iCGM < 70 mg/dL: within ±15 mg/dL",
            85.0,
            "lower-bound",
            _icgm("< 70", 15, False),
            paragraph=f"{_ICGM}(A)",
            text=_icgm_bound(
                "A",
                "For iCGM values less than 70 mg/dL, the percentage "
                "of values within ±15 mg/dL of the corresponding blood "
                "glucose value must be greater than 85 percent.",
            ),
        ),
        Criterion(
            "B",
            "iCGM 70–180 mg/dL: within ±15 %",
            70.0,
            "lower-bound",
            _icgm("70–180", 15, True),
            paragraph=f"{_ICGM}(B)",
            text=_icgm_bound(
                "B",
                "For iCGM values from 70 to 180 mg/dL, the percentage "
                "within ±15 % must be greater than 70 percent.",
            ),
        ),
        Criterion(
            "C",
            "iCGM > 180 mg/dL: within ±15 %",
            80.0,
            "lower-bound",
            _icgm("> 180", 15, True),
            paragraph=f"{_ICGM}(C)",
            text=_icgm_bound(
                "C",
                "For iCGM values greater than 180 mg/dL, the "
                "percentage within ±15 % must be greater than 80 percent.",
            ),
        ),
        Criterion(
            "D",
            "iCGM < 70 mg/dL: within ±40 mg/dL",
            98.0,
            "lower-bound",
            _icgm("< 70", 40, False),
            paragraph=f"{_ICGM}(D)",
            text=_icgm_bound(
                "D",
                "For iCGM values less than 70 mg/dL, the percentage "
                "within ±40 mg/dL must be greater than 98 percent.",
            ),
        ),
        Criterion(
            "E",
            "iCGM 70–180 mg/dL: within ±40 %",
            99.0,
            "lower-bound",
            _icgm("70–180", 40, True),
            paragraph=f"{_ICGM}(E)",
            text=_icgm_bound(
                "E",
                "For iCGM values from 70 to 180 mg/dL, the percentage "
                "within ±40 % must be greater than 99 percent.",
            ),
        ),
        Criterion(
            "F",
            "iCGM > 180 mg/dL: within ±40 %",
            99.0,
            "lower-bound",
            _icgm("> 180", 40, True),
            paragraph=f"{_ICGM}(F)",
            text=_icgm_bound(
                "F",
                "For iCGM values greater than 180 mg/dL, the "
                "percentage within ±40 % must be greater than 99 percent.",
            ),
        ),
        Criterion(
            "G",
            "all iCGM readings: within ±20 %",
            87.0,
            "lower-bound",
            _icgm("all", 20, True),
            paragraph=f"{_ICGM}(G)",
            text=_icgm_bound(
                "G",
                "Throughout the device measuring range, the "
                "percentage within ±20 % must be greater than 87 percent.",
            ),
        ),
        Criterion(
            "H",
            "iCGM < 70 mg/dL: reference > 180 mg/dL",
            0.0,
            "none",
            lambda d: (d.bgm < 70, d.ref > 180),
            paragraph=f"{_ICGM}(H)",
            text="When iCGM values are less than 70 mg/dL, no corresponding blood "
            "glucose value shall read above 180 mg/dL.",
        ),
        Criterion(
            "I",
            "iCGM > 250 mg/dL: reference < 70 mg/dL",
            0.0,
            "none",
            lambda d: (d.bgm > 250, d.ref < 70),
            paragraph=f"{_ICGM}(I)",
            text="When iCGM values are greater than 250 mg/dL, no corresponding blood "
            "glucose value shall read below 70 mg/dL.",
            companion=(
                "above_180",
                "the same at iCGM > 180 mg/dL (Tidepool's reading)",
                lambda d: (d.bgm > 180, d.ref < 70),
            ),
        ),
        Criterion(
            "J",
            "iCGM rising > 1 mg/dL/min: reference falling > 2 mg/dL/min",
            1.0,
            "at-most",
            lambda d: (_rates(d)[1] > 1, _rates(d)[0] < -2),
            needs="rates",
            paragraph=f"{_ICGM}(J)",
            text="No more than 1 percent of iCGM measured rates of change shall indicate a "
            "positive rate of change greater than 1 mg/dL/min when the corresponding "
            "true rate of change is less than −2 mg/dL/min as determined by the "
            "corresponding blood samples.",
            companion=(
                "reference",
                "share of the pairs whose reference falls > 2 mg/dL/min",
                lambda d: (_rates(d)[0] < -2, _rates(d)[1] > 1),
            ),
        ),
        Criterion(
            "K",
            "iCGM falling > 1 mg/dL/min: reference rising > 2 mg/dL/min",
            1.0,
            "at-most",
            lambda d: (_rates(d)[1] < -1, _rates(d)[0] > 2),
            needs="rates",
            paragraph=f"{_ICGM}(K)",
            text="No more than 1 percent of iCGM measured rates of change shall indicate a "
            "negative rate of change less than −1 mg/dL/min when the corresponding true "
            "rate of change is greater than 2 mg/dL/min as determined by the "
            "corresponding blood samples.",
            companion=(
                "reference",
                "share of the pairs whose reference rises > 2 mg/dL/min",
                lambda d: (_rates(d)[0] > 2, _rates(d)[1] < -1),
            ),
        ),
    ),
)

STANDARDS: dict[str, Standard] = {
    s.name: s for s in (ISO15197, FDA_OTC, FDA_POC, CLSI_POCT12, ICGM)
}
DEFAULT_STANDARD = {"bgm": "iso15197", "cgm": "icgm"}


def profiles() -> tuple[Standard, ...]:
    """Every registered standard, in order."""
    return tuple(STANDARDS.values())


def profile_names() -> tuple[str, ...]:
    """Names of the registered standards."""
    return tuple(STANDARDS)


def get_profile(name: str) -> Standard:
    """The standard registered under ``name``; :class:`UnknownProfileError` lists the choices."""
    if name not in STANDARDS:
        raise UnknownProfileError(
            f"unknown standard {name!r}; choose from {', '.join(STANDARDS)} or all"
        )
    return STANDARDS[name]


def profile_title(name: object) -> str:
    """The title of a registered acceptance profile (its registry's ``title``); an unknown name
    as it is."""
    try:
        return str(get_profile(str(name)).title)
    except ValueError:
        return str(name)
