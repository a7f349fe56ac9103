"""Owners hold for two users signed in for real: the dashboard served by ``riskgrid dashboard``
with a login configured, each user signed in through a throw-away OpenID Connect provider on
127.0.0.1 (tests/oidc_provider.py) in headless Chromium. Bo does not see ada's survey or its
organiser controls, and his upload of another SEG table, under another file name, is refused while
ada's table stays in use. Needs Debian's /usr/bin/chromium and the playwright package."""

from __future__ import annotations

import io
import os

import pandas as pd
import pytest
from oidc_provider import oidc_provider, secrets_toml
from synthetic_seg import write_synthetic_seg

from ranking_core.panels import start_design
from ranking_core.storage import Store
from ranking_core.surveys import SurveySettings, SurveyStore
from scripts.screenshots import CHROMIUM, free_port, open_browser, serve, wait_until_rendered

ADA, BO = "ada@example.org", "bo@example.org"


def sign_in(page, url: str, provider, user: str) -> None:
    """Open the dashboard, press Sign in, and come back signed in as ``user``."""
    provider.user = user
    page.goto(url)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_text(f"Signed in as {user}").wait_for(timeout=120_000)
    wait_until_rendered(page)


@pytest.mark.slow
@pytest.mark.skipif(
    not CHROMIUM.exists(), reason=f"{CHROMIUM} is absent (apt-get install chromium)"
)
def test_two_users_signed_in_through_a_login_provider(team_scheduler, tmp_path):
    pytest.importorskip("playwright.sync_api", reason="the playwright Python package is missing")
    database = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    store = Store(database)
    SurveyStore(store, by=ADA).create(
        "ward A", start_design(6, seed=1), SurveySettings(checks=1, repeats=0.0)
    )
    official = write_synthetic_seg(tmp_path / "RiskPairData.csv").read_bytes()
    store.save_seg_table("RiskPairData.csv", official, "RiskPairData.csv", saved_by=ADA)
    flat = pd.read_csv(io.BytesIO(official)).assign(RiskFactor=0.0, abs_risk=0.0)
    flat.to_csv(tmp_path / "flat.csv", index=False)
    with oidc_provider() as provider:
        port = free_port()
        home = tmp_path / "home"
        (home / ".streamlit").mkdir(parents=True)
        (home / ".streamlit" / "secrets.toml").write_text(secrets_toml(provider, port))
        env = {**os.environ, "HOME": str(home), "RISKGRID_DATABASE_URL": database}
        env["RISKGRID_SCHEDULER"] = team_scheduler  # no local cluster (tests/conftest.py)
        env.pop("SEG_TABLE", None)
        with serve(port, env) as url, open_browser() as page:
            sign_in(page, url, provider, ADA)
            page.goto(f"{url}/surveys")
            wait_until_rendered(page)
            assert page.get_by_text("ward A").count() > 0
            assert page.get_by_role("button", name="Close the survey").count() == 1
            page.context.clear_cookies()
            sign_in(page, url, provider, BO)
            page.goto(f"{url}/surveys")
            wait_until_rendered(page)
            assert page.get_by_text("You have no survey yet").count() == 1
            assert page.get_by_text("ward A").count() == 0
            assert page.get_by_role("button", name="Close the survey").count() == 0
            sidebar = page.locator("[data-testid='stSidebar']")
            sidebar.get_by_text("Upload a SEG table").click()
            sidebar.locator("input[type='file']").set_input_files(str(tmp_path / "flat.csv"))
            sidebar.get_by_text("Replace the stored table").click()
            sidebar.get_by_role("button", name="Check and store").click()
            sidebar.get_by_text("only they may replace it").wait_for(timeout=120_000)
    kept = store.latest_seg_table()
    assert kept.info.saved_by == ADA and kept.content == official
    assert [r.name for r in store.list_records("seg_table")] == ["RiskPairData.csv"]
    assert kept.load().absolute[50, 300] == 2.5  # the made-up table's |300 − 50| / 100
