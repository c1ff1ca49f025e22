"""What ``pip install .`` adds to an empty virtual environment, core and with each extra.

Run as ``python bench/install_size.py [--extras]``. A bare venv (pip and setuptools
only) is made first, then one venv per install, side by side in a temporary folder;
each figure is the disk space (``du``'s blocks) of the install's site-packages less the
bare venv's. The target for the core install, what a referee box needs, is 40 MB.
``--extras`` also measures ``[report]``, ``[fairy]``, ``[watch]`` and ``[all]``
(pyffish compiles from source where no wheel fits the machine: minutes, not seconds).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_MB = 40.0
EXTRAS = ("report", "fairy", "watch", "all")


def _site_packages_bytes(venv: Path) -> int:
    """Disk space of the venv's site-packages, counted in blocks as ``du`` counts them."""
    (site,) = venv.glob("lib/python3*/site-packages")
    total = 0
    for folder, _, files in os.walk(site):
        for name in files:
            total += os.lstat(Path(folder) / name).st_blocks * 512
    return total


def _venv(where: Path, requirement: str | None) -> int:
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True)
    if requirement is not None:
        pip = [str(where / "bin" / "pip"), "install", "-q", "--no-cache-dir", requirement]
        subprocess.run(pip, check=True, stderr=subprocess.DEVNULL)
    return _site_packages_bytes(where)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--extras", action="store_true", help="measure each extra too")
    args = parser.parse_args()
    installs = {"core": str(ROOT)}
    if args.extras:
        installs |= {f"[{extra}]": f"{ROOT}[{extra}]" for extra in EXTRAS}
    with tempfile.TemporaryDirectory(prefix="serialref-size-") as folder:
        bare = _venv(Path(folder) / "bare", None)
        print(f"bare venv site-packages: {bare / 1e6:.1f} MB (pip, setuptools)")
        for label, requirement in installs.items():
            added = (_venv(Path(folder) / label.strip("[]"), requirement) - bare) / 1e6
            verdict = f"  (target {TARGET_MB:.0f} MB)" if label == "core" else ""
            print(f"pip install {label:<9} adds {added:6.1f} MB{verdict}")


if __name__ == "__main__":
    main()
