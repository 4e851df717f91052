"""The admin console in a real browser: Debian's headless Chromium driven by Selenium through Debian's
chromedriver (Selenium Manager never runs: the driver is given by path and SE_OFFLINE=true), against a
real `twobits serve` and the sandbox. A screenshot of each page goes to .build/test-output/console/.

Every page is exercised against the real admin API: typed confirmation on bans, the overview, one audit
event, CSV export, cancelling a pending order."""
import os
import shutil
import tempfile
from pathlib import Path

import pytest

os.environ["SE_OFFLINE"] = "true"
webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support import expected_conditions as EC  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

from conftest import REPO, current_month, http  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
OUTPUT = REPO / ".build" / "test-output" / "console"


@pytest.fixture(scope="module")
def deployment(twobits_module_factory):
    return twobits_module_factory(promotions=[{"id": "welcome", "starts": current_month()}])


@pytest.fixture(scope="module")
def browser():
    if not (os.access(CHROMIUM, os.X_OK) and os.access(CHROMEDRIVER, os.X_OK)):
        pytest.skip("Debian's chromium and chromium-driver are not installed (.ci/install-deps.sh --test)")
    profile = tempfile.mkdtemp(prefix="twobits-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ["--no-sandbox", "--headless=new", f"--user-data-dir={profile}", "--disable-background-networking",
                 "--disable-component-update", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,900"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.implicitly_wait(0)
    OUTPUT.mkdir(parents=True, exist_ok=True)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def wait_for(driver, condition, timeout=15):
    return WebDriverWait(driver, timeout).until(condition)


def message(driver):
    return driver.find_element(By.ID, "message").text


def wait_message(driver, fragment):
    wait_for(driver, lambda d: fragment in message(d))
    return message(driver)


def browser_errors(driver, allowed=()):
    """SEVERE browser log entries, less the network refusals a step provoked on purpose."""
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE" and not any(a in e["message"] for a in allowed)]


def sign_in(driver, deployment, key):
    driver.get(deployment.url + "/admin/#/signin")
    field = wait_for(driver, EC.visibility_of_element_located((By.ID, "api-key")))
    field.clear()
    field.send_keys(key)
    driver.find_element(By.CSS_SELECTOR, "#signin-form button[type=submit]").click()


def go(driver, page):
    driver.find_element(By.CSS_SELECTOR, f'nav a[href="#/{page}"]').click()
    wait_for(driver, EC.visibility_of_element_located((By.ID, "page-" + page)))


def look_up(driver, token):
    go(driver, "device")
    Select(driver.find_element(By.ID, "lookup-kind")).select_by_value("device_token")
    field = driver.find_element(By.ID, "lookup-value")
    field.clear()
    field.send_keys(token)
    driver.find_element(By.CSS_SELECTOR, "#lookup-form button[type=submit]").click()
    wait_for(driver, EC.visibility_of_element_located((By.ID, "order-form")))
    return driver.find_element(By.ID, "order-digest").text


def order(driver, action, reason, confirmation):
    Select(driver.find_element(By.ID, "order-action")).select_by_value(action)
    for field, value in (("order-reason", reason), ("order-confirm", confirmation)):
        element = driver.find_element(By.ID, field)
        element.clear()
        element.send_keys(value)
    driver.find_element(By.CSS_SELECTOR, "#order-form button[type=submit]").click()


def shot(driver, name):
    driver.save_screenshot(str(OUTPUT / f"{name}.png"))


def test_csp_header_on_the_page(deployment):
    answer = http("GET", deployment.url + "/admin/")
    assert "default-src 'self'" in answer.headers.get("Content-Security-Policy", "")


def test_wrong_and_non_admin_keys_are_refused(deployment, browser):
    browser.get_log("browser")
    sign_in(browser, deployment, "tb_wrong_key_" + "x" * 20)
    assert "401" in wait_message(browser, "refused")
    assert browser.find_element(By.ID, "nav").is_displayed() is False
    assert browser.execute_script("return sessionStorage.length") == 0
    shot(browser, "signin-refused")
    sign_in(browser, deployment, deployment.api_keys["main"])
    assert "403" in wait_message(browser, "not an admin key")
    assert browser.execute_script("return sessionStorage.length") == 0
    assert browser_errors(browser, allowed=["status of 401", "status of 403"]) == []


def test_sign_in_keeps_the_key_in_session_storage_only(deployment, browser):
    sign_in(browser, deployment, deployment.api_keys["ops"])
    wait_for(browser, EC.visibility_of_element_located((By.ID, "page-device")))
    assert browser.execute_script("return Object.values(sessionStorage)") == [deployment.api_keys["ops"]]
    assert browser.execute_script("return localStorage.length") == 0
    assert browser.get_cookies() == []
    shot(browser, "device-desk")


def test_look_up_and_a_wrong_confirmation_writes_nothing(deployment, browser):
    device_id = deployment.new_device()
    token = deployment.mint(device_id)
    digest = look_up(browser, token)
    state = deployment.post("/v1/admin/devices/state", {"device_token": token}, client="ops").json
    assert digest == state["token_sha256_prefix"]
    result = browser.find_element(By.ID, "device-result").text
    assert "Banned" in result and "Reinstalls" in result and "Stale" in result
    order(browser, "ban", "browser test", "zzzzzz" if not digest.endswith("zzzzzz") else "yyyyyy")
    assert "nothing was sent" in wait_message(browser, "does not match")
    assert deployment.device(device_id)["bit1"] is False
    assert deployment.get("/v1/admin/audit?limit=5", client="ops").json["events"] == []
    shot(browser, "device-lookup")


def test_ban_audit_overview_unban(deployment, browser):
    browser.get_log("browser")
    device_id = deployment.new_device()
    token = deployment.mint(device_id)
    digest = look_up(browser, token)
    order(browser, "ban", "browser test ban", digest[-6:])
    wait_message(browser, "Ban sent")
    assert deployment.device(device_id)["bit1"] is True
    wait_for(browser, lambda d: "yes" in d.find_element(By.CSS_SELECTOR, "#device-result .banned").text)
    wait_for(browser, lambda d: "browser test ban" in d.find_element(By.ID, "device-history").text)
    shot(browser, "device-banned")

    go(browser, "audit")
    wait_for(browser, lambda d: "browser test ban" in d.find_element(By.ID, "audit-table").text)
    browser.find_element(By.CSS_SELECTOR, "#audit-table tr.clickable").click()
    wait_for(browser, lambda d: "token_sha256_prefix" in d.find_element(By.ID, "audit-detail").text)
    action_filter = browser.find_element(By.ID, "f-action")
    action_filter.send_keys("unban")
    browser.find_element(By.CSS_SELECTOR, "#audit-form button[type=submit]").click()
    wait_for(browser, lambda d: "browser test ban" not in d.find_element(By.ID, "audit-table").text)
    action_filter.clear()
    browser.find_element(By.CSS_SELECTOR, "#audit-form button[type=submit]").click()
    wait_for(browser, lambda d: "browser test ban" in d.find_element(By.ID, "audit-table").text)
    shot(browser, "audit")

    # A claim by another device, so the overview has a chart to draw; the ban above wrote Apple's bits.
    claim = deployment.post("/v1/promotions/welcome/claim", {"device_token": deployment.mint(deployment.new_device())}, client="marketing")
    assert claim.status == 200, claim
    go(browser, "overview")
    wait_for(browser, lambda d: "Pending bans" in d.find_element(By.ID, "overview-body").text)
    overview = browser.find_element(By.ID, "overview-body").text
    assert browser.find_elements(By.CSS_SELECTOR, "#overview-body svg.chart"), overview
    assert "welcome" in overview and "update_two_bits" in overview, overview
    shot(browser, "overview")

    look_up(browser, token)
    order(browser, "unban", "browser test unban", digest[-6:])
    wait_message(browser, "Unban sent")
    assert deployment.device(device_id)["bit1"] is False
    assert browser_errors(browser) == []


def test_the_overview_shows_app_attest_adoption_and_why_apps_fell_back(deployment, browser):
    browser.get_log("browser")
    for status in ("unsupported", "unsupported", "network", None):
        fields = {"app_attest_status": status} if status else {}
        assert deployment.exchange(deployment.mint(deployment.new_device()), **fields).status == 201
    go(browser, "overview")
    wait_for(browser, lambda d: "App Attest adoption per hour" in d.find_element(By.ID, "overview-body").text)
    overview = browser.find_element(By.ID, "overview-body").text
    assert browser.find_elements(By.CSS_SELECTOR, '#overview-body svg.chart[aria-label^="App Attest adoption"]'), overview
    # This deployment has no App Attest: every token is a fallback token, the strong share 0 %.
    assert "unsupported: 2" in overview and "network: 1" in overview and "no reason given:" in overview, overview
    assert "0.0 %" in overview, overview
    shot(browser, "overview-adoption")
    assert browser_errors(browser) == []


def test_pending_order_by_install_id_is_cancellable(deployment, browser):
    if deployment.request("DELETE", "/v1/admin/bans/pending/install-none", client="ops").status == 405:
        pytest.skip("the server has no console admin API yet (cancel pending)")
    go(browser, "device")
    Select(browser.find_element(By.ID, "lookup-kind")).select_by_value("install_id")
    field = browser.find_element(By.ID, "lookup-value")
    field.clear()
    field.send_keys("install-browser-1")
    browser.find_element(By.CSS_SELECTOR, "#lookup-form button[type=submit]").click()
    wait_for(browser, EC.visibility_of_element_located((By.ID, "order-form")))
    # The install form confirms with the last 6 characters of the install id.
    order(browser, "ban", "scripted signups", "install-browser-1"[-6:])
    wait_for(browser, lambda d: "install-browser-1" in d.find_element(By.ID, "pending-list").text)
    browser.find_element(By.CSS_SELECTOR, "#pending-list button").click()
    wait_message(browser, "cancelled")
    assert deployment.get("/v1/admin/bans/pending", client="ops").json["pending"] == []


def test_debug_secret_create_and_revoke(deployment, browser):
    browser.get_log("browser")
    go(browser, "overview")
    field = wait_for(browser, EC.visibility_of_element_located((By.ID, "secret-name")))
    field.send_keys("browser-debug")
    browser.find_element(By.CSS_SELECTOR, "#secret-form button[type=submit]").click()
    once = wait_for(browser, EC.visibility_of_element_located((By.ID, "secret-once")))
    assert "shown once" in once.text
    wait_for(browser, lambda d: "browser-debug" in d.find_element(By.ID, "secret-list").text)
    listed = deployment.get("/v1/admin/debug-secrets", client="ops").json["debug_secrets"]
    assert [s["name"] for s in listed] == ["browser-debug"]
    shot(browser, "debug-secret")
    browser.find_element(By.CSS_SELECTOR, "#secret-list button").click()
    wait_message(browser, "revoked")
    assert deployment.get("/v1/admin/debug-secrets", client="ops").json["debug_secrets"] == []
    go(browser, "audit")
    wait_for(browser, lambda d: "debug" in d.find_element(By.ID, "audit-table").text or "No events" in d.find_element(By.ID, "audit-table").text)
    shot(browser, "audit-trail")
    assert browser_errors(browser) == []


def unlabelled_controls(driver):
    """Visible form controls without an accessible name (a <label>, aria-label or, for buttons, text)."""
    return driver.execute_script("""
        return [...document.querySelectorAll('input, select, textarea, button')]
          .filter(e => e.offsetParent !== null)
          .filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label')
                       && !(e.tagName === 'BUTTON' && e.textContent.trim()))
          .map(e => e.id || e.outerHTML.slice(0, 80));""")


def test_every_control_is_labelled_and_the_desk_works_by_keyboard(deployment, browser):
    for page in ("device", "audit", "overview", "app-attest"):
        go(browser, page)
        assert unlabelled_controls(browser) == [], page
    go(browser, "device")
    # From the page's top, Tab reaches the look-up controls in order; Enter submits.
    browser.execute_script("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0)")
    body = browser.find_element(By.TAG_NAME, "body")
    body.click()
    reached = []
    for _ in range(25):
        browser.switch_to.active_element.send_keys(Keys.TAB)
        reached.append(browser.switch_to.active_element.get_attribute("id") or browser.switch_to.active_element.text)
        if reached[-1] == "lookup-value":
            break
    assert "lookup-kind" in reached and reached[-1] == "lookup-value", reached
    assert reached[-2] == "lookup-kind" or "lookup-kind" in reached
    token = deployment.mint(deployment.new_device())
    Select(browser.find_element(By.ID, "lookup-kind")).select_by_value("device_token")
    field = browser.find_element(By.ID, "lookup-value")
    field.clear()
    field.send_keys(token)
    browser.switch_to.active_element.send_keys(Keys.TAB)   # to the Look up button
    browser.switch_to.active_element.send_keys(Keys.ENTER)
    wait_for(browser, EC.visibility_of_element_located((By.ID, "order-form")))
    assert "Banned" in browser.find_element(By.ID, "device-result").text


def test_an_api_refusal_shows_the_apis_own_message(deployment, browser):
    go(browser, "audit")
    since = browser.find_element(By.ID, "f-since")
    since.clear()
    since.send_keys("yesterday")
    browser.find_element(By.CSS_SELECTOR, "#audit-form button[type=submit]").click()
    shown = wait_message(browser, "(400)")
    assert "since" in shown and "object" not in shown, shown
    since.clear()
    assert browser_errors(browser, allowed=["status of 400"]) == []


@pytest.mark.parametrize("width, height", [(390, 844), (1280, 800)])
def test_every_page_fits_a_phone_and_a_laptop_width(deployment, browser, width, height):
    browser.set_window_size(width, height)
    try:
        for page in ("device", "audit", "overview", "app-attest"):
            go(browser, page)
            overflow = browser.execute_script("return document.documentElement.scrollWidth - document.documentElement.clientWidth")
            assert overflow <= 1, f"{page} is {overflow} px wider than a {width} px window"
        shot(browser, f"overview-{width}")
    finally:
        browser.set_window_size(1280, 800)


def test_sign_out_forgets_the_key(deployment, browser):
    browser.find_element(By.ID, "sign-out").click()
    wait_for(browser, EC.visibility_of_element_located((By.ID, "page-signin")))
    assert browser.execute_script("return sessionStorage.length") == 0
    browser.get(deployment.url + "/admin/#/audit")
    wait_for(browser, EC.visibility_of_element_located((By.ID, "page-signin")))
