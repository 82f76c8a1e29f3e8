"""The inbox ships inside the package: plain files, no build step, every module the page
loads present where the gateway serves them from."""

from __future__ import annotations

import re
from importlib.resources import files

from midturn.gateway._app import WEB_DIR

IMPORT = re.compile(r"""^import\s+[^"']*from\s+["']\./([\w.-]+)["'];""", re.MULTILINE)


def test_every_module_the_page_loads_is_in_the_package() -> None:
    web = files("midturn") / "web"
    assert (web / "index.html").is_file()
    html = (web / "index.html").read_text(encoding="utf-8")
    entry = re.findall(r'src="\./static/([\w.-]+)"', html)
    assert entry == ["app.js"]
    seen: set[str] = set()
    todo = list(entry)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        source = (web / name).read_text(encoding="utf-8")
        todo.extend(IMPORT.findall(source))
    assert {"api.js", "sse.js", "questions.js", "permission.js"} <= seen
    shipped = {path.name for path in web.iterdir() if path.name.endswith(".js")}
    assert seen == shipped, f"unused or missing modules: {seen ^ shipped}"


def test_the_gateway_serves_the_packaged_folder() -> None:
    assert str(files("midturn") / "web") == str(WEB_DIR)


def test_no_module_writes_markup_from_strings() -> None:
    web = files("midturn") / "web"
    for path in web.iterdir():
        if path.name.endswith(".js"):
            source = path.read_text(encoding="utf-8")
            for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
                assert sink not in source, f"{path.name} uses {sink}"


def test_the_accessibility_checker_is_not_shipped() -> None:
    """axe-core is vendored under tests/web/vendor for the tests only."""
    web = files("midturn") / "web"
    shipped = [path.name for path in web.iterdir()]
    assert not [name for name in shipped if "axe" in name.lower()], shipped
    assert {"manifest.webmanifest", "icons"} <= set(shipped)
    icons = {path.name for path in (web / "icons").iterdir()}
    assert {"icon.svg", "icon-192.png", "icon-512.png", "icon-maskable-512.png"} <= icons
