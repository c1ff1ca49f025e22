"""serialref.timecontrol: the PGN TimeControl syntax, parsed and walked period by period."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import timed_controls

from serialref.errors import ConfigError
from serialref.timecontrol import TimeControl, TimeControlPeriod

# --- parsing ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "periods", "canonical"),
    [
        ("40/7200", (TimeControlPeriod(40, 7200.0),), "40/7200"),
        (
            "40/7200:3600",
            (TimeControlPeriod(40, 7200.0), TimeControlPeriod(None, 3600.0)),
            "40/7200:3600",
        ),
        ("300", (TimeControlPeriod(None, 300.0),), "300"),
        ("300+2", (TimeControlPeriod(None, 300.0, 2.0),), "300+2"),
        ("300+0", (TimeControlPeriod(None, 300.0),), "300"),
        ("*60", (TimeControlPeriod(None, 60.0, sandclock=True),), "*60"),
        (" 0300 ", (TimeControlPeriod(None, 300.0),), "300"),
        (
            "40/5400+30:1800+30",
            (TimeControlPeriod(40, 5400.0, 30.0), TimeControlPeriod(None, 1800.0, 30.0)),
            "40/5400+30:1800+30",
        ),
        (
            "40/7200:20/3600",
            (TimeControlPeriod(40, 7200.0), TimeControlPeriod(20, 3600.0)),
            "40/7200:20/3600",
        ),
        ("10+0.1", (TimeControlPeriod(None, 10.0, 0.1),), "10+0.1"),
        ("10+0.10", (TimeControlPeriod(None, 10.0, 0.1),), "10+0.1"),
        (
            "40/120.5:60+0.25",
            (TimeControlPeriod(40, 120.5), TimeControlPeriod(None, 60.0, 0.25)),
            "40/120.5:60+0.25",
        ),
        ("*0.5", (TimeControlPeriod(None, 0.5, sandclock=True),), "*0.5"),
        ("2.5", (TimeControlPeriod(None, 2.5),), "2.5"),
        ("60.000+0.000001", (TimeControlPeriod(None, 60.0, 0.000001),), "60+0.000001"),
    ],
)
def test_parse_timed(text: str, periods: tuple[TimeControlPeriod, ...], canonical: str) -> None:
    control = TimeControl.parse(text)
    assert control.periods == periods
    assert control.text == text.strip()  # the configured form, as the PGN tag shows it
    assert str(control) == text.strip()
    assert control.canonical == canonical
    assert not control.unknown
    assert not control.untimed
    assert TimeControl.parse(control.canonical) == control
    assert TimeControl.parse(str(control)) == control


def test_controls_are_equal_when_their_periods_are() -> None:
    written = TimeControl.parse("300+0")
    short = TimeControl.parse("300")
    assert written == short
    assert hash(written) == hash(short)
    assert written.text != short.text
    assert {written: "journal"}[short] == "journal"
    assert TimeControl.parse("10+0.1") == TimeControl.parse("10+0.10")
    assert TimeControl.parse("10+0.1") != TimeControl.parse("10+0.2")
    assert TimeControl.parse("?") != TimeControl.parse("-")


@pytest.mark.parametrize(("text", "unknown"), [("?", True), ("-", False)])
def test_parse_untimed(text: str, unknown: bool) -> None:
    control = TimeControl.parse(text)
    assert control.periods == ()
    assert str(control) == text
    assert control.unknown is unknown
    assert control.untimed


@pytest.mark.parametrize(
    ("text", "bad_part", "reason"),
    [
        ("", "", "empty time control"),
        ("300:40/7200", "'300'", "no period may follow it"),
        ("300+2:60", "'300+2'", "no period may follow it"),
        ("*60:300", "'*60'", "must be the only period"),
        ("40/7200:*60", "'*60'", "must be the only period"),
        ("40/0", "'40/0'", "time must be positive"),
        ("0/60", "'0/60'", "moves must be positive"),
        ("0", "'0'", "time must be positive"),
        ("abc", "'abc'", "expected 'moves/seconds'"),
        ("300+", "'300+'", "expected"),
        (".5", "'.5'", "seconds such as 300 or 0.5"),
        ("5.", "'5.'", "expected"),
        ("1e3", "'1e3'", "expected"),
        ("10+0.1.2", "'10+0.1.2'", "expected"),
        ("10+-0.1", "'10+-0.1'", "expected"),
        ("10+0.1234567", "0.1234567", "more than 6 digits after the point"),
        ("0.0", "'0.0'", "time must be positive"),
        ("40/0.000", "'40/0.000'", "time must be positive"),
        ("40.5/60", "'40.5/60'", "expected"),
        ("*0.5+0.1", "'*0.5+0.1'", "no move count or increment"),
        ("40 /7200", "'40 /7200'", "expected"),
        ("\u0663\u0660\u0660", "'\u0663\u0660\u0660'", "expected"),
        ("40/7200::3600", "'40/7200::3600'", "empty period"),
        ("?:300", "'?'", "only descriptor"),
        ("40/7200:-", "'-'", "only descriptor"),
        ("*40/60", "'*40/60'", "no move count or increment"),
        ("*60+1", "'*60+1'", "no move count or increment"),
        ("1" * 20, "1" * 20, "too large"),
        ("99999999", "'99999999'", "999 days"),
    ],
)
def test_parse_rejects_with_reason(text: str, bad_part: str, reason: str) -> None:
    with pytest.raises(ConfigError) as caught:
        TimeControl.parse(text)
    assert caught.value.key == "tc"
    assert bad_part in caught.value.reason
    assert reason in caught.value.reason


def test_direct_construction_checks_text_against_periods() -> None:
    with pytest.raises(ConfigError, match="does not match"):
        TimeControl(
            periods=(TimeControlPeriod(None, 300.0),), text="60", unknown=False, untimed=False
        )
    with pytest.raises(ConfigError, match="does not match"):
        TimeControl(
            periods=(TimeControlPeriod(None, 300.0),), text="5 min", unknown=False, untimed=False
        )
    written = TimeControl(
        periods=(TimeControlPeriod(None, 300.0),), text="300+0", unknown=False, untimed=False
    )
    assert written.text == "300+0"
    with pytest.raises(ConfigError, match="has periods"):
        TimeControl(
            periods=(TimeControlPeriod(None, 300.0),), text="300", unknown=True, untimed=True
        )
    with pytest.raises(ConfigError, match="without periods"):
        TimeControl(periods=(), text="300", unknown=False, untimed=True)


@pytest.mark.parametrize(
    "arguments",
    [
        {"moves": 0, "seconds": 60.0},
        {"moves": True, "seconds": 60.0},
        {"moves": None, "seconds": 0.0},
        {"moves": None, "seconds": math.inf},
        {"moves": None, "seconds": 60.0, "increment": -1.0},
        {"moves": 40, "seconds": 60.0, "sandclock": True},
    ],
)
def test_period_rejects_impossible_values(arguments: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        TimeControlPeriod(**arguments)  # type: ignore[arg-type]


def test_fractional_periods_format_without_losing_precision() -> None:
    period = TimeControlPeriod(None, 0.5, 0.25)
    assert str(period) == "0.5+0.25"
    assert TimeControl((period,), "0.5+0.25", unknown=False, untimed=False).text == "0.5+0.25"




# --- properties ----------------------------------------------------------------------


@given(control=timed_controls)
def test_canonical_text_parses_back_to_the_same_control(control: TimeControl) -> None:
    assert TimeControl.parse(control.text) == control


# A reference parser for the grammar of PROTOCOL.md 5, written the plain way (string
# splitting and exact fractions) so that the regular expression and the range checks
# of the real one are tested against something that shares none of their code.


def reference_number(text: str) -> Fraction | None:
    whole, point, fraction = text.partition(".")
    if not whole.isascii() or not whole.isdigit():
        return None
    if point and (not fraction.isascii() or not fraction.isdigit() or len(fraction) > 6):
        return None
    if len(whole) > 9:
        return None
    return Fraction(text)


def reference_period(text: str) -> tuple[int | None, Fraction, Fraction, bool] | None:
    sandclock = text.startswith("*")
    body = text[1:] if sandclock else text
    moves: int | None = None
    if "/" in body:
        count, body = body.split("/", 1)
        if sandclock or not count.isascii() or not count.isdigit() or len(count) > 9:
            return None
        moves = int(count)
    seconds_text, plus, increment_text = body.partition("+")
    seconds = reference_number(seconds_text)
    increment = reference_number(increment_text) if plus else Fraction(0)
    if seconds is None or increment is None or (sandclock and plus):
        return None
    if moves == 0 or seconds == 0 or max(seconds, increment) > 999 * 24 * 3600:
        return None
    return moves, seconds, increment, sandclock


def reference_parse(text: str) -> list[tuple[int | None, Fraction, Fraction, bool]] | None:
    """The periods of a timed control, or None where the real parser must refuse it."""
    parts = [reference_period(part) for part in text.split(":")]
    if any(part is None for part in parts):
        return None
    periods = [part for part in parts if part is not None]
    if any(period[3] for period in periods) and len(periods) > 1:
        return None
    if any(period[0] is None for period in periods[:-1]):
        return None
    return periods


numbers = st.one_of(
    st.integers(0, 10**10).map(str),
    st.builds(
        lambda whole, fraction: f"{whole}.{fraction}",
        st.integers(0, 10**4),
        st.text("0123456789", min_size=1, max_size=8),
    ),
)
descriptors = st.builds(
    lambda star, moves, seconds, increment: f"{star}{moves}{seconds}{increment}",
    st.sampled_from(["", "", "", "*"]),
    st.one_of(st.just(""), st.integers(0, 200).map(lambda count: f"{count}/")),
    numbers,
    st.one_of(st.just(""), numbers.map(lambda number: f"+{number}")),
)
control_texts = st.lists(descriptors, min_size=1, max_size=4).map(":".join)
noisy_texts = st.one_of(
    control_texts,
    st.text("0123456789./+*:-? e", max_size=16),
)


@given(noisy_texts)
def test_the_parser_agrees_with_the_reference(text: str) -> None:
    written = text.strip(" ")  # surrounding blanks are not part of the control
    expected = None if written in ("?", "-") else reference_parse(written)
    try:
        control = TimeControl.parse(text)
    except ConfigError as exc:
        assert expected is None, (text, exc)
        assert exc.key == "tc"
        return
    if written in ("?", "-"):
        assert control.untimed and not control.periods
        return
    assert expected is not None, text
    assert control.text == written
    assert len(control.periods) == len(expected)
    for period, (moves, seconds, increment, sandclock) in zip(
        control.periods, expected, strict=True
    ):
        assert period.moves == moves
        assert period.seconds == float(seconds)
        assert period.increment == float(increment)
        assert period.sandclock == sandclock
    assert TimeControl.parse(control.canonical) == control


# --- periods ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "moves_made", "period", "to_go"),
    [
        ("40/7200:3600", 0, "40/7200", 40),
        ("40/7200:3600", 39, "40/7200", 1),
        ("40/7200:3600", 40, "3600", None),
        ("40/7200", 40, "40/7200", 40),  # the last move-count period repeats
        ("40/7200", 95, "40/7200", 25),
        ("40/5400+30:20/1800+30:900+30", 59, "20/1800+30", 1),
        ("40/5400+30:20/1800+30:900+30", 60, "900+30", None),
        ("300+2", 17, "300+2", None),
    ],
)
def test_the_period_of_the_next_move_and_the_moves_to_its_bonus(
    text: str, moves_made: int, period: str, to_go: int | None
) -> None:
    control = TimeControl.parse(text)
    assert str(control.period_of(moves_made)) == period
    assert control.moves_to_go(moves_made) == to_go


# --- a control written as a clock reads -----------------------------------------------


@pytest.mark.parametrize(
    ("text", "meant"),
    [
        ("1:00+1", "60+1"),  # cutechess-cli's tc=1:00+1
        ("5:00", "300"),
        ("2:30+2", "150+2"),
        ("40/1:30:00", "40/5400"),
        ("0:30", "30"),
    ],
)
def test_a_clock_reading_is_explained_with_its_likely_meaning(text: str, meant: str) -> None:
    with pytest.raises(ConfigError) as caught:
        TimeControl.parse(text)
    assert str(caught.value) == (
        f"tc: {text!r}: ':' joins periods ('40/7200:3600': 40 moves in 7200 s, then 3600 s "
        f"for the rest) and times are in seconds; did you mean {meant!r}?"
    )
    assert TimeControl.parse(meant).periods  # and the guess is a control


def test_a_clock_reading_of_nothing_explains_without_a_guess() -> None:
    with pytest.raises(ConfigError, match=r"times are in seconds$"):
        TimeControl.parse("0:00")


@pytest.mark.parametrize("text", ["40/120:30", "40/7200:3600"])
def test_periods_that_look_like_a_clock_reading_are_still_periods(text: str) -> None:
    assert len(TimeControl.parse(text).periods) == 2
