"""The web page in a real headless browser (Debian's chromium + chromedriver, via selenium).

Types facts, picks and edits questions, searches, opens a summary and the judgment text,
at laptop and phone widths. Screenshots are saved as test artefacts in
`test-artifacts/web/` (or $AQGR_TEST_ARTIFACTS)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from tests.server.conftest import REPO

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
webdriver = pytest.importorskip("selenium.webdriver")
pytestmark = pytest.mark.skipif(
    not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)),
    reason="needs Debian's chromium and chromium-driver: apt-get install -y chromium chromium-driver",
)

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support import expected_conditions as EC  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402


@pytest.fixture(scope="module")
def artifacts() -> Path:
    folder = Path(os.environ.get("AQGR_TEST_ARTIFACTS") or REPO / "test-artifacts") / "web"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    os.environ.setdefault("SE_OFFLINE", "true")  # selenium must never fetch a driver or a browser
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-extensions",
        "--window-size=1366,900",
        f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=CHROMEDRIVER))
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


def _wait(driver, seconds: float = 20):
    return WebDriverWait(driver, seconds)


def _no_horizontal_scroll(driver) -> bool:
    return driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth + 1")


def _full_height_screenshot(driver, path: Path, width: int) -> None:
    height = driver.execute_script("return Math.min(document.documentElement.scrollHeight, 6000)")
    driver.set_window_size(width, max(height + 140, 700))
    driver.save_screenshot(str(path))


def test_issue_first_search_in_a_browser(browser, live_server, scenarios, artifacts):
    d = browser
    d.set_window_size(1366, 900)
    d.get(live_server.url + "/")
    _wait(d).until(EC.text_to_be_present_in_element((By.ID, "server-status"), "17 judgments indexed"))

    # 1. facts, submitted with the keyboard (Tab to the button, Enter)
    facts = d.find_element(By.ID, "facts")
    assert d.find_element(By.CSS_SELECTOR, "label[for=facts]").text
    facts.send_keys(scenarios[0]["facts"])
    facts.send_keys(Keys.TAB)
    assert d.switch_to.active_element.get_attribute("id") == "suggest"
    d.switch_to.active_element.send_keys(Keys.ENTER)

    # 2. candidate questions: the top 3 pre-selected; untick one, edit one, add one
    _wait(d).until(lambda drv: len(drv.find_elements(By.CSS_SELECTOR, "#questions li")) >= 4)
    boxes = d.find_elements(By.CSS_SELECTOR, "#questions input[type=checkbox]")
    assert [b.is_selected() for b in boxes[:4]] == [True, True, True, False]
    assert all(b.get_attribute("aria-label") for b in boxes)
    assert d.switch_to.active_element == boxes[0]  # focus moved to the questions
    texts = d.find_elements(By.CSS_SELECTOR, "#questions textarea")
    assert "dying declaration" in texts[0].get_attribute("value").lower()
    boxes[2].send_keys(Keys.SPACE)  # untick Q3 with the keyboard
    assert not boxes[2].is_selected()
    texts[1].send_keys(" (murder conviction)")
    own = "Whether a statement recorded by the police without a magistrate is admissible as a dying declaration?"
    d.find_element(By.ID, "new-question").send_keys(own, Keys.ENTER)
    boxes = d.find_elements(By.CSS_SELECTOR, "#questions input[type=checkbox]")
    assert (
        boxes[-1].is_selected()
        and d.find_elements(By.CSS_SELECTOR, "#questions textarea")[-1].get_attribute("value") == own
    )
    _full_height_screenshot(d, artifacts / "1-questions-laptop.png", 1366)

    # 3. search: results grouped per chosen question
    d.find_element(By.ID, "search").click()
    _wait(d).until(lambda drv: drv.find_elements(By.CSS_SELECTOR, "#results .hit"))
    groups = d.find_elements(By.CSS_SELECTOR, "#results .group h3")
    assert len(groups) >= 3
    assert (
        groups[0].text.startswith("Q1.")
        and groups[1].text.endswith("(murder conviction)")
        and groups[2].text.endswith(own)
    )
    hits = d.find_elements(By.CSS_SELECTOR, "#results .hit")
    assert 1 <= len(hits) <= 10  # each judgment in full once; under the other questions, a reference to it
    sections = d.find_elements(By.CSS_SELECTOR, "#results .group")
    assert all(s.find_elements(By.CSS_SELECTOR, ".hit, .refs li") for s in sections[:3])
    first = hits[0]
    assert re.fullmatch(r"(10|[1-9])/10", first.find_element(By.CSS_SELECTOR, ".score").text)
    assert " v. " in first.find_element(By.CSS_SELECTOR, ".parties").text
    meta = first.find_element(By.CSS_SELECTOR, ".meta").text
    assert "Appeal No." in meta and "Court" in meta
    assert first.find_element(By.CSS_SELECTOR, ".issue").text and first.find_element(By.CSS_SELECTOR, ".reason").text
    assert "evidence.v2 (offline)" in d.find_element(By.ID, "engines").text
    assert "nothing was dropped" in d.find_element(By.ID, "guard").text
    parties = {h.find_element(By.CSS_SELECTOR, ".parties").text for h in hits}
    assert any("Harbans Lal" in p for p in parties) and any("Rakesh" in p for p in parties)
    assert _no_horizontal_scroll(d)
    _full_height_screenshot(d, artifacts / "2-results-laptop.png", 1366)
    d.set_window_size(1366, 900)

    # 4. open the summary and the judgment text, the evidence highlighted
    first.find_element(By.CSS_SELECTOR, "button.open").click()
    dialog = d.find_element(By.ID, "judgment")
    _wait(d).until(
        lambda drv: (
            dialog.get_attribute("open") is not None and "Issues" in drv.find_element(By.ID, "panel-summary").text
        )
    )
    assert d.find_element(By.ID, "judgment-title").text == first.find_element(By.CSS_SELECTOR, ".parties").text
    summary_text = d.find_element(By.ID, "panel-summary").text
    assert re.search(r"Cite[sd][^\n]*in this archive", summary_text)  # SC007 cites SC001, with the words that name it
    assert "Harbans Lal v. State of Punjab (1998) 4 SCC 112" in summary_text
    d.save_screenshot(str(artifacts / "3-summary-laptop.png"))
    d.switch_to.active_element.send_keys(Keys.ARROW_RIGHT)  # keyboard: to the text tab
    _wait(d).until(EC.visibility_of_element_located((By.ID, "panel-text")))
    marks = d.find_elements(By.CSS_SELECTOR, "#judgment-text mark")
    assert marks and all(len(m.text) > 20 for m in marks)
    assert "highlighted" in d.find_element(By.ID, "text-note").text
    d.save_screenshot(str(artifacts / "4-text-highlighted-laptop.png"))
    d.switch_to.active_element.send_keys(Keys.ESCAPE)
    _wait(d).until(lambda drv: dialog.get_attribute("open") is None)
    assert "open" in d.switch_to.active_element.get_attribute("class")  # focus back on the button

    # 5. phone width: the same page, no sideways scrolling
    d.set_window_size(390, 844)
    assert _no_horizontal_scroll(d)
    _full_height_screenshot(d, artifacts / "5-results-phone.png", 390)
    d.set_window_size(390, 844)
    d.find_elements(By.CSS_SELECTOR, "#results .hit button.open")[0].click()
    _wait(d).until(
        lambda drv: (
            dialog.get_attribute("open") is not None and "Issues" in drv.find_element(By.ID, "panel-summary").text
        )
    )
    d.find_element(By.ID, "tab-text").click()
    _wait(d).until(lambda drv: drv.find_elements(By.CSS_SELECTOR, "#judgment-text mark"))
    d.save_screenshot(str(artifacts / "6-text-phone.png"))
    d.find_element(By.ID, "close-judgment").click()

    # nothing was fetched from anywhere but this server
    urls = d.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert urls and all(u.startswith(live_server.url) for u in urls)


def test_errors_are_shown_to_the_user(browser, live_server, artifacts):
    d = browser
    d.set_window_size(1366, 900)
    d.get(live_server.url + "/")
    d.find_element(By.ID, "facts").send_keys("my neighbour hit me")
    d.find_element(By.ID, "suggest").click()
    _wait(d).until(EC.visibility_of_element_located((By.ID, "error")))
    assert "content word" in d.find_element(By.ID, "error").text
    assert d.find_element(By.ID, "error").get_attribute("role") == "alert"


def _searched_flag(d, url: str, status: str, facts: str, judgment_id: str):
    """Search the page at `url` (once its status shows `status`) with `facts` and the questions it
    pre-selects; the treatment flag on the card of `judgment_id`, shown as an alert."""
    d.set_window_size(1366, 900)
    d.get(url + "/")
    _wait(d).until(EC.text_to_be_present_in_element((By.ID, "server-status"), status))
    d.find_element(By.ID, "facts").send_keys(facts)
    d.find_element(By.ID, "suggest").click()
    _wait(d).until(lambda drv: drv.find_elements(By.CSS_SELECTOR, "#questions li"))
    d.find_element(By.ID, "search").click()
    _wait(d).until(lambda drv: drv.find_elements(By.CSS_SELECTOR, "#results .hit"))
    flag = d.find_element(By.CSS_SELECTOR, f"#hit-{judgment_id} .treatment-warning")
    assert flag.is_displayed() and flag.get_attribute("role") == "alert"
    return flag


def test_a_hit_overruled_in_the_archive_is_flagged_visibly(browser, home, tmp_path, artifacts):
    """A later judgment of the archive overruled a hit: the page shows a warning with that
    judgment and its words on the hit's card (not a tooltip), the hit kept."""
    from aqgr.interfaces.server import ServeConfig, create_app
    from tests.aqgr.helpers import DYING_DECLARATION_FACTS, OVERRULING_JUDGMENTS, indexed_archive
    from tests.server.conftest import LiveServer

    archive = indexed_archive(home, tmp_path / "in", OVERRULING_JUDGMENTS)
    with LiveServer(create_app(archive=archive, config=ServeConfig(reload_check_seconds=0))) as server:
        d = browser
        flag = _searched_flag(d, server.url, "indexed", DYING_DECLARATION_FACTS, "A1")
        assert (
            "overruled by Gopal Singh" in flag.text
            and "[A6]" in flag.text
            and "does not lay down the correct law" in flag.text
        )
        assert not d.find_elements(By.CSS_SELECTOR, "#hit-A2 .treatment-warning")  # distinguished only: no flag
        d.save_screenshot(str(artifacts / "7-overruled-warning.png"))


def test_the_sample_archive_flags_its_overruled_judgment(browser, live_server, artifacts):
    """The sample archive's overruling pair (SC017 overrules SC012): facts that bring up SC012 show the
    red flag on its card, with the overruling judgment and its words; SC017's card has none."""
    from tests.server.conftest import SENIORITY_FACTS

    d = browser
    flag = _searched_flag(d, live_server.url, "17 judgments indexed", SENIORITY_FACTS, "SC012")
    assert (
        "overruled by Anil Kumar Srivastava" in flag.text
        and "[SC017]" in flag.text
        and "does not lay down the correct law" in flag.text
    )
    assert d.find_elements(By.ID, "hit-SC017") and not d.find_elements(By.CSS_SELECTOR, "#hit-SC017 .treatment-warning")
    assert _no_horizontal_scroll(d)
    d.save_screenshot(str(artifacts / "9-sample-overruled-warning.png"))


def test_facets_narrow_the_search_from_the_keyboard_and_hostile_filters_stay_text(
    browser, live_server, scenarios, artifacts
):
    d = browser
    d.set_window_size(1366, 900)
    d.get(live_server.url + "/")
    d.find_element(By.ID, "facts").send_keys(scenarios[0]["facts"])
    d.find_element(By.ID, "suggest").click()
    _wait(d).until(lambda drv: drv.find_elements(By.CSS_SELECTOR, "#questions li"))
    assert d.find_element(By.CSS_SELECTOR, "label[for=filter-court]").text == "Court"
    d.find_element(By.ID, "search").click()

    # facets over the ranked candidates, each value a button
    _wait(d).until(EC.visibility_of_element_located((By.ID, "facets")))
    assert d.find_element(By.ID, "active-filters").get_attribute("hidden") is not None  # no filter yet
    courts = {
        b.find_element(By.CSS_SELECTOR, ".facet-label").text: b
        for b in d.find_elements(By.CSS_SELECTOR, "#facets button[data-facet=court]")
    }
    assert {"Supreme Court of India", "Delhi High Court"} <= set(courts)
    assert courts["Delhi High Court"].find_element(By.CSS_SELECTOR, ".facet-count").text == "1"
    _full_height_screenshot(d, artifacts / "7-facets-laptop.png", 1366)
    d.set_window_size(1366, 900)

    # Enter on a facet value narrows to it and searches again
    courts["Delhi High Court"].send_keys(Keys.ENTER)
    _wait(d).until(EC.text_to_be_present_in_element((By.ID, "active-filters"), "Court: Delhi High Court"))
    assert d.find_element(By.ID, "filter-court").get_attribute("value") == "Delhi High Court"
    assert "Among the 1 judgments ranked" in d.find_element(By.ID, "facets").text
    assert [b.text for b in d.find_elements(By.CSS_SELECTOR, "#facets button[data-facet=court] .facet-label")] == [
        "Delhi High Court"
    ]
    for hit in d.find_elements(By.CSS_SELECTOR, "#results .hit"):
        assert "High Court of Delhi" in hit.find_element(By.CSS_SELECTOR, ".meta").text
    _full_height_screenshot(d, artifacts / "8-narrowed-laptop.png", 1366)
    d.set_window_size(1366, 900)

    # the active filter's button removes it (keyboard again)
    chip = d.find_element(By.CSS_SELECTOR, "#active-filters button.chip")
    assert chip.get_attribute("aria-label") == "Remove the filter Court: Delhi High Court"
    chip.send_keys(Keys.ENTER)
    _wait(d).until(lambda drv: drv.find_element(By.ID, "active-filters").get_attribute("hidden") is not None)
    assert d.find_element(By.ID, "filter-court").get_attribute("value") == ""

    # a hostile court typed in: shown as text, an empty result naming the closest known courts
    hostile = '<img src=x onerror="window.__pwned=1">Supreme'
    d.find_element(By.ID, "filter-court").send_keys(hostile)
    d.find_element(By.ID, "search").click()
    _wait(d).until(EC.text_to_be_present_in_element((By.ID, "active-filters"), hostile))
    assert d.execute_script("return window.__pwned === undefined && !document.querySelector('#results-section img')")
    assert "closest known" in d.find_element(By.ID, "guard").text and not d.find_elements(
        By.CSS_SELECTOR, "#results .hit"
    )
    d.find_element(By.ID, "filter-court").clear()
