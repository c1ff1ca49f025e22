"""StateTable runs a transitions table as transitions' Machine does, row by row: a lamp's
table with every feature, then every table of the product, trigger by trigger, in every
state, for every answer its conditions can give."""

from __future__ import annotations

import enum
import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest
from transitions import Machine, MachineError

from serialref.client import session as player_session
from serialref.errors import ProgrammingError
from serialref.referee import match, session
from serialref.referee.game import machine as game
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
    {"trigger": "flip", "source": Light.OFF, "dest": None, "unless": "_powered",
     "after": "_dark"},
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
        self.calls: list[tuple[str, tuple[object, ...], dict[str, object]]] = []

    def _note(self, name: str, args: tuple[object, ...], kwargs: dict[str, object]) -> None:
        self.calls.append((name, args, kwargs))

    def _powered(self, *args: object, **kwargs: object) -> bool:
        self._note("powered", args, kwargs)
        return self.powered

    def __getattr__(self, name: str) -> Any:
        if not name.startswith("_") or name.startswith("__"):
            raise AttributeError(name)
        return lambda *args, **kwargs: self._note(name, args, kwargs)


SCRIPT: list[tuple[str, tuple[object, ...], dict[str, object]]] = [
    ("flip", (1,), {}), ("flip", (2,), {"at": 3.0}), ("blink", (), {}), ("look", ("x",), {}),
    ("flip", (), {}), ("smash", (), {}), ("flip", (), {}), ("look", (), {}),
]  # fmt: skip


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
    table = StateTable(Light, TRANSITIONS, states=STATES)
    for trigger, args, kwargs in SCRIPT:
        may = table.may(by_table, trigger, *args, **kwargs)
        assert may is by_machine.may_trigger(trigger, *args, **kwargs)
        by_table.calls.clear()
        by_machine.calls.clear()
        fired = by_machine.trigger(trigger, *args, **kwargs)
        assert table.fire(by_table, trigger, *args, **kwargs) is fired
        assert (by_table.state, by_table.calls) == (by_machine.state, by_machine.calls)
    assert by_table.state is Light.BROKEN


def test_a_trigger_without_a_row_is_a_bug_unless_the_state_ignores_it() -> None:
    table = StateTable(Light, [*TRANSITIONS, {"trigger": "fix", "source": Light.BROKEN,
                                              "dest": Light.OFF}], states=STATES)  # fmt: skip
    lamp = Lamp(powered=True)
    with pytest.raises(ProgrammingError, match="Lamp: fix has no row when off"):
        table.fire(lamp, "fix")
    with pytest.raises(ProgrammingError, match="nothing has no row when off"):
        table.fire(lamp, "nothing")
    table.fire(lamp, "smash")
    assert table.fire(lamp, "flip") is False
    assert lamp.state is Light.BROKEN
    table.fire(lamp, "fix")
    assert lamp.state is Light.OFF


def test_a_bound_model_has_its_triggers_and_may_triggers() -> None:
    lamp = Lamp(powered=False)
    StateTable(Light, TRANSITIONS, states=STATES).bind(lamp)
    assert lamp.may_flip() and lamp.may_smash()
    table = StateTable(Light, TRANSITIONS, states=STATES)
    assert table.handles(lamp, "flip") and not table.handles(lamp, "fix")
    lamp.powered = True
    assert lamp.flip(at=1.0) is True and lamp.state is Light.ON


def test_a_table_that_names_no_method_is_refused() -> None:
    with pytest.raises(ProgrammingError, match="names its model's methods"):
        StateTable(Light, [{"trigger": "smash", "source": Light.OFF, "dest": Light.BROKEN,
                            "after": print}])  # fmt: skip
    with pytest.raises(ProgrammingError, match="no prepare callbacks"):
        StateTable(Light, [{"trigger": "smash", "source": Light.OFF, "dest": Light.BROKEN,
                            "prepare": "_ready"}])  # fmt: skip


Table = tuple[type[enum.Enum], Sequence[Mapping[str, Any]], Sequence[Mapping[str, Any]]]

TABLES: dict[str, Table] = {
    "seat": (session.SessionState, session.TRANSITIONS, ()),
    "game": (game.GameState, game.TRANSITIONS, ()),
    "match": (match.MatchState, match.TRANSITIONS, ()),
    "player": (player_session.PlayerState, player_session.TRANSITIONS, player_session.STATES),
}


class Model:
    """Answers each condition as told and notes each callback it is called by."""

    def __init__(
        self, state: enum.Enum, answers: Mapping[str, bool], callbacks: Sequence[str]
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


@pytest.mark.parametrize("name", sorted(TABLES))
def test_every_table_steps_as_transitions_reads_it(name: str) -> None:
    kind, rows, states = TABLES[name]
    declared = {state["name"]: dict(state) for state in states}
    machine = Machine(model=None, states=[declared.get(state, {"name": state}) for state in kind],
                      transitions=[dict(row) for row in rows], initial=next(iter(kind)),
                      auto_transitions=False)  # fmt: skip
    table = StateTable(kind, rows, states=states)
    callbacks = [*_named(rows, "before", "after"), *_named(states, "on_enter", "on_exit")]
    cases = 0
    for trigger in sorted({row["trigger"] for row in rows}):
        conditions = _named([row for row in rows if row["trigger"] == trigger],
                            "conditions", "unless")  # fmt: skip
        for state in kind:
            for answers in itertools.product((True, False), repeat=len(conditions)):
                told = dict(zip(conditions, answers, strict=True))
                theirs, ours = Model(state, told, callbacks), Model(state, told, callbacks)
                machine.add_model(theirs, initial=state)
                try:
                    fired = theirs.trigger(trigger, "x", at=1.0)  # type: ignore[attr-defined]
                except MachineError:
                    with pytest.raises(ProgrammingError, match=f"{trigger} has no row"):
                        table.fire(ours, trigger, "x", at=1.0)
                    assert not table.may(ours, trigger, "x", at=1.0)
                    continue
                finally:
                    machine.remove_model(theirs)
                assert table.may(ours, trigger, "x", at=1.0) is fired
                assert table.fire(ours, trigger, "x", at=1.0) is fired
                assert (ours.state, ours.calls) == (theirs.state, theirs.calls), (trigger, state)
                cases += 1
    assert cases >= len(rows)
