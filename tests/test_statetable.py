"""StateTable runs a transitions table as transitions' Machine does, row by row."""

from __future__ import annotations

import enum
from typing import Any

import pytest
from transitions import Machine

from serialref.errors import ProgrammingError
from serialref.statetable import StateTable


class Light(enum.Enum):
    OFF = "off"
    ON = "on"
    BROKEN = "broken"


STATES: list[dict[str, Any]] = [
    {"name": Light.OFF, "on_enter": "_entering", "on_exit": "_leaving"},
    {"name": Light.ON, "on_enter": "_entering", "on_exit": "_leaving"},
    {"name": Light.BROKEN, "ignore_invalid_triggers": True},
]
TRANSITIONS: list[dict[str, Any]] = [
    {"trigger": "flip", "source": Light.OFF, "dest": Light.ON, "conditions": "_powered",
     "before": "_before", "after": ["_after", "_again"]},
    {"trigger": "flip", "source": Light.OFF, "dest": None, "after": "_dark"},
    {"trigger": "flip", "source": Light.ON, "dest": Light.OFF, "before": "_before"},
    {"trigger": "blink", "source": [Light.OFF, Light.ON], "dest": "=", "after": "_after"},
    {"trigger": "look", "source": [Light.OFF, Light.ON], "dest": None, "after": "_after"},
    {"trigger": "smash", "source": [Light.OFF, Light.ON], "dest": Light.BROKEN},
]  # fmt: skip


class Lamp:
    """Notes every callback with the arguments it was given."""

    def __init__(self, powered: bool) -> None:
        self.state = Light.OFF
        self.powered = powered
        self.calls: list[tuple[str, tuple[object, ...]]] = []

    def _note(self, name: str, args: tuple[object, ...]) -> None:
        self.calls.append((name, args))

    def _powered(self, *args: object) -> bool:
        self._note("powered", args)
        return self.powered

    def __getattr__(self, name: str) -> Any:
        if not name.startswith("_") or name.startswith("__"):
            raise AttributeError(name)
        return lambda *args: self._note(name, args)


SCRIPT = [("flip", (1,)), ("flip", (2,)), ("blink", ()), ("look", ("x",)), ("flip", ()),
          ("smash", ()), ("flip", ()), ("look", ())]  # fmt: skip


@pytest.mark.parametrize("powered", [True, False])
def test_the_rows_run_as_machine_runs_them(powered: bool) -> None:
    by_machine, by_table = Lamp(powered), Lamp(powered)
    Machine(
        model=by_machine,
        states=STATES,
        transitions=TRANSITIONS,
        initial=Light.OFF,
        auto_transitions=False,
    )
    table = StateTable(Light, STATES, TRANSITIONS)
    for trigger, args in SCRIPT:
        by_machine.trigger(trigger, *args)
        table.fire(by_table, trigger, *args)
        assert by_table.state is by_machine.state
    assert by_table.calls == by_machine.calls
    assert by_table.state is Light.BROKEN


def test_a_trigger_without_a_row_is_a_bug_unless_the_state_ignores_it() -> None:
    table = StateTable(Light, STATES, [*TRANSITIONS, {"trigger": "fix", "source": Light.BROKEN,
                                                      "dest": Light.OFF}])  # fmt: skip
    lamp = Lamp(powered=True)
    with pytest.raises(ProgrammingError, match="fix has no row when off"):
        table.fire(lamp, "fix")
    with pytest.raises(ProgrammingError, match="nothing has no row when off"):
        table.fire(lamp, "nothing")
    table.fire(lamp, "smash")
    table.fire(lamp, "flip")
    assert lamp.state is Light.BROKEN
    table.fire(lamp, "fix")
    assert lamp.state is Light.OFF
