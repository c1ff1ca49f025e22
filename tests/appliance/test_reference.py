"""serialref.appliance.reference: the docs' key tables are the option table's, word for word."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from serialref import cli
from serialref.appliance.options import MATCH_OPTIONS, Section
from serialref.appliance.reference import reference

DOCS = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"
_GENERATED = re.compile(
    r"<!-- Made by `serialref config keys`.*?-->\n\n(.*?)\n"
    r"<!-- End of `serialref config keys`\. -->",
    re.DOTALL,
)


def test_the_docs_hold_the_reference_as_the_table_makes_it() -> None:
    found = _GENERATED.search(DOCS.read_text(encoding="utf-8"))
    assert found is not None, "the markers around the generated tables are missing"
    assert found.group(1) == reference(), (
        "docs/configuration.md is out of date: replace its key tables with the output of "
        "`serialref config keys`"
    )


def test_config_keys_prints_the_reference(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["config", "keys"]) == cli.EXIT_OK
    assert capsys.readouterr().out == reference()


def test_every_key_has_a_row_in_its_section() -> None:
    text = reference()
    sections = re.split(r"^### ", text, flags=re.MULTILINE)[1:]
    assert [section.split("\n", 1)[0] for section in sections] == [str(s) for s in Section]
    rows = {section.split("\n", 1)[0]: section for section in sections}
    for option in MATCH_OPTIONS:
        assert f"| `{option.key}` | {option.kind.describe} |" in rows[option.section], option.key
    ports = rows[Section.PORTS]
    line_rate = "| `baud` | integer > 0 | top-level `baud` | `--baud` | This port's line rate. |"
    assert line_rate in ports


def test_options_that_differ_between_verbs_name_the_verbs() -> None:
    text = reference()
    assert "| `--replicate-key` (`serialref run`), `--key` (`serialref standby`) |" in text
    assert "| `--replicate` (`serialref run`) |" in text
    assert "| `PORT_A` / `PORT_B` |" in text
    assert "| `bytesize` | 5 to 8 | `8` |  | Data bits. |" in text
