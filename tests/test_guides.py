"""What a new user reads first: the README's set-up and the referee box's short list."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
SH_BLOCKS = re.findall(r"```sh\n(.*?)\n```", README, flags=re.DOTALL)


def test_the_demo_command_works_from_a_fresh_clone_as_written() -> None:
    assert SH_BLOCKS[0] == (
        "python3 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/serialref demo"
    )


def test_serialref_is_put_on_path_before_a_command_calls_it_by_name() -> None:
    bare = next(block for block in SH_BLOCKS if re.search(r"^serialref ", block, re.MULTILINE))
    assert README.index(". .venv/bin/activate") < README.index(bare)


def test_the_referee_box_list_reloads_udev_after_installing_the_rules() -> None:
    box = next(block for block in SH_BLOCKS if "udev/70-serialref.rules" in block)
    lines = box.splitlines()
    rules = next(i for i, line in enumerate(lines) if "udev/70-serialref.rules" in line)
    reload = next(i for i, line in enumerate(lines) if "udevadm control --reload" in line)
    assert rules < reload
    assert "udevadm trigger" in lines[reload]
    assert any("systemctl restart systemd-modules-load" in line for line in lines)


def test_the_libraries_section_gives_each_packages_licence() -> None:
    section = README.split("## Libraries", 1)[1].split("\n## ", 1)[0]
    for package, licence in (("pyserial", "BSD-3-Clause"), ("transitions", "MIT"),
                             ("python-chess", "GPL-3.0-or-later"), ("pyffish", "GPL-3.0"),
                             ("matplotlib", "Matplotlib licence"), ("textual", "MIT")):  # fmt: skip
        mention = section.index(f"`{package}`" if package != "python-chess" else package)
        assert licence in section[mention : mention + 120], package
    assert "serialref's own code is under the MIT licence" in section
