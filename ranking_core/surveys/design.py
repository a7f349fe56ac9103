"""The pure logic of a rating survey: the answer scale, check pairs, who rates what, tokens.

A survey's pairs are (reference, meter reading) in whole mg/dL inside its glucose range. Each
rater has a queue: the design pairs given to them, some of them again later (test-retest
repeats) and a few check pairs with an obvious answer, shuffled so that neither stands out.

Who rates which pair (the overlap): the pairs of a batch, repeated cyclically, are cut into
consecutive chunks, one per rater. With ``per_rater`` = K pairs per rater of a design of n pairs,
rater j (in order of invitation) gets pairs jK, jK + 1, … (mod n); n·R / K raters then rate every
pair R times (``overlap`` R), and no rater gets a pair twice as long as K ≤ n. A later batch of B
pairs is shared the same way among the active raters, each taking ⌈B·R / raters⌉ of them.

Tokens are ``secrets.token_urlsafe`` strings of 256 bits; only their SHA-256 is stored and a
token is compared with the stored hash in constant time (``hmac.compare_digest``).
"""

from __future__ import annotations

import hashlib
import hmac
import math
import secrets
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from ranking_core.grids.lattice import check_range
from ranking_core.inputs.units import MGDL_PER_MMOLL
from ranking_core.panels.planning import DEFAULT_RANGE
from ranking_core.validation import MAX_SEED

if TYPE_CHECKING:  # pandas and NumPy load where used: a survey's settings and state need neither
    import numpy as np
    import pandas as pd

__all__ = [
    "CHECK_EXTREME",
    "CHECK_NONE",
    "EXTREME_CORNER",
    "MAX_CHECKS",
    "MAX_OVERLAP",
    "MAX_PAIRS",
    "MAX_QUEUE_ROWS",
    "MAX_RATERS",
    "MAX_SEED",
    "METHODS",
    "PAIRS_METHOD",
    "RISK_OPTIONS",
    "ROLES",
    "SEG_METHOD",
    "SEG_WORDS",
    "UNITS",
    "SurveySettings",
    "batch_chunk",
    "check_invitation",
    "check_pairs",
    "check_passed",
    "default_instructions",
    "new_token",
    "queue_length",
    "queue_order",
    "risk_label",
    "shown_value",
    "start_chunk",
    "token_hash",
    "tokens_match",
]

RISK_OPTIONS = tuple(step / 2 for step in range(9))  # the answer scale, 0..4 in halves
SEG_WORDS = {0: "none", 1: "slight", 2: "moderate", 3: "great", 4: "extreme"}
UNITS = ("mg/dL", "mmol/L")
ROLES = ("pair", "repeat", "check")  # a design pair, a test-retest repeat, a check pair
PAIRS_METHOD, SEG_METHOD = "pairs", "seg"
METHODS = (PAIRS_METHOD, SEG_METHOD)  # how a survey asks: rated pairs, or the SEG's method
CHECK_NONE, CHECK_EXTREME = "none", "extreme"
TOKEN_BYTES = 32  # 256 bits
REPEAT_GAP = 3  # a repeat comes at least this many pairs after the first showing

# bounds checked before anything is stored or computed (a panel rates hundreds of pairs)
MAX_PAIRS = 10_000  # pairs of a start design or of one batch
MAX_CHECKS = 20  # check pairs per rater
MAX_OVERLAP = 100  # raters per pair
MAX_RATERS = 1_000  # raters invited at once
MAX_QUEUE_ROWS = 1_000_000  # queue places added by one invitation (raters × pairs each)
# the corner of the glucose plane where a reading is extremely dangerous on the SEG (risk ≥ 3.5:
# a reference of at most 50 mg/dL read as at least 350 mg/dL, insulin given in hypoglycaemia);
# extreme check pairs are placed there, and only when the survey's range reaches it
EXTREME_CORNER = ((None, 50.0), (350.0, None))


def risk_label(value: float) -> str:
    """The option's label: ``"0 none"``, ``"0.5"``, … ``"4 extreme"`` (the SEG's words at the
    whole numbers)."""
    text = f"{float(value) + 0.0:g}"  # + 0.0: no "-0"
    return f"{text} {SEG_WORDS[int(value)]}" if float(value).is_integer() else text


def shown_value(mg_dl: float, unit: str) -> str:
    """A glucose value as shown to raters: whole mg/dL, or mmol/L to one decimal."""
    if unit == "mmol/L":
        return f"{mg_dl / MGDL_PER_MMOLL:.1f}"
    return f"{mg_dl:.0f}"


@dataclass(frozen=True)
class SurveySettings:
    """How a survey runs.

    Attributes
    ----------
    unit : the unit shown to raters (mg/dL or mmol/L); everything stored is mg/dL.
    glucose_range : (LO, HI) mg/dL of every pair.
    per_rater : design pairs per rater (None: every pair of the start design).
    overlap : how many raters rate each pair.
    repeats : share of a rater's pairs shown a second time (test-retest), 0..1.
    checks : check pairs per rater (alternately on the diagonal, risk none, and a reading far
        above a low reference, risk extreme).
    batch : pairs per adaptive batch, planned when the last batch is answered (0, the default:
        no adaptive batches; the organiser adds batches by hand).
    base_url : where the dashboard is served, for the links.
    seed : seed of the shuffles and the planner's candidates.
    """

    unit: str = "mg/dL"
    glucose_range: tuple[float, float] = DEFAULT_RANGE
    per_rater: int | None = None
    overlap: int = 2
    repeats: float = 0.1
    checks: int = 2
    batch: int = 0
    base_url: str = "http://127.0.0.1:8501"
    seed: int = 0

    def __post_init__(self) -> None:
        if self.unit not in UNITS:
            raise ValueError(f"the unit must be one of {', '.join(UNITS)}; got {self.unit!r}")
        object.__setattr__(self, "glucose_range", check_range(self.glucose_range))
        if self.per_rater is not None and self.per_rater < 1:
            raise ValueError(f"pairs per rater must be at least 1; got {self.per_rater}")
        if self.overlap < 1:
            raise ValueError(
                f"the overlap (raters per pair) must be at least 1; got {self.overlap}"
            )
        if not 0 <= self.repeats <= 1:
            raise ValueError(f"the share of repeats must lie in 0..1; got {self.repeats:g}")
        if self.per_rater is not None and self.per_rater > MAX_PAIRS:
            raise ValueError(
                f"pairs per rater must be at most {MAX_PAIRS:,}; got {self.per_rater:,}"
            )
        if self.overlap > MAX_OVERLAP:
            raise ValueError(
                f"the overlap (raters per pair) must be at most {MAX_OVERLAP}; got {self.overlap:,}"
            )
        if not 0 <= self.checks <= MAX_CHECKS:
            raise ValueError(f"check pairs per rater must be 0..{MAX_CHECKS}; got {self.checks:,}")
        if not 0 <= self.batch <= MAX_PAIRS:
            raise ValueError(f"pairs per batch must be 0..{MAX_PAIRS:,}; got {self.batch:,}")
        if isinstance(self.seed, bool) or not 0 <= int(self.seed) <= MAX_SEED:
            raise ValueError(f"the seed must be an integer 0..{MAX_SEED:,}; got {self.seed}")
        if not self.base_url.startswith(("http://", "https://")):
            raise ValueError(
                f"the base URL must start with http:// or https://; got {self.base_url!r}"
            )

    def to_dict(self) -> dict:
        return {**asdict(self), "glucose_range": list(self.glucose_range)}

    @classmethod
    def from_dict(cls, values: dict) -> SurveySettings:
        known = {k: v for k, v in values.items() if k in cls.__dataclass_fields__}
        known["glucose_range"] = tuple(known.get("glucose_range", DEFAULT_RANGE))
        return cls(**known)


def default_instructions(settings: SurveySettings) -> str:
    """The instructions raters see when the organiser gives none (plain text)."""
    return (
        f"Each question shows a patient's reference (true) blood glucose and the reading of "
        f"a glucose meter, both in {settings.unit}. How much clinical risk could the patient "
        "face if they (or their doctor) acted on the meter's reading? Answer from 0 (no "
        "risk) to 4 (extreme risk); halves are allowed. Some pairs come twice; answer "
        "each as you see it. Your answers are saved as you go: you can stop and come back "
        "to this link at any time."
    )


def extreme_checks_fit(glucose_range: tuple[float, float] = DEFAULT_RANGE) -> bool:
    """Whether the range reaches the SEG's extreme corner (:data:`EXTREME_CORNER`: a reference
    of at most 50 mg/dL read as at least 350 mg/dL), where a check pair's answer is known."""
    low, high = check_range(glucose_range)
    return low <= EXTREME_CORNER[0][1] and high >= EXTREME_CORNER[1][0]


def check_pairs(n: int, glucose_range: tuple[float, float] = DEFAULT_RANGE) -> pd.DataFrame:
    """n check pairs inside the range, each with a known answer (columns reference, estimate
    in mg/dL, expected): even ones on the diagonal (a reading equal to the reference: risk
    none), odd ones in the SEG's extreme corner (:data:`EXTREME_CORNER`, a reference of
    40..50 mg/dL read as 400 mg/dL or more: risk extreme) when the range reaches it, else on
    the diagonal too; spread so that no two are alike where the range allows."""
    import pandas as pd

    low, high = check_range(glucose_range)
    extreme = extreme_checks_fit(glucose_range)
    ref_low, ref_high = max(low, 40.0), EXTREME_CORNER[0][1]
    read_low = max(EXTREME_CORNER[1][0], min(400.0, high))
    rows = []
    for i in range(n):
        step = i // 2
        if i % 2 == 0 or not extreme:
            place = (0.3 + 0.37 * (step % 3)) if i % 2 == 0 else (0.15 + 0.37 * (step % 3))
            value = min(max(low + (high - low) * place + 7.0 * (i // 6), low), high)
            rows.append((round(value), round(value), CHECK_NONE))
        else:
            reference = min(ref_low + 2.0 * step, ref_high) if ref_low <= ref_high else low
            reading = min(read_low + 10.0 * step, high)
            rows.append((round(reference), round(reading), CHECK_EXTREME))
    return pd.DataFrame(rows, columns=["reference", "estimate", "expected"])


def check_passed(expected: str, rating: float) -> bool:
    """A check answer as expected: at most 0.5 for none, at least 3 for extreme."""
    return rating <= 0.5 if expected == CHECK_NONE else rating >= 3.0


def queue_length(n_pairs: int, settings: SurveySettings) -> int:
    """Places in a new rater's queue: their start-design pairs, the repeats, the checks."""
    k = n_pairs if settings.per_rater is None else min(settings.per_rater, n_pairs)
    return k + round(settings.repeats * k) + settings.checks


def check_invitation(n_raters: int, n_pairs: int, settings: SurveySettings) -> None:
    """Refuse, before anything is stored, an invitation of more than :data:`MAX_RATERS`
    raters at once or one adding more than :data:`MAX_QUEUE_ROWS` queue places."""
    if not 1 <= n_raters <= MAX_RATERS:
        raise ValueError(f"raters invited at once must be 1..{MAX_RATERS:,}; got {n_raters:,}")
    places = n_raters * queue_length(n_pairs, settings)
    if places > MAX_QUEUE_ROWS:
        raise ValueError(
            f"{n_raters:,} raters with {queue_length(n_pairs, settings):,} pairs each would add "
            f"{places:,} queue places, more than {MAX_QUEUE_ROWS:,} at once; invite fewer "
            "raters at a time or give each fewer pairs (--per-rater)"
        )


def start_chunk(n_pairs: int, per_rater: int | None, rater_index: int) -> list[int]:
    """Indices (0..n_pairs−1) of the start-design pairs of the rater invited ``rater_index``-th
    (from 0): the cyclic chunk of ``per_rater`` pairs (all pairs when None)."""
    k = n_pairs if per_rater is None else min(per_rater, n_pairs)
    return [(rater_index * k + t) % n_pairs for t in range(k)]


def batch_chunk(n_pairs: int, overlap: int, n_raters: int, rater_index: int) -> list[int]:
    """Indices of a new batch's pairs for the ``rater_index``-th of ``n_raters`` active raters:
    each takes ⌈n_pairs·overlap / n_raters⌉ (at most n_pairs) consecutive pairs, cyclically."""
    k = min(n_pairs, math.ceil(n_pairs * overlap / max(n_raters, 1)))
    return [(rater_index * k + t) % n_pairs for t in range(k)]


def queue_order(
    pairs: list[int], checks: list[int], repeats: float, rng: np.random.Generator
) -> list[tuple[int, str]]:
    """A rater's queue of (pair id, role): the pairs shuffled, ``round(repeats·len(pairs))`` of
    them shown again at least :data:`REPEAT_GAP` places later, the checks at random places."""
    shuffled = rng.permutation(pairs).tolist()
    order: list[tuple[int, str]] = [(p, "pair") for p in shuffled]
    early = shuffled[: max(0, len(shuffled) - REPEAT_GAP)]  # room for the gap after them
    n_repeats = min(len(early), round(repeats * len(pairs)))
    for pair in rng.choice(early, size=n_repeats, replace=False).tolist() if n_repeats else []:
        first = order.index((pair, "pair"))
        place = int(rng.integers(min(first + 1 + REPEAT_GAP, len(order)), len(order) + 1))
        order.insert(place, (pair, "repeat"))
    for check in checks:
        order.insert(int(rng.integers(0, len(order) + 1)), (check, "check"))
    return order


def new_token() -> str:
    """A fresh URL-safe token of 256 random bits."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def token_hash(token: str) -> str:
    """The SHA-256 of a token (hex), the only form in which a token is stored."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def tokens_match(token: str, stored_hash: str) -> bool:
    """Whether ``token`` hashes to ``stored_hash``, compared in constant time."""
    return hmac.compare_digest(token_hash(token), stored_hash)
