"""A state machine's table, read and checked by ``transitions``, stepped by lookup.

The referee's machines (a port's seat, a game, the match) are declared as
``transitions`` tables: one row per rule, each numbered after the section of the EPD
specification or of PROTOCOL.md it carries out, its callbacks named beside it. A
:class:`StateTable` has ``transitions`` read the table and check it (every state and
trigger named, conditions and callbacks in their places), keeps what it read (for each
trigger and state, the rows that may fire, their conditions and callbacks, where the
row leads) and steps a model through it with plain calls, in the order ``transitions``
would: the first row whose conditions hold, its ``before`` callbacks, the new state,
its ``after`` callbacks. A row without ``dest`` is internal: the model stays where it is.

Firing a trigger through a ``transitions.Machine`` builds an event and resolves every
callback by name each time: about 10 µs, where a ply fires four triggers (the reply's
and the respond's in the game, two in the seats), most of a ply's referee logic
otherwise. A trigger the model's state has no row for is a referee bug:
:class:`~serialref.errors.ProgrammingError`.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Generic, Protocol, TypeVar

from transitions import Machine

from serialref.errors import ProgrammingError

__all__ = ["StateTable", "Stateful"]

StateT = TypeVar("StateT", bound=enum.Enum)


class Stateful(Protocol[StateT]):
    """A model a :class:`StateTable` steps: its state, and the callbacks its rows name."""

    state: StateT


@dataclass(frozen=True, slots=True)
class _Row(Generic[StateT]):
    """One row as ``transitions`` read it: when it may fire, what it calls, where it leads."""

    conditions: tuple[tuple[str, bool], ...]  # (the model's method, the answer it needs)
    before: tuple[str, ...]
    dest: StateT | None
    after: tuple[str, ...]


class StateTable(Generic[StateT]):
    """The rows of one machine's table, by trigger and state; ``after_change`` names a model
    method called after every change of state (a log line, say)."""

    def __init__(
        self,
        states: type[StateT],
        rows: Sequence[Mapping[str, Any]],
        *,
        after_change: str | None = None,
    ) -> None:
        machine = Machine(
            model=None,
            states=states,
            transitions=[dict(row) for row in rows],
            initial=next(iter(states)),
            auto_transitions=False,
        )
        self._after_change = after_change
        self._triggers = tuple(machine.events)
        self._rows: dict[tuple[str, StateT], tuple[_Row[StateT], ...]] = {}
        for trigger, event in machine.events.items():
            for source, transitions in event.transitions.items():
                self._rows[trigger, states[source]] = tuple(
                    _Row(
                        conditions=tuple(
                            (_name(condition.func), condition.target)
                            for condition in transition.conditions
                        ),
                        before=tuple(_name(callback) for callback in transition.before),
                        dest=None if transition.dest is None else states[transition.dest],
                        after=tuple(_name(callback) for callback in transition.after),
                    )
                    for transition in _without_prepare(transitions)
                )

    def bind(self, model: Stateful[StateT]) -> None:
        """Give ``model`` a method per trigger and a ``may_<trigger>``, as ``transitions``
        does: ``model.end(...)`` is ``fire(model, "end", ...)``."""
        for trigger in self._triggers:
            setattr(model, trigger, partial(self.fire, model, trigger))
            setattr(model, f"may_{trigger}", partial(self.may, model, trigger))

    def fire(self, model: Stateful[StateT], trigger: str, *args: Any, **kwargs: Any) -> bool:
        """Step ``model`` by the first row of ``trigger`` whose conditions hold; False when
        none does (the model stays as it was)."""
        rows = self._rows.get((trigger, model.state))
        if rows is None:
            raise ProgrammingError(
                f"{type(model).__name__}: {trigger} is not possible when {model.state.value}"
            )
        for row in rows:
            if row.conditions and not _holds(row, model, args, kwargs):
                continue
            for name in row.before:
                getattr(model, name)(*args, **kwargs)
            if row.dest is not None:
                model.state = row.dest
                if self._after_change is not None:
                    getattr(model, self._after_change)()
            for name in row.after:
                getattr(model, name)(*args, **kwargs)
            return True
        return False

    def may(self, model: Stateful[StateT], trigger: str, *args: Any, **kwargs: Any) -> bool:
        """Whether ``trigger`` would fire now (``transitions``' ``may_<trigger>``)."""
        rows = self._rows.get((trigger, model.state), ())
        return any(_holds(row, model, args, kwargs) for row in rows)


def _holds(row: _Row[Any], model: object, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    for name, target in row.conditions:
        if bool(getattr(model, name)(*args, **kwargs)) is not target:
            return False
    return True


def _name(callback: object) -> str:
    """A callback named in the table: the model's method, looked up when the row fires."""
    if not isinstance(callback, str):
        raise ProgrammingError(f"a state table names its model's methods, not {callback!r}")
    return callback


def _without_prepare(transitions: Sequence[Any]) -> Sequence[Any]:
    for transition in transitions:
        if transition.prepare:
            raise ProgrammingError("a state table's rows have no prepare callbacks")
    return transitions
