"""A pytest plugin (registered by tests/conftest.py): one headless Chromium for the whole test session.

Playwright's sync API runs one event loop per thread, so two ``sync_playwright()`` alive at once in the test process
fail ("using Playwright Sync API inside the asyncio loop"): every browser test takes this one session fixture
rather than starting its own.
"""

from __future__ import annotations

import os

import pytest

#: Debian's Chromium (``apt-get install chromium``); Playwright drives it, no browser is downloaded.
CHROMIUM = os.environ.get("GOLDEVAL_CHROMIUM", "/usr/bin/chromium")
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="session")
def browser():
    """A launched headless Chromium, shared by the session (its contexts are per test)."""
    from playwright.sync_api import sync_playwright  # the test extra's playwright, only when a browser test runs

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        yield b
        b.close()
