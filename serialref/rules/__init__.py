"""The rules of the game being refereed: standard chess or a variant, behind one interface.

Everything above this package (the referee, the clock, the recorders, the observers,
the client) asks a :class:`Rules` for its boards and names and never asks which
variant it is playing.
"""

from serialref.rules.base import (
    STANDARD,
    Drawing,
    Rules,
    find_rules,
    rules_of_tags,
    variant_names,
)

__all__ = ["STANDARD", "Drawing", "Rules", "find_rules", "rules_of_tags", "variant_names"]
