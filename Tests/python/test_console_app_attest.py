"""The console's App Attest keys view in headless Chromium (as test_console_browser.py drives it), against a
real `twobits serve` whose refresher renews receipts at the sandbox: a simulated device farm (three keys on
one phone) gets Apple's risk metric 3, an honest phone 1. The view shows a key's metric, its time, the
receipt's not-before and expiry and the metric's history; the list filters by a minimum metric and pages
as the API does; a hostile revocation reason and a hostile typed key are shown as text, never as markup."""
import pytest

from test_app_attest_risk import PRODUCTION, app_attest, farm_and_honest_phone, key_view
from test_console_browser import browser, browser_errors, go, shot, sign_in, wait_for, wait_message  # noqa: F401
from selenium.common.exceptions import StaleElementReferenceException  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as EC  # noqa: E402

HOSTILE_REASON = '<img src=x onerror="window.__pwned=1"><b id="injected">farm</b>'
HOSTILE_KEY = '<img src=x onerror="window.__pwned=2">'


@pytest.fixture(scope="module")
def deployment(twobits_module_factory):
    # Production keys, the sandbox's receipt root trusted: the refresher renews each key's receipt once.
    return twobits_module_factory(environment=PRODUCTION, extra={"app_attest": app_attest()})


@pytest.fixture(scope="module")
def keys(deployment):
    farm_keys, (_, honest) = farm_and_honest_phone(deployment, 3)
    revoked_id, revoked = next(iter(farm_keys.items()))
    answer = deployment.post(f"/v1/admin/app-attest/keys/{revoked}/revoke", {"reason": HOSTILE_REASON}, client="ops")
    assert answer.status == 200 and answer.json["revoked_reason"] == HOSTILE_REASON, answer
    return {"honest": honest, "farm": sorted(farm_keys.values()), "revoked_id": revoked_id, "revoked": revoked}


@pytest.fixture(scope="module")
def console(deployment, browser, keys):  # noqa: F811
    sign_in(browser, deployment, deployment.api_keys["ops"])
    wait_for(browser, EC.visibility_of_element_located((By.ID, "page-device")))
    go(browser, "app-attest")
    return browser


def field(driver, term):
    """The value shown beside `term` in the key's details."""
    return driver.execute_script("""
        const dt = [...document.querySelectorAll('#key-detail dt')].find(d => d.textContent === arguments[0]);
        return dt ? dt.nextElementSibling.textContent : null;""", term)


def open_key(driver, text):
    value = driver.find_element(By.ID, "key-value")
    value.clear()
    value.send_keys(text)
    driver.find_element(By.CSS_SELECTOR, "#key-form button[type=submit]").click()


def list_keys(driver, minimum, per_page):
    for name, value in (("risk-min", minimum), ("risk-limit", per_page)):
        element = driver.find_element(By.ID, name)
        element.clear()
        element.send_keys(str(value))
    driver.find_element(By.CSS_SELECTOR, "#risk-form button[type=submit]").click()


def listed(driver):
    """The artifacts the list shows; [] while it is being redrawn (a row read as the page replaces it is stale)."""
    try:
        return [row.find_element(By.CSS_SELECTOR, "td").text for row in driver.find_elements(By.CSS_SELECTOR, "#risk-list tbody tr")]
    except StaleElementReferenceException:
        return []


def test_a_key_shows_its_metric_receipt_times_and_history(deployment, keys, console):
    console.get_log("browser")
    expected = key_view(deployment, keys["honest"])
    open_key(console, keys["honest"])
    wait_for(console, lambda d: field(d, "Artifact") == keys["honest"])
    assert field(console, "Risk metric") == "1"
    for term, name in (("Metric at", "risk_metric_at"), ("Receipt not before", "receipt_not_before"),
                       ("Receipt expires", "receipt_expires_at"), ("Key id", "key_id"), ("App", "app_id")):
        assert expected[name] and field(console, term) == expected[name], (term, expected)
    assert field(console, "Receipt stopped") == "—" and field(console, "Revoked") == "no"
    rows = [[cell.text for cell in row.find_elements(By.TAG_NAME, "td")]
            for row in console.find_elements(By.CSS_SELECTOR, "#key-history tbody tr")]
    assert rows == [[h["at"], str(h["metric"])] for h in expected["risk_history"]] and len(rows) == 1, rows
    assert len(console.find_elements(By.CSS_SELECTOR, "#key-history svg.sparkline circle")) == 1
    shot(console, "app-attest-key")
    assert browser_errors(console) == []


def test_a_hostile_reason_and_a_hostile_key_are_shown_as_text(deployment, keys, console):
    console.get_log("browser")
    # By its key id in standard base64, as the sandbox and the API spell it (the console converts it).
    open_key(console, keys["revoked_id"])
    wait_for(console, lambda d: field(d, "Artifact") == keys["revoked"])
    assert console.find_elements(By.CSS_SELECTOR, "#key-result img, #injected") == []
    assert field(console, "Revoked reason") == HOSTILE_REASON
    assert field(console, "Revoked") == "yes" and field(console, "Risk metric") == "3"
    open_key(console, HOSTILE_KEY)
    assert HOSTILE_KEY in wait_message(console, "No attested key")
    assert console.find_elements(By.CSS_SELECTOR, "main img") == []
    assert console.execute_script("return window.__pwned === undefined") is True
    shot(console, "app-attest-hostile")
    assert browser_errors(console, allowed=["status of 404"]) == []


def test_the_list_filters_by_minimum_metric_and_pages(deployment, keys, console):
    console.get_log("browser")
    list_keys(console, 3, 2)
    wait_for(console, lambda d: len(listed(d)) == 2)
    more = console.find_element(By.ID, "risk-more")
    assert more.is_displayed()
    # The next page continues the listed filter, not the inputs edited since.
    console.find_element(By.ID, "risk-min").clear()
    console.find_element(By.ID, "risk-min").send_keys("1")
    more.click()
    wait_for(console, lambda d: len(listed(d)) == 3)
    # The API's third page is empty: nothing more to fetch.
    wait_for(console, lambda d: not d.find_element(By.ID, "risk-more").is_displayed())
    assert sorted(listed(console)) == keys["farm"]
    shot(console, "app-attest-list")

    list_keys(console, 1, 25)
    wait_for(console, lambda d: len(listed(d)) == 4)
    assert sorted(listed(console)) == sorted(keys["farm"] + [keys["honest"]])
    assert not console.find_element(By.ID, "risk-more").is_displayed()

    list_keys(console, 4, 25)
    wait_for(console, lambda d: "No key with a risk metric of at least 4" in d.find_element(By.ID, "risk-list").text)

    # A listed row opens the key.
    list_keys(console, 3, 25)
    wait_for(console, lambda d: len(listed(d)) == 3)
    first = listed(console)[0]
    console.find_element(By.CSS_SELECTOR, "#risk-list tr.clickable").click()
    wait_for(console, lambda d: field(d, "Artifact") == first)
    assert browser_errors(console) == []


def test_the_view_fits_a_phone(deployment, keys, console):
    console.set_window_size(390, 844)
    try:
        open_key(console, keys["revoked"])
        wait_for(console, lambda d: field(d, "Artifact") == keys["revoked"])
        overflow = console.execute_script("return document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 1, f"the App Attest keys view is {overflow} px wider than a 390 px window"
        shot(console, "app-attest-phone")
    finally:
        console.set_window_size(1280, 800)
