"""serialref.happenings, what happened in a match: one registry of its events, and every one
plain data that JSON can carry."""

from __future__ import annotations

import dataclasses
import json
import math
import types
import typing
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from serialref import happenings
from serialref.happenings import EVENT_TYPES, MatchEvent

JSON_SCALARS = (str, int, float, bool, type(None))

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


def union_members() -> set[type]:
    return set(typing.get_args(MatchEvent))


def test_event_types_is_exactly_the_match_event_union() -> None:
    assert set(EVENT_TYPES.values()) == union_members()
    assert len(EVENT_TYPES) == len(union_members())
    assert all(name == cls.__name__ for name, cls in EVENT_TYPES.items())


def test_every_event_dataclass_in_the_module_is_registered() -> None:
    # A new event added to the module but not to EVENT_TYPES could be published and
    # never read back from a journal.
    declared = {
        value for value in vars(happenings).values()
        if isinstance(value, type) and dataclasses.is_dataclass(value)
        and value.__module__ == happenings.__name__
    }  # fmt: skip
    assert declared == set(EVENT_TYPES.values())


@pytest.mark.parametrize("kind", sorted(EVENT_TYPES.values(), key=lambda kind: kind.__name__))
def test_every_event_is_frozen_and_slotted(kind: type) -> None:
    params = kind.__dataclass_params__  # type: ignore[attr-defined]
    assert params.frozen
    assert "__slots__" in vars(kind)


def _is_json_hint(hint: Any, *, inside_container: bool = False) -> bool:
    """Whether every value of this type hint is a JSON value (``object`` only inside one)."""
    if hint in JSON_SCALARS:
        return True
    if hint is object:
        return inside_container
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return all(_is_json_hint(arg, inside_container=inside_container) for arg in args)
    if origin in (tuple, list):
        return all(_is_json_hint(arg, inside_container=True) for arg in args if arg is not ...)
    if origin is dict:
        return args[0] is str and _is_json_hint(args[1], inside_container=True)
    return False


@pytest.mark.parametrize("kind", sorted(EVENT_TYPES.values(), key=lambda kind: kind.__name__))
def test_every_field_holds_json_data(kind: type) -> None:
    hints = typing.get_type_hints(kind)
    assert hints, kind
    not_json = {name: hint for name, hint in hints.items() if not _is_json_hint(hint)}
    assert not_json == {}


def _strategy(hint: Any) -> st.SearchStrategy[Any]:
    """Values of a field's type hint, as JSON can carry them (``inf`` included, no NaN)."""
    if hint is object:
        return json_values
    if hint in JSON_SCALARS:
        if hint is float:
            return st.floats(allow_nan=False)
        return st.from_type(hint)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return st.one_of(*(_strategy(arg) for arg in args))
    if origin is tuple:
        if len(args) == 2 and args[1] is ...:
            return st.lists(_strategy(args[0]), max_size=4).map(tuple)
        return st.tuples(*(_strategy(arg) for arg in args))
    if origin is dict:
        return st.dictionaries(st.text(), _strategy(args[1]), max_size=4)
    raise AssertionError(f"no strategy for {hint!r}")


def _event(kind: type) -> st.SearchStrategy[Any]:
    hints = typing.get_type_hints(kind)
    fields = {field.name: _strategy(hints[field.name]) for field in dataclasses.fields(kind)}
    return st.fixed_dictionaries(fields).map(lambda values: kind(**values))


every_event = st.sampled_from(sorted(EVENT_TYPES.values(), key=lambda kind: kind.__name__)).flatmap(
    _event
)


def _rebuilt(kind: type, data: dict[str, Any]) -> Any:
    """The event back from JSON: the fields a dataclass declares as tuples were lists."""
    hints = typing.get_type_hints(kind)
    return kind(**{
        name: tuple(value) if typing.get_origin(hints[name]) is tuple else value
        for name, value in data.items()
    })  # fmt: skip


@given(every_event)
def test_every_event_survives_json_through_asdict(event: MatchEvent) -> None:
    text = json.dumps(dataclasses.asdict(event))
    assert _rebuilt(type(event), json.loads(text)) == event


def test_an_untimed_clock_is_carried_as_infinity() -> None:
    move = happenings.MovePlayed(
        game=1, ply=1, san="e4", uci="e2e4", elapsed=1.5, remaining=(math.inf, math.inf),
        consumed=(1.5, 0.0), moves_made=(1, 0), fen="8/8/8/8/8/8/8/8 b - - 0 1",
    )  # fmt: skip
    text = json.dumps(dataclasses.asdict(move))
    assert '"remaining": [Infinity, Infinity]' in text
    assert _rebuilt(happenings.MovePlayed, json.loads(text)) == move


def test_defaults_are_not_shared_between_events() -> None:
    first = happenings.MatchStarted(games=1, time_control="-", ports=("a", "b"))
    second = happenings.MatchStarted(games=1, time_control="-", ports=("a", "b"))
    assert first.settings is not second.settings
    assert first.identity is not second.identity
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.games = 2  # type: ignore[misc]
