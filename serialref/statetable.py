"""A ``transitions`` table run row by row on its model, without ``Machine`` on every trigger.

The player's session (:mod:`serialref.client.session`) and the referee's machines (a
port's seat, a game, the match) are declared as ``transitions`` tables: states an
:class:`~enum.Enum` (some with their ``on_enter``, ``on_exit`` and
``ignore_invalid_triggers``), one row per rule as a dict, numbered after the section of
the EPD specification or of PROTOCOL.md it carries out, its callbacks and conditions
(``conditions``, ``unless``) named as the model's methods. ``transitions`` reads and
checks the table once; :class:`StateTable` keeps what it read, for each trigger and
state the rows that may fire, and :meth:`StateTable.fire` runs a trigger as ``Machine``
does: the first of the trigger's rows for the model's state whose conditions all hold
runs its ``before`` callbacks, then, if it has a destination, the state's ``on_exit``,
the new state and its ``on_enter``, then its ``after`` callbacks, each given the
trigger's arguments. A row without a destination is internal: the model stays where it
is. A state that ignores invalid triggers ignores a trigger it has no row for; any
other state without a row for it is a bug of the table (:class:`ProgrammingError`).

``Machine`` spends some sixty Python calls on a trigger (its event data, a lookup of each
callback by name, eight calls to its logger): about 10 µs. Where triggers fire on every
move (the player's session's, the referee's seats' and game's: several a ply), that came
to a fifth of the work of a move; run here, a row costs its own callbacks and a
dictionary lookup.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from typing import Any, Generic, NamedTuple, TypeVar, cast

from transitions import Machine

from serialref.errors import ProgrammingError

__all__ = ["StateTable"]

StateT = TypeVar("StateT", bound=enum.Enum)


class _Row(NamedTuple, Generic[StateT]):
    """One row as ``transitions`` read it: its callbacks by name, its destination if any."""

    conditions: tuple[tuple[str, bool], ...]  # (the model's method, the answer it needs)
    before: tuple[str, ...]
    dest: StateT | None
    after: tuple[str, ...]


class _Entered(NamedTuple):
    """What a state runs on entering and on leaving it, by name."""

    on_enter: tuple[str, ...]
    on_exit: tuple[str, ...]


class StateTable(Generic[StateT]):
    """The rows of one table for each (trigger, state), and each state's callbacks."""

    def __init__(
        self,
        kind: type[StateT],
        transitions: Sequence[Mapping[str, Any]],
        *,
        states: Sequence[Mapping[str, Any]] = (),
    ) -> None:
        """Read the ``transitions`` between the states of ``kind`` as
        ``Machine(states=..., transitions=..., auto_transitions=False)`` reads them;
        ``states`` gives the callbacks and flags of those that have any, each under its
        ``name``."""
        declared = {state["name"]: dict(state) for state in states}
        machine = Machine(
            model=None,
            states=[declared.get(state, {"name": state}) for state in kind],
            transitions=[dict(row) for row in transitions],
            initial=next(iter(kind)),
            auto_transitions=False,
        )
        self._triggers = tuple(machine.events)
        # Keyed by the state's name: an Enum member hashes in Python, its name in C.
        self._rows: dict[tuple[str, str], tuple[_Row[StateT], ...]] = {}
        for trigger, event in machine.events.items():
            for state in kind:
                if machine.get_state(state).ignore_invalid_triggers:
                    self._rows[trigger, state.name] = ()
            for source, rows in event.transitions.items():
                self._rows[trigger, source] = tuple(
                    _Row(
                        conditions=tuple(
                            (_names([condition.func])[0], condition.target)
                            for condition in row.conditions
                        ),
                        before=_names(row.before),
                        dest=None if row.dest is None else kind[row.dest],
                        after=_names(row.after),
                    )
                    for row in _without_prepare(rows)
                )
        self._entered = {
            state.name: _Entered(
                _names(machine.get_state(state).on_enter), _names(machine.get_state(state).on_exit)
            )
            for state in kind
        }

    def bind(self, model: Any) -> None:
        """Give ``model`` a method per trigger and a ``may_<trigger>``, as ``transitions``
        does: ``model.end(...)`` is ``fire(model, "end", ...)``."""
        for trigger in self._triggers:
            setattr(model, trigger, partial(self.fire, model, trigger))
            setattr(model, f"may_{trigger}", partial(self.may, model, trigger))

    def fire(self, model: Any, trigger: str, *args: Any, **kwargs: Any) -> bool:
        """Run ``trigger`` on ``model`` (its ``state`` attribute, its callbacks by name);
        False when no row's conditions hold, or its state ignores the trigger."""
        try:
            rows = self._rows[trigger, model.state._name_]
        except KeyError:
            raise ProgrammingError(
                f"{type(model).__name__}: {trigger} has no row when {model.state.value}"
            ) from None
        for row in rows:
            for name, target in row.conditions:
                if bool(getattr(model, name)(*args, **kwargs)) is not target:
                    break
            else:  # every condition holds: this row runs, and no other
                break
        else:
            return False
        for name in row.before:
            getattr(model, name)(*args, **kwargs)
        if row.dest is not None:
            for name in self._entered[model.state._name_].on_exit:
                getattr(model, name)(*args, **kwargs)
            model.state = row.dest
            for name in self._entered[row.dest._name_].on_enter:
                getattr(model, name)(*args, **kwargs)
        for name in row.after:
            getattr(model, name)(*args, **kwargs)
        return True

    def handles(self, model: Any, trigger: str) -> bool:
        """Whether ``model``'s state has a row for ``trigger``, whatever its conditions."""
        return (trigger, model.state._name_) in self._rows

    def may(self, model: Any, trigger: str, *args: Any, **kwargs: Any) -> bool:
        """Whether ``trigger`` would run a row now (``transitions``' ``may_<trigger>``)."""
        for row in self._rows.get((trigger, model.state._name_), ()):
            for name, target in row.conditions:
                if bool(getattr(model, name)(*args, **kwargs)) is not target:
                    break
            else:
                return True
        return False


def _names(callbacks: Iterable[str | Callable[..., Any]]) -> tuple[str, ...]:
    """The callbacks of a row or a state, each named as the table names them: the model's
    methods, looked up when they run."""
    names = tuple(callbacks)
    if not all(isinstance(name, str) for name in names):
        raise ProgrammingError(f"a table names its model's methods, not {names!r}")
    return cast(tuple[str, ...], names)


def _without_prepare(rows: Sequence[Any]) -> Sequence[Any]:
    for row in rows:
        if row.prepare:
            raise ProgrammingError("a state table's rows have no prepare callbacks")
    return rows
