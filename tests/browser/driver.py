"""Headless Debian Chromium driven by Selenium (never a downloaded browser, no Selenium Manager)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from selenium import webdriver
from selenium.webdriver import Chrome as WebDriver
from selenium.webdriver.chrome.service import Service

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
         "--disable-dev-shm-usage", "--window-size=1360,1000", "--force-device-scale-factor=1"]


def missing_browser() -> str | None:
    """Why the browser cannot run here, or None."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if not path.exists():
            return (f"{path} missing: run `bash scripts/test-tools.sh` as root "
                    "(apt-get install chromium chromium-driver)")
    return None


@contextmanager
def chromium(extra_flags: Sequence[str] = ()) -> Iterator[WebDriver]:
    """A fresh headless Chromium with its own throw-away profile (``extra_flags`` added to FLAGS)."""
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager must never download anything
    profile = tempfile.mkdtemp(prefix="neorag-ui-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in [*FLAGS, *extra_flags]:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def screenshot(driver: WebDriver, name: str) -> Path:
    """Save a full-page PNG under tests/artifacts/ (git-ignored) and return its path."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    height = driver.execute_script("return Math.max(document.body.scrollHeight, 700)")
    driver.set_window_size(1360, min(int(height) + 40, 2400))
    path = ARTIFACTS / f"ui_{name}.png"
    driver.save_screenshot(str(path))
    driver.set_window_size(1360, 1000)
    return path


def console_errors(driver: WebDriver) -> list[str]:
    """SEVERE browser console entries (JS exceptions, failed loads) since the last call."""
    return [e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
