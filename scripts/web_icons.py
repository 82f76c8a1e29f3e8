"""Draw the web inbox's PNG icons from its SVG ones (src/midturn/web/icons/), with the
same Chromium the browser tests use: `.venv/bin/python scripts/web_icons.py`.

The PNGs are committed (an installed web app wants 192 and 512 px PNGs, and a maskable
one); run this again after changing an SVG."""

from __future__ import annotations

import os
from pathlib import Path

from playwright.sync_api import sync_playwright

ICONS = Path(__file__).resolve().parents[1] / "src" / "midturn" / "web" / "icons"
CHROMIUM = os.environ.get("MIDTURN_CHROMIUM") or "/usr/bin/chromium"
# (source, size, written as)
RENDERS = [
    ("icon.svg", 192, "icon-192.png"),
    ("icon.svg", 512, "icon-512.png"),
    ("icon.svg", 180, "apple-touch-icon.png"),
    ("icon-maskable.svg", 512, "icon-maskable-512.png"),
]


def main() -> None:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--headless=new", "--no-sandbox"]
        )
        for source, size, name in RENDERS:
            page = browser.new_page(viewport={"width": size, "height": size})
            svg = (ICONS / source).read_text(encoding="utf-8")
            page.set_content(
                "<style>html,body{margin:0;background:transparent}"
                f"svg{{display:block;width:{size}px;height:{size}px}}</style>{svg}"
            )
            page.screenshot(path=str(ICONS / name), omit_background=True)
            page.close()
            print(f"wrote {ICONS / name}")
        browser.close()


if __name__ == "__main__":
    main()
