"""A state table steps a model exactly as ``transitions`` would, row by row."""

from __future__ import annotations

import enum
import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest
from transitions import Machine, MachineError

from serialref.errors import ProgrammingError
from serialref.referee import session
from serialref.referee.table import StateTable

TABLES: dict[str, tuple[type[enum.Enum], Sequence[Mapping[str, Any]]]] = {
    "seat": (session.SessionState, session.TRANSITIONS),
}


class Model:
    """Answers each condition as told and notes each of the ``callbacks`` it is called by."""

    def __init__(
        self, state: enum.Enum, answers: Mapping[str, bool], callbacks: Sequence[str] = ()
    ) -> None:
        self.state = state
        self.answers = answers
        self.callbacks = set(callbacks)
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Callable[..., object]:
        if name in ("answers", "callbacks", "calls"):
            raise AttributeError(name)
        if name in self.answers:
            return lambda *_, **__: self.answers[name]
        if name in self.callbacks:
            return lambda *_, **__: self.calls.append(name)
        raise AttributeError(name)


def _named(rows: Sequence[Mapping[str, Any]], *keys: str) -> list[str]:
    names: set[str] = set()
    for row in rows:
        for key in keys:
            value = row.get(key, [])
            names.update([value] if isinstance(value, str) else value)
    return sorted(names)


def _conditions(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    return _named(rows, "conditions", "unless")


def _cases() -> list[tuple[str, str, enum.Enum, tuple[bool, ...]]]:
    cases = []
    for name, (states, rows) in TABLES.items():
        conditions = _conditions(rows)
        for trigger in sorted({row["trigger"] for row in rows}):
            for state in states:
                for answers in itertools.product((True, False), repeat=len(conditions)):
                    cases.append((name, trigger, state, answers))
    return cases


@pytest.mark.parametrize(("table", "trigger", "state", "answers"), _cases())
def test_a_table_steps_as_transitions_reads_it(
    table: str, trigger: str, state: enum.Enum, answers: tuple[bool, ...]
) -> None:
    states, rows = TABLES[table]
    told = dict(zip(_conditions(rows), answers, strict=True))
    callbacks = _named(rows, "before", "after")
    theirs = Model(state, told, callbacks)
    Machine(model=theirs, states=states, transitions=list(rows), initial=state,
            auto_transitions=False)  # fmt: skip
    ours = Model(state, told, callbacks)
    try:
        fired = theirs.trigger(trigger)  # type: ignore[attr-defined]
    except MachineError:
        with pytest.raises(ProgrammingError, match=f"{trigger} is not possible"):
            StateTable(states, rows).fire(ours, trigger)
        assert not StateTable(states, rows).may(ours, trigger)
        return
    table_fired = StateTable(states, rows).fire(ours, trigger)
    assert (table_fired, ours.state, ours.calls) == (fired, theirs.state, theirs.calls)


class Light(enum.Enum):
    OFF = "off"
    ON = "on"


SWITCH = [
    {"trigger": "press", "source": Light.OFF, "dest": Light.ON, "conditions": "powered",
     "before": "click", "after": ["glow", "log"]},
    {"trigger": "press", "source": Light.ON, "dest": Light.OFF},
    {"trigger": "look", "source": [Light.OFF, Light.ON], "dest": None, "after": "see"},
]  # fmt: skip


def test_callbacks_get_the_triggers_arguments_and_may_asks_the_conditions() -> None:
    model = Model(Light.OFF, {"powered": False}, ["click", "changed", "glow", "log", "see"])
    table = StateTable(Light, SWITCH, after_change="changed")
    assert not table.may(model, "press")
    assert table.fire(model, "press") is False and model.state is Light.OFF
    model.answers = {"powered": True}
    assert table.may(model, "press")
    assert table.fire(model, "press", 1, at=2.0)
    assert (model.state, model.calls) == (Light.ON, ["click", "changed", "glow", "log"])
    model.calls.clear()
    assert table.fire(model, "look")  # an internal row: no change, no after_change
    assert (model.state, model.calls) == (Light.ON, ["see"])


def test_a_table_that_names_no_method_is_refused() -> None:
    with pytest.raises(ProgrammingError, match="names its model's methods"):
        StateTable(Light, [{"trigger": "press", "source": Light.OFF, "dest": Light.ON,
                            "after": print}])  # fmt: skip
