"""Raters answering a survey through their personal links in headless Chromium, all at once
(async Playwright, one browser context per rater, Debian's /usr/bin/chromium).

Each rater reads the pair shown (``k of n``, ``Reference`` and ``Meter``), picks the answer that
``rating(reference, estimate)`` gives in the radio group ``Risk``, presses ``Save and next`` and
waits for the next pair (or ``All pairs rated``). An answer counts as acknowledged when the next
pair was shown; the seconds from the click to then are its latency. When the server goes away in
the middle (``server_up`` is cleared before, and set again once the server is back), a rater
whose page was opened on the server that went away waits for it until the server is back (or
the timeout, if sooner), answers nothing more there and opens the link again: it resumes where
the rater stopped. Used by the browser test and ``benchmarks/survey_browser.py``.
"""

from __future__ import annotations

import asyncio
import random
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from scripts.screenshots import CHROMIUM, CHROMIUM_ARGS

T = TypeVar("T")
NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")
SHOWN_JS = """() => {
  const main = document.querySelector("[data-testid='stMain']");
  if (!main || document.querySelector("[data-stale='true']")) return null;
  const text = main.innerText;
  if (text.includes("All pairs rated")) return {done: true};
  const bar = document.querySelector("[data-testid='stProgress']");
  const values = Array.from(document.querySelectorAll("[data-testid='stMetricValue']"));
  const button = Array.from(document.querySelectorAll("button")).some(
    (b) => b.innerText.trim() === "Save and next");
  if (!bar || values.length < 2 || !button) return null;
  return {done: false, progress: bar.innerText.trim(),
          values: values.map((v) => v.innerText.trim())};
}"""
CHANGED_JS = """(before) => {
  const text = (document.querySelector("[data-testid='stMain']") || {}).innerText || "";
  if (text.includes("All pairs rated")) return true;
  const bar = document.querySelector("[data-testid='stProgress']");
  return !!bar && /^\\d+ of \\d+$/.test(bar.innerText.trim()) && bar.innerText.trim() !== before;
}"""


@dataclass
class Answer:
    """One press of ``Save and next``."""

    rater: str
    progress: str  # "k of n" when it was pressed
    reference: float
    estimate: float
    rating: float
    acknowledged: bool
    seconds: float | None


class ServerRestarted(Exception):
    """The server a page was opened on went away and is back (restarted) while a rater waited
    for that page."""


class _RaterPage:
    """A rater's page, and whether the server it was opened on has gone away since (``server_up``
    seen cleared: watched every 50 ms by a task of its own until :meth:`close`)."""

    def __init__(self, page: Any, link: str, server_up: asyncio.Event) -> None:
        self.page, self.link, self.server_up = page, link, server_up
        self.went_away = False
        self._watching = asyncio.ensure_future(self._watch())

    async def _watch(self) -> None:
        while True:
            if not self.server_up.is_set():
                self.went_away = True
            await asyncio.sleep(0.05)

    def close(self) -> None:
        self._watching.cancel()

    async def open(self) -> None:
        """Open the rater's link once the server is up (where the rater stopped)."""
        await self.server_up.wait()
        self.went_away = False
        await self.page.goto(self.link)

    async def wait(self, waiting: Awaitable[T]) -> T:
        """``waiting``'s result, or ServerRestarted as soon as the server this page was opened on
        went away and a server is back: until then, the page shows what reached it before (an
        answer acknowledged just before a kill counts); after, it can show nothing new."""

        async def restarted() -> None:
            while not (self.went_away and self.server_up.is_set()):
                await asyncio.sleep(0.05)

        page_wait, restart = asyncio.ensure_future(waiting), asyncio.ensure_future(restarted())
        try:
            await asyncio.wait({page_wait, restart}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (page_wait, restart):
                if not task.done():
                    task.cancel()
            await asyncio.gather(page_wait, restart, return_exceptions=True)
        if page_wait.cancelled():
            raise ServerRestarted
        return page_wait.result()

    async def shown(self, timeout_ms: float) -> dict:
        """What the page shows once it has drawn a pair or the end (:data:`SHOWN_JS`)."""
        handle = await self.wait(
            self.page.wait_for_function(SHOWN_JS, timeout=timeout_ms, polling=50)
        )
        return await handle.json_value()


async def answer_survey(
    browser,
    rater: str,
    link: str,
    rating: Callable[[float, float], float],
    answers: list[Answer],
    server_up: asyncio.Event,
    timeout_ms: float = 60_000,
    double_click_at: int | None = None,
    finished: asyncio.Event | None = None,
    think: float = 0.0,
) -> None:
    """One rater answers every pair of their queue (see the module docstring); each press is
    appended to ``answers``. With ``double_click_at`` = i, the i-th press is a double click.
    With ``finished``, a rater who has rated all pairs opens the link again every 2 s (new
    batches may come) until ``finished`` is set. ``think``: mean seconds a rater looks at a pair
    before answering (uniform on 0.5–1.5 times it; 0: answers at once)."""
    from ranking_core.surveys import risk_label

    context = await browser.new_context(viewport={"width": 1200, "height": 900})
    tab = _RaterPage(await context.new_page(), link, server_up)
    page = tab.page
    presses = 0
    try:
        await tab.open()
        while True:
            if not server_up.is_set() or tab.went_away:  # being (or was) restarted
                await tab.open()
            try:
                state = await tab.shown(timeout_ms)
            except Exception:  # the server went away: open the link again once it is back
                await tab.open()
                continue
            if state["done"]:
                if finished is None or finished.is_set():
                    return
                await asyncio.sleep(2.0)
                await tab.open()
                continue
            if tab.went_away:  # a pair shown by a server that went away since: not answered there
                continue
            reference, estimate = (float(NUMBER.search(v).group()) for v in state["values"])
            value = rating(reference, estimate)
            if think:
                await asyncio.sleep(think * random.uniform(0.5, 1.5))
            option = page.get_by_role("radiogroup", name="Risk").get_by_role(
                "radio", name=risk_label(value), exact=True
            )
            await option.focus()  # from the keyboard, as a rater may
            await page.keyboard.press("Space")
            save = page.get_by_role("button", name="Save and next")
            start = time.perf_counter()
            acknowledged = True
            try:
                if presses == double_click_at:
                    await save.dblclick()
                else:
                    await save.click()
                await tab.wait(
                    page.wait_for_function(
                        CHANGED_JS, arg=state["progress"], timeout=timeout_ms, polling=20
                    )
                )
            except Exception:
                acknowledged = False
            seconds = time.perf_counter() - start
            answers.append(
                Answer(
                    rater,
                    state["progress"],
                    reference,
                    estimate,
                    value,
                    acknowledged,
                    seconds if acknowledged else None,
                )
            )
            presses += 1
            if not acknowledged:
                await tab.open()
    finally:
        tab.close()
        await context.close()


async def open_chromium(playwright):
    """Headless Debian Chromium (never downloads a browser)."""
    return await playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
