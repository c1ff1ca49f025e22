"""A ``transitions`` table run row by row on its model, without ``Machine`` on every trigger.

``transitions`` reads and checks the table once: states an :class:`~enum.Enum` (with their
``on_enter``, ``on_exit`` and ``ignore_invalid_triggers``), rows as dicts whose callbacks
are named as strings. :class:`StateTable` keeps what it read, and :meth:`StateTable.fire`
runs a trigger as ``Machine`` does: the first of the trigger's rows for the model's state
whose ``conditions`` all hold runs its ``before`` callbacks, then, if it has a destination,
the state's ``on_exit``, the new state and its ``on_enter``, then its ``after`` callbacks,
each given the trigger's arguments. A state that ignores invalid triggers ignores a
trigger it has no row for; any other state without a row for it is a bug of the table.

``Machine`` spends some sixty Python calls on a trigger (its event data, a lookup of each
callback by name, eight calls to its logger). Where triggers fire on every move, as the
player's session's do, that came to a fifth of all the session's work on a move; run
here, a row costs its own callbacks and a dictionary lookup. The referee's seats
(:mod:`serialref.referee.session`) look their rows up for the same reason.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Generic, NamedTuple, TypeVar, cast

from transitions import Machine

from serialref.errors import ProgrammingError

__all__ = ["StateTable"]

StateT = TypeVar("StateT", bound=enum.Enum)


class _Row(NamedTuple, Generic[StateT]):
    """One row as ``transitions`` read it: its callbacks by name, its destination if any."""

    conditions: tuple[str, ...]
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
        states: Sequence[dict[str, Any]],
        transitions: Sequence[dict[str, Any]],
    ) -> None:
        """Read ``states`` (each with a ``name`` of ``kind``) and ``transitions``, as
        ``Machine(states=..., transitions=..., auto_transitions=False)`` reads them."""
        machine = Machine(
            model=None,
            states=list(states),
            transitions=list(transitions),
            initial=next(iter(kind)),
            auto_transitions=False,
        )
        self._rows: dict[tuple[str, StateT], tuple[_Row[StateT], ...]] = {}
        for trigger, event in machine.events.items():
            for state in kind:
                if machine.get_state(state).ignore_invalid_triggers:
                    self._rows[trigger, state] = ()
            for source, rows in event.transitions.items():
                self._rows[trigger, kind[source]] = tuple(
                    _Row(
                        conditions=_names(condition.func for condition in row.conditions),
                        before=_names(row.before),
                        dest=None if row.dest is None else kind[row.dest],
                        after=_names(row.after),
                    )
                    for row in rows
                )
        self._entered = {
            state: _Entered(
                _names(machine.get_state(state).on_enter), _names(machine.get_state(state).on_exit)
            )
            for state in kind
        }

    def fire(self, model: Any, trigger: str, *args: Any) -> None:
        """Run ``trigger`` on ``model`` (its ``state`` attribute, its callbacks by name)."""
        try:
            rows = self._rows[trigger, model.state]
        except KeyError:
            raise ProgrammingError(f"{trigger} has no row when {model.state.value}") from None
        for row in rows:
            for name in row.conditions:
                if not getattr(model, name)(*args):
                    break
            else:  # every condition holds: this row runs, and no other
                for name in row.before:
                    getattr(model, name)(*args)
                if row.dest is not None:
                    for name in self._entered[model.state].on_exit:
                        getattr(model, name)(*args)
                    model.state = row.dest
                    for name in self._entered[row.dest].on_enter:
                        getattr(model, name)(*args)
                for name in row.after:
                    getattr(model, name)(*args)
                return


def _names(callbacks: Iterable[str | Callable[..., Any]]) -> tuple[str, ...]:
    """The callbacks of a row or a state, each named as the table names them."""
    names = tuple(callbacks)
    if not all(isinstance(name, str) for name in names):
        raise ProgrammingError(f"a table names its callbacks, not {names!r}")
    return cast(tuple[str, ...], names)
