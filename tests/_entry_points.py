"""A distribution that declares entry points, written to a folder for `sys.path`: what
`pip install` of a package outside midturn leaves behind, without installing anything."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def write_distribution(
    root: Path, name: str, entry_points: dict[str, dict[str, str]], modules: dict[str, str]
) -> Path:
    """`root` holding the modules `{module_name: source}` and a `<name>-0.1.dist-info`
    whose entry_points.txt declares `{group: {entry_name: "module:attr"}}`. Returns
    `root`, to put on `sys.path` (or PYTHONPATH)."""
    root.mkdir(parents=True, exist_ok=True)
    for module, source in modules.items():
        (root / f"{module}.py").write_text(source, encoding="utf-8")
    info = root / f"{name.replace('-', '_')}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n", encoding="utf-8"
    )
    lines = []
    for group, points in entry_points.items():
        lines.append(f"[{group}]")
        lines += [f"{entry} = {target}" for entry, target in points.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def run_python(code: str, path: Path) -> subprocess.CompletedProcess[str]:
    """`code` in a fresh interpreter with `path` first on its import path."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(path), *sys.path])}
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
