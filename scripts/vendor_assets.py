"""Copy the site's JavaScript from node_modules into _vendor/ (served as the site's _static/).

The book loads nothing from a CDN: MathJax 3 and Font Awesome's CSS and web fonts (the theme's
icons, without its 1.5 MB script) are pinned in package.json / package-lock.json, installed
with `npm ci`, and copied here before `jupyter-book build`. Nothing in _vendor/ is committed.

Usage: python scripts/vendor_assets.py
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NODE = ROOT / "node_modules"
VENDOR = ROOT / "_vendor"

# (source inside node_modules, destination inside _vendor)
ASSETS = [
    ("mathjax/es5", "mathjax"),
    ("@fortawesome/fontawesome-free/css", "fontawesome/css"),
    ("@fortawesome/fontawesome-free/webfonts", "fontawesome/webfonts"),
]


def main() -> int:
    missing = [src for src, _ in ASSETS if not (NODE / src).exists()]
    if missing:
        print(
            f"vendor_assets: {', '.join(missing)} not found in node_modules; run `npm ci` first",
            file=sys.stderr,
        )
        return 1
    if VENDOR.exists():
        shutil.rmtree(VENDOR)
    VENDOR.mkdir()
    for src, dst in ASSETS:
        source, target = NODE / src, VENDOR / dst
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("*.map", "*.LICENSE.txt"))
        else:
            shutil.copy2(source, target)
    total = sum(p.stat().st_size for p in VENDOR.rglob("*") if p.is_file())
    print(
        f"vendor_assets: copied {len(ASSETS)} packages into {VENDOR.relative_to(ROOT)}/ "
        f"({total / 2**20:.1f} MiB)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
