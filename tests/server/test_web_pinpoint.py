"""Pinpoints on the web page, in the real headless browser: a hit's "para N" opens the judgment
text at that passage, highlighted; a #judgment=ID&at=START-END link opens it the same way."""

from __future__ import annotations

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support import expected_conditions as EC  # noqa: E402

from tests.server.test_web import _wait, artifacts, browser, pytestmark  # noqa: F401  (fixtures, and the skip without chromium)


def _plain(text: str) -> str:
    return " ".join(text.split()).lower()


def test_para_link_opens_the_text_at_the_passage_highlighted(
    browser, live_server, scenarios, sample_archive, artifacts
):
    d = browser
    d.set_window_size(1366, 900)
    d.get(live_server.url + "/")
    _wait(d).until(EC.text_to_be_present_in_element((By.ID, "server-status"), "judgments indexed"))
    d.find_element(By.ID, "facts").send_keys(scenarios[0]["facts"])
    d.find_element(By.ID, "suggest").click()
    _wait(d).until(lambda drv: drv.find_elements(By.CSS_SELECTOR, "#questions li"))
    d.find_element(By.ID, "search").click()
    _wait(d).until(lambda drv: drv.find_elements(By.CSS_SELECTOR, "#results .hit"))
    first = d.find_elements(By.CSS_SELECTOR, "#results .hit")[0]
    link = first.find_element(By.CSS_SELECTOR, ".reason a.pin")
    assert link.text.startswith("para ") and link.get_attribute("href").split("#", 1)[1].startswith("judgment=")
    reason = first.find_element(By.CSS_SELECTOR, ".reason").text.removesuffix(link.text).strip()
    link.send_keys(Keys.ENTER)  # keyboard: the link is focusable
    _wait(d).until(EC.visibility_of_element_located((By.ID, "panel-text")))
    current = d.find_element(By.CSS_SELECTOR, "#judgment-text mark.current")
    assert len(current.text) > 20 and _plain(current.text) in _plain(reason)
    assert d.switch_to.active_element.get_attribute("id") == "tab-text"
    d.save_screenshot(str(artifacts / "7-pinpoint-laptop.png"))
    d.switch_to.active_element.send_keys(Keys.ESCAPE)

    # the same place from a link: #judgment=SC001&at=START-END, offsets into the stored text
    text = sample_archive.text("SC001")
    start = text.index("The question that arises")
    end = start + len("The question that arises for consideration")
    d.get(f"{live_server.url}/#judgment=SC001&at={start}-{end}")
    selector = f'#judgment-text mark.current[data-start="{start}"]'
    _wait(d).until(
        lambda drv: (
            drv.find_elements(By.CSS_SELECTOR, selector) and drv.find_element(By.CSS_SELECTOR, selector).is_displayed()
        )
    )
    assert d.find_element(By.CSS_SELECTOR, selector).text == text[start:end]
    assert d.find_element(By.ID, "judgment-title").text.startswith("Harbans Lal")


def test_a_link_to_an_unknown_judgment_shows_an_error(browser, live_server):
    d = browser
    d.get(f"{live_server.url}/#judgment=%3Cimg%20src%3Dx%3E&at=1-5")
    _wait(d).until(EC.visibility_of_element_located((By.ID, "error")))
    assert "no summary of '<img src=x>'" in d.find_element(By.ID, "error").text
    assert not d.find_elements(By.CSS_SELECTOR, "img")
