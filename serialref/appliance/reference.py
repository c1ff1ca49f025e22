"""The reference of every configuration key, in Markdown, made from the option table.

``serialref config keys`` prints it, and docs/configuration.md holds it verbatim (a
test compares the two), so the docs say exactly what the code reads: each key's type,
default, command-line option and meaning come from its row in
:mod:`serialref.appliance.options` and nowhere else.
"""

from __future__ import annotations

from typing import Any

from serialref.appliance.options import MATCH_OPTIONS, MatchOption, Section, Where

__all__ = ["reference"]

_PORTS_INTRO = "One table per player. Port A's player has White in game 1."
_HEADER = "| Key | Type | Default | Option | Meaning |\n|---|---|---|---|---|"


def reference() -> str:
    """Every key, one Markdown table per section of the docs."""
    parts = []
    for section in Section:
        parts.append(f"### {section}")
        if section is Section.PORTS:
            parts.append(_PORTS_INTRO)
        rows = [_row(option, section) for option in MATCH_OPTIONS if _shows(option, section)]
        parts.append("\n".join([_HEADER, *rows]))
    return "\n\n".join(parts) + "\n"


def _shows(option: MatchOption[Any], section: Section) -> bool:
    """A key shared by both ports shows at the top level and in the ports' tables."""
    return option.section is section or (
        section is Section.PORTS and option.where is Where.BOTH
    )


def _row(option: MatchOption[Any], section: Section) -> str:
    in_port_table = section is Section.PORTS and option.where is Where.BOTH
    default = f"top-level `{option.key}`" if in_port_table else _default(option)
    meaning = option.port_doc if in_port_table else option.doc
    cells = (f"`{option.key}`", option.kind.describe, default, _flags(option), meaning)
    return f"| {' | '.join(cells)} |"


def _default(option: MatchOption[Any]) -> str:
    if option.default_text:
        return option.default_text
    value = option.default
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, str):
        return f'`"{value}"`'
    return f"`{value!r}`"


def _flags(option: MatchOption[Any]) -> str:
    """The option on each verb's command line; the verb is named where they differ."""
    spelled = {verb: " / ".join(f"`{flag}`" for flag in flags)
               for verb, flags in option.flags.items()}  # fmt: skip
    if len(set(spelled.values())) == 1 and len(spelled) > 1:
        return next(iter(spelled.values()))
    return ", ".join(f"{flags} (`serialref {verb}`)" for verb, flags in spelled.items())
