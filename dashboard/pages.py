"""The dashboard's pages, in one registry: the navigation (``dashboard/app.py``), the screenshot
script (``scripts/screenshots.py``) and the tests all read :data:`PAGES`.

A page is one view script in ``dashboard/views/`` (not ``pages/``: that folder name turns on
Streamlit's old automatic navigation) plus one :class:`Page` entry here. Streamlit names a page's
URL after its script (``/meter`` for ``views/meter.py``); the default page is ``/``.

No Streamlit import here: the screenshot script and the server process read this module without
starting a page.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["AUDIENCES", "PAGES", "VIEWS", "Page", "screenshot_pages", "sections", "shown_pages"]

VIEWS = Path(__file__).with_name("views")
# who sees a page: everyone; "records": not in the public demo (which keeps no records);
# "organisers": a signed-in user, not in the public demo (survey organisers)
AUDIENCES = ("everyone", "records", "organisers")


@dataclass(frozen=True)
class Page:
    """One page of the dashboard.

    Attributes
    ----------
    view : the script's name in ``folder`` without ``.py``; also the page's URL path.
    title : the name in the navigation and the browser tab.
    icon : a Material icon (``":material/NAME:"``) or an emoji.
    section : the navigation heading the page is listed under.
    screenshot : ``docs/screenshots/<screenshot>.png`` is taken of it, or None for none (a page
        that shows nothing on a fresh machine or in the public demo).
    default : the page at ``/`` (exactly one).
    audience : one of :data:`AUDIENCES`.
    folder : the folder of the script (``dashboard/views``).
    """

    view: str
    title: str
    icon: str
    section: str
    screenshot: str | None = None
    default: bool = False
    audience: str = "everyone"
    folder: Path = field(default=VIEWS, compare=False)

    def __post_init__(self) -> None:
        if self.audience not in AUDIENCES:
            raise ValueError(
                f"page {self.view!r}: audience {self.audience!r} is not one of "
                f"{', '.join(AUDIENCES)}"
            )

    @property
    def script(self) -> Path:
        """The page's script."""
        return self.folder / f"{self.view}.py"

    @property
    def url_path(self) -> str:
        """The page's URL path ("" for the default page)."""
        return "" if self.default else self.view


PAGES: tuple[Page, ...] = (
    Page("learn", "Learn a grid", ":material/grid_on:", "Grids", "learn", default=True),
    Page("meter", "Meter report", ":material/bloodtype:", "Grids", "meter"),
    Page("compare", "Compare grids", ":material/compare:", "Grids", "compare"),
    Page("plan", "Plan a survey", ":material/checklist:", "Grids", "plan"),
    Page("records", "Saved records", ":material/folder_open:", "Grids", audience="records"),
    Page("surveys", "Surveys", ":material/how_to_vote:", "Grids", audience="organisers"),
    Page("cf", "Collaborative filtering", ":material/movie:", "Benchmarks", "cf"),
    Page("about", "About", ":material/menu_book:", "Help", "about"),
)


def shown_pages(public: bool, signed_in: bool, pages: tuple[Page, ...] = PAGES) -> tuple[Page, ...]:
    """The pages a visitor sees: every page in the public demo except those of stored records
    and survey organisers; organisers' pages only for a signed-in user."""
    allowed = {"everyone"}
    if not public:
        allowed.add("records")
        if signed_in:
            allowed.add("organisers")
    return tuple(page for page in pages if page.audience in allowed)


def sections(pages: tuple[Page, ...]) -> dict[str, list[Page]]:
    """The pages by navigation heading, headings in the order of their first page."""
    grouped: dict[str, list[Page]] = {}
    for page in pages:
        grouped.setdefault(page.section, []).append(page)
    return grouped


def screenshot_pages(pages: tuple[Page, ...] = PAGES) -> dict[str, str]:
    """URL path → screenshot name of every page that has a screenshot (taken on a fresh
    machine, without a login)."""
    return {page.url_path: page.screenshot for page in pages if page.screenshot is not None}
