"""Every match option, declared once: the table the command line, the file and the docs come from.

A row says what a user can set and how: its TOML key and where it lives in the file,
the command-line flag of each verb that takes it, its kind (the parser and its checks,
:mod:`serialref.appliance.values`), its default, the line ``--help`` shows and the
paragraph ``docs/configuration.md`` shows. From the table come ``run``'s and
``standby``'s arguments (:mod:`serialref.cli.referee`), the keys a file may hold and the
checks ``config check`` runs (:mod:`serialref.appliance.config`), and the reference
tables of the docs (:mod:`serialref.appliance.reference`). Adding an option is adding a
row, and a field to :class:`~serialref.appliance.config.MatchConfig` to hold its value.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Generic, TypeVar

from serialref.appliance.logsetup import LOG_LEVEL_HELP, LOG_LEVELS
from serialref.appliance.values import (
    Kind,
    address,
    adjudication_rule,
    boolean,
    choice,
    choice_of,
    host_name_or_text,
    listen_address,
    number,
    opening_book,
    optional_path,
    optional_text,
    optional_whole_number,
    record_file,
    seconds,
    sprt_test,
    start_position,
    table_paths,
    text,
    time_control,
    variant,
    whole_number,
)
from serialref.referee.adjudicator import parse_draw_rule, parse_resign_rule
from serialref.referee.openings import OpeningOrder
from serialref.referee.settings import OnInfraction
from serialref.wire.link import NEWLINES
from serialref.wire.transport import LineDelay, PortSettings

__all__ = [
    "MATCH_OPTIONS",
    "OVERRIDE_NAMES",
    "PORT_KEYS",
    "RUN",
    "STANDBY",
    "TOP_LEVEL_KEYS",
    "MatchOption",
    "Section",
    "Where",
    "match_option",
]

_T = TypeVar("_T")

RUN = "run"
STANDBY = "standby"

_LINE = PortSettings()
"""The wire profile's line settings (9600 8N1): the defaults of a port's keys."""


class Where(enum.Enum):
    """Where a key lives in the file."""

    TOP = enum.auto()
    """The file's top level: one value for the match."""
    PORT = enum.auto()
    """Each player's table, ``[ports.a]`` and ``[ports.b]``."""
    BOTH = enum.auto()
    """The top level for both ports; a port's own table for that port alone."""


class Section(enum.StrEnum):
    """The headings the docs group the keys under, in their order."""

    MATCH = "The match"
    ADJUDICATION = "Adjudication"
    RECORDS = "Records"
    STAYING_UP = "Staying up"
    AUDIENCE = "The supervisor and the audience"
    LINES = "Both serial lines"
    PORTS = "`[ports.a]` and `[ports.b]`"


@dataclass(frozen=True, slots=True)
class MatchOption(Generic[_T]):
    """One setting of a match: where it is written, how it is read, what it means.

    ``default`` is written as it would be in the file and read like any given value.
    ``flags`` maps each verb that takes the option on its command line to its flag
    (one per port for a ``PORT`` option; a flag without dashes is a positional
    operand); ``help`` is its ``--help`` line, with ``{player}`` for a port's player.
    ``default_text`` says the default in words where the file's value says too little.
    A ``BOTH`` option is described at the top level by ``doc`` and in a port's table by
    ``port_doc``. ``port_setting`` names the field of
    :class:`~serialref.wire.transport.PortSettings` the value goes to; ``excludes``
    names a key that cannot be given together with this one.
    """

    key: str
    kind: Kind[_T]
    default: object
    where: Where
    section: Section
    doc: str
    help: str = ""
    flags: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    default_text: str = ""
    port_doc: str = ""
    port_setting: str = ""
    excludes: str = ""

    @property
    def names(self) -> tuple[str, ...]:
        """The option's names on the command line, as argparse stores them (``name_a``).

        A match-wide option has one, its key, whatever its flag is called; a port's
        option has one per port, or none when only the file can set it.
        """
        if self.where is not Where.PORT:
            return (self.key,)
        flags = next(iter(self.flags.values()), ())
        return tuple(flag.lstrip("-").replace("-", "_").lower() for flag in flags)


def _everywhere(*flags: str) -> Mapping[str, tuple[str, ...]]:
    """The same flag(s) for ``run`` and ``standby``, which play the same match."""
    return MappingProxyType({RUN: flags, STANDBY: flags})


def _top(key: str, kind: Kind[Any], default: object, section: Section, **details: Any
         ) -> MatchOption[Any]:  # fmt: skip
    """A match-wide option; its flag is its key, spelled as a flag, unless ``flags`` says."""
    details.setdefault("flags", _everywhere("--" + key.replace("_", "-")))
    return MatchOption(key, kind, default, Where.TOP, section, **details)


def _port(key: str, kind: Kind[Any], default: object, **details: Any) -> MatchOption[Any]:
    """A player's own option, in ``[ports.a]`` and ``[ports.b]``."""
    return MatchOption(key, kind, default, Where.PORT, Section.PORTS, **details)


MATCH_OPTIONS: tuple[MatchOption[Any], ...] = (
    _top(
        "games", whole_number(minimum=1), 1, Section.MATCH,
        help="games to play",
        doc="Games to play. The player on port A has White in game 1; colours alternate. "
        "With `openings`, each opening is played with both colours.",
    ),
    _top(
        "tc", time_control(), "300+3", Section.MATCH,
        help="PGN TimeControl, e.g. 300+3, 40/7200:3600, 10+0.1, or - for none",
        doc='Time control in PGN `TimeControl` syntax: `"300+3"` (5 minutes + 3 s a move), '
        '`"40/7200:3600"` (40 moves in 2 hours, then 1 hour), `"*60"` (sandclock), `"-"` '
        '(no clock), `"?"` (unknown, untimed). Several periods are joined by `:`. Times may '
        'carry a decimal fraction, as engine testers write them: `"10+0.1"`, '
        '`"40/120.5:60+0.25"`; the PGN tag repeats the value as written.',
    ),
    _top(
        "variant", variant(), "standard", Section.MATCH,
        help="rules to play by: standard, chess960, crazyhouse, 3check, atomic, "
        "kingofthehill, antichess, horde, racingkings, capablanca, seirawan, makruk, "
        "shogi, xiangqi",
        doc="The rules games are played by: `standard` chess, a variant of python-chess "
        "(`chess960`, `crazyhouse`, `3check`, `atomic`, `kingofthehill`, `antichess`, "
        "`horde`, `racingkings`) or of Fairy-Stockfish (`capablanca`, `seirawan`, "
        "`makruk`, `shogi`, `xiangqi`); lichess's, cutechess's and PGN's names are "
        "understood too. The "
        "players learn it from the `Variant` tag of `inform`. With `chess960`, `fen` may "
        "be a start position number (0-959) and `openings` numbers and ranges "
        '(`"0-959"`, `"518,1,2"`), each played with both colours.',
    ),
    _top(
        "fen", start_position(), "", Section.MATCH,
        help="start every game from this position",
        doc="Start every game from this position (checked: it must be a legal position). "
        "Cannot be combined with `openings`.",
        default_text="the standard starting position",
    ),
    _top(
        "openings", opening_book(), "", Section.MATCH,
        help="EPD or PGN file; each opening is played with both colours",
        doc="An EPD or PGN file of openings; each is played with both colours. The file "
        "must exist; every opening in it is checked when the file is read.",
        default_text="none", excludes="fen",
    ),
    _top(
        "openings_order", choice_of(OpeningOrder), "sequential", Section.MATCH,
        help="play the openings in the book's order, or shuffled by --openings-seed",
        doc="The order the openings are played in: the book's (`sequential`), or shuffled "
        "(`random`) with `openings_seed` exactly as fastchess's `-openings order=random` "
        "shuffles a book with `-srand`, so the same book and seed play the same openings "
        "in the same order under both.",
    ),
    _top(
        "openings_start", whole_number(minimum=1), 1, Section.MATCH,
        help="begin with the N-th opening of the book (after shuffling), 1-based",
        doc="Begin with the book's N-th opening, counted from 1 as fastchess's `start=` "
        "counts (after a `random` shuffle); the openings before it come after the book's "
        "last.",
    ),
    _top(
        "openings_plies", optional_whole_number(), "", Section.MATCH,
        help="play only the first N plies of each PGN opening",
        doc="Play only the first N plies (half-moves) of each opening of a PGN book, as "
        "fastchess's `plies=` does; an EPD book's positions have no moves to cut.",
        default_text="all",
    ),
    _top(
        "openings_seed", whole_number(maximum=2**64 - 1), 0, Section.MATCH,
        help="the seed of --openings-order random (fastchess's -srand)",
        doc="The seed of the `random` order, as fastchess's `-srand` (up to 2^63 - 1 in "
        "the file, where TOML integers end; up to 2^64 - 1 on the command line). Without "
        "it the seed is 0: a restarted referee or a standby must find the order its "
        "journal was played in, so it is never drawn at random.",
    ),
    _top("event", text(), "serialref match", Section.MATCH,
         help="PGN Event tag", doc="The PGN `Event` tag."),
    _top(
        "site", host_name_or_text(), "", Section.MATCH,
        help="PGN Site tag", doc="The PGN `Site` tag; empty means this machine's host name.",
        default_text="host name",
    ),
    _top(
        "reset_delay", seconds(), 5.0, Section.MATCH,
        help="seconds between a reset and the game's first inform, spec 8.1.6",
        doc="Pause after `reset` before the game is announced (spec 8.1.6).",
    ),
    _top(
        "conclude_delay", seconds(), 5.0, Section.MATCH,
        help="seconds between a game's conclude and the next reset, spec 8.1.1",
        doc="Pause after a game's `conclude` before the next game (spec 8.1.1).",
    ),
    _top(
        "on_infraction", choice_of(OnInfraction), "forfeit", Section.MATCH,
        help="a rules infraction loses the game (forfeit) or stops the clocks and calls the "
        "supervisor (fault)",
        doc="What a rules infraction (illegal move, wrong position, contradictory opcodes, "
        "...) does: the player loses the game (`forfeit`, Termination `rules infraction`), "
        "or the clocks stop and the referee calls the supervisor (`fault`; PROTOCOL.md "
        "section 4).",
    ),
    _top(
        "sprt", sprt_test(), "", Section.MATCH,
        help="stop the match when this SPRT decides: elo0=0 elo1=5 alpha=0.05 beta=0.05 "
        "[model=cutechess|logistic|normalized]",
        doc="Stop the match as soon as this sequential probability ratio test accepts a "
        "hypothesis, as cutechess-cli's and fastchess's `-sprt` do; the score lines show "
        "its log-likelihood ratio. `model=cutechess` (the default) is cutechess-cli's "
        "test on the games; `logistic` and `normalized` are fastchess's, on the game "
        "pairs. A restarted referee whose journal shows the test decided starts a new "
        "match.",
        default_text="none",
    ),
    _top(
        "rating_interval", whole_number(), 0, Section.MATCH,
        help="print the Elo lines every N games, not only at the end (0: at the end)",
        doc="Print the Elo lines (cutechess-cli's Elo difference, fastchess's nElo and "
        "`Ptnml(0-2)`, the SPRT's) after every N-th game as well as at the end, as "
        "cutechess-cli's `-ratinginterval` does; `0`: at the end only. In an event file, "
        "how often the standings are printed: after every game unless this says otherwise.",
    ),
    _top(
        "draw", adjudication_rule(parse_draw_rule, '`"movenumber=N movecount=N score=CP"`'),
        "", Section.ADJUDICATION,
        help="draw a game both players score within CP centipawns of zero for N moves each, "
        "from full move N on: movenumber=N movecount=N score=CP (cutechess-cli's -draw)",
        doc="Draw a game by adjudication, as cutechess-cli's `-draw` does, once at least "
        "`movenumber` full moves have been played and both players scored their last "
        "`movecount` moves each (`2 * movecount` plies in a row) within `score` centipawns "
        "of zero. A capture or a pawn move starts the count again (and is its first); so "
        "does a reply without a score (`ce`). `movenumber=0` turns the rule off.",
        default_text="none",
    ),
    _top(
        "resign", adjudication_rule(parse_resign_rule,
                                    '`"movecount=N score=CP [twosided=true]"`'),
        "", Section.ADJUDICATION,
        help="a player that scores its last N moves at -CP or below loses: movecount=N "
        "score=CP [twosided=true] (cutechess-cli's -resign)",
        doc="Adjudicate a game lost, as cutechess-cli's `-resign` does, for the player whose "
        "last `movecount` moves it scored (`ce`) at `-score` centipawns or below. With "
        "`twosided=true` the opponent must also have scored its last `movecount` moves at "
        "`score` or above. A reply without a score starts that player's count again. "
        "`movecount=0` turns the rule off.",
        default_text="none",
    ),
    _top(
        "maxmoves", whole_number(), 0, Section.ADJUDICATION,
        help="draw a game by adjudication after N full moves (cutechess-cli's -maxmoves; "
        "0: no limit)",
        doc="Draw a game by adjudication once `N` full moves (`2N` plies, an opening's "
        "included) have been played, as cutechess-cli's `-maxmoves` does; `0`: no limit.",
    ),
    _top(
        "tb", table_paths(), "", Section.ADJUDICATION,
        help="adjudicate positions the Syzygy tables in these directories know "
        "(joined by ':'; cutechess-cli's -tb)",
        doc="Adjudicate a game as soon as the position after a move is in the Syzygy "
        "tables of these directories (joined by `:`), as cutechess-cli's `-tb` does: the "
        "distance-to-zeroing tables (`.rtbz`) are needed beside the WDL ones, and a win "
        "the fifty-move rule would turn into a draw, by the game's own move counter, is "
        "a draw. Standard chess only; positions with castling rights are not probed.",
        default_text="none",
    ),
    _top(
        "tb_pieces", optional_whole_number(minimum=3), "", Section.ADJUDICATION,
        help="probe the tables only with N pieces or fewer on the board (cutechess-cli's "
        "-tbpieces)",
        doc="Probe the tables only for positions of at most this many pieces, kings "
        "included, as cutechess-cli's `-tbpieces` does.",
        default_text="every table there is",
    ),
    _top(
        "pgn", record_file(), "", Section.RECORDS,
        help="append finished games to this PGN file",
        doc="Finished games are appended to this PGN file, one at a time, each flushed to "
        "disk.",
        default_text="none",
    ),
    _top(
        "journal", record_file(), "", Section.RECORDS,
        help="JSON Lines transcript of the match; started again, the referee resumes from it",
        doc="The transcript: every line sent and received and every move, as JSON Lines. A "
        "referee started again with the same journal resumes an unfinished match from it.",
        default_text="none",
    ),
    _top(
        "log_level", choice({level: level for level in LOG_LEVELS}), "info", Section.RECORDS,
        help=LOG_LEVEL_HELP,
        doc="How much the referee logs on stderr (the journal of systemd under the service).",
    ),
    _top(
        "rejoin_window", seconds(), 0.0, Section.STAYING_UP,
        help="seconds a player that left may take to come back before it forfeits",
        doc="How long an absent player may stay away before it forfeits the game (PGN "
        '`Termination "abandoned"`). `0` means no window: a player that signs off in a game '
        "forfeits at once (PROTOCOL.md section 4), while a player whose line is lost (cable "
        "pulled, adapter reset) is waited for with its clock running, so only its flag can "
        "lose it the game; in an untimed game set a window, or the referee waits "
        "indefinitely. Above `0`, a player that signs off or loses its line has this many "
        "seconds to sign on again and be restored; its flag can still fall first.",
    ),
    _top(
        "replicate", address(), "", Section.STAYING_UP,
        help="stream the journal to a hot standby (`serialref standby`) at this HOST:PORT",
        doc="Stream the journal and a heartbeat to a hot standby (`serialref standby`) at "
        'this address; IPv6 addresses in brackets: `"[::1]:7600"`. Needs `journal` and '
        "`replicate_key`. Under systemd this needs "
        "[`systemd/drop-ins/network.conf`](../systemd/drop-ins/network.conf). A standby "
        "reads the same file and ignores this key.",
        default_text="none", flags=MappingProxyType({RUN: ("--replicate",)}),
    ),
    _top(
        "replicate_key", optional_path(), "", Section.STAYING_UP,
        help="the key file shared by the referee and its standby (`serialref keygen FILE`)",
        doc="The key file shared by the referee and its hot standby (`serialref keygen "
        "FILE`: 32 random bytes, mode 0600). Replication needs it: without it `replicate` "
        "refuses to start, and so does a key file others can read. Under systemd the key "
        "comes as a credential instead "
        "([`systemd/drop-ins/replicate.conf`](../systemd/drop-ins/replicate.conf)); see "
        "[standby.md](standby.md).",
        default_text="none",
        flags=MappingProxyType({RUN: ("--replicate-key",), STANDBY: ("--key",)}),
    ),
    _top(
        "control_socket", optional_path(), "", Section.AUDIENCE,
        help="Unix socket for `serialref ctl` and `serialref watch` (mode 0660)",
        doc="The supervisor's control socket (mode 0660), for `serialref ctl` and "
        "`serialref watch`: status, pause, resume, adjudicate, restore, restart-game, abort, "
        "add-time; every command is journaled with the user who gave it. Empty: "
        "`$RUNTIME_DIRECTORY/control.sock` when systemd gives the service a runtime "
        "directory, else no socket. See [supervisor.md](supervisor.md).",
        default_text="$RUNTIME_DIRECTORY/control.sock under systemd, else none",
    ),
    _top(
        "control_group", optional_text(metavar="GROUP"), "", Section.AUDIENCE,
        help="group given the control socket: its members may steer the match",
        doc="The group the control socket is given; its members (and the referee's own "
        "user) may send commands. Empty: the referee's own group.",
        default_text="the referee's group",
    ),
    _top(
        "style12", listen_address(), "", Section.AUDIENCE,
        help="serve a FICS Style 12 feed of the games to TCP clients at HOST:PORT "
        "(a PORT alone: 127.0.0.1, e.g. 5000)",
        doc="Serve the games as FICS/ICC Style 12 lines (`<12> ...`) to any TCP client at "
        "this address: the position at once, then a line per move, framed as FICS frames "
        "them, so `xboard -ics -icshost HOST -icsport PORT` follows the games. A bare port "
        "listens on 127.0.0.1 only (`5000`). Read-only; a client that does not read is dropped.",
        default_text="none",
    ),
    _top(
        "web", listen_address(), "", Section.AUDIENCE,
        help="serve a live web board at HOST:PORT (a PORT alone: 127.0.0.1, e.g. 8080)",
        doc="Serve a live web page of the game (every variant's own board with its pieces in "
        "hand, clocks, moves, the players' scores and lines, the result) at this address, drawn "
        "into the page and pushed to the browser as it happens (Server-Sent Events). A bare "
        "port listens on 127.0.0.1 only (`8080`). Read-only.",
        default_text="none",
    ),
    _port(
        "path", optional_text(), "",
        help="{player}'s port: a device path or pyserial URL",
        doc="Device path (`/dev/serialref/a`, `/dev/ttyUSB0`, `/dev/serial0`) or pyserial "
        "URL (`rfc2217://host:2217`, `socket://host:4000`). The service needs both in the "
        "file; `config check` says when the command line would still have to give one. The "
        "command line's ports win.",
        default_text="none", flags=_everywhere("PORT_A", "PORT_B"),
    ),
    _port(
        "name", optional_text(metavar="NAME"), "",
        help="{player}'s name",
        doc="The player's name for the PGN, as written (UTF-8, any alphabet; the players are "
        "told its ASCII form, `Muller` for `Müller`). Empty: the name the program sends at "
        'sign-on, else "Player A"/"Player B".',
        default_text="the name it signs on with", flags=_everywhere("--name-a", "--name-b"),
    ),
    MatchOption(
        "baud", whole_number(describe="integer > 0"), _LINE.baudrate, Where.BOTH, Section.LINES,
        help="line rate of both ports, in bits per second",
        doc="Line rate of both ports, unless a `[ports.x]` table sets its own.",
        port_doc="This port's line rate.",
        flags=_everywhere("--baud"), port_setting="baudrate",
    ),
    MatchOption(
        "newline", choice(NEWLINES), "crlf", Where.BOTH, Section.LINES,
        help="line end sent to both players",
        doc="Line end the referee writes. It reads either.",
        port_doc="This port's line end.",
        flags=_everywhere("--newline"),
    ),
    _port("bytesize", whole_number(describe="5 to 8"), _LINE.bytesize,
          doc="Data bits.", port_setting="bytesize"),
    _port("parity", text(describe='`"N"`, `"E"`, `"O"`, `"M"`, `"S"`'), _LINE.parity,
          doc="None, even, odd, mark, space.", port_setting="parity"),
    _port("stopbits", number(describe="`1`, `1.5`, `2`"), _LINE.stopbits,
          doc="Stop bits.", port_setting="stopbits"),
    _port("rtscts", boolean(), _LINE.rtscts,
          doc="Hardware flow control; needs RTS and CTS wired across the cable.",
          port_setting="rtscts"),
    _port("xonxoff", boolean(), _LINE.xonxoff,
          doc="Software flow control (XON/XOFF).", port_setting="xonxoff"),
    _port(
        "line_delay", choice_of(LineDelay), _LINE.line_delay,
        doc="Whether a reply's own transmission time at this baud rate is taken off the "
        "player's clock. `auto`: on real serial lines, not on pseudo-terminals or network "
        "URLs.",
        port_setting="line_delay",
    ),
    _port(
        "write_timeout", number(describe="seconds > 0"), _LINE.write_timeout,
        doc="How long one write may wait (on flow control, a full buffer) before the line "
        "counts as lost.",
        port_setting="write_timeout",
    ),
)

TOP_LEVEL_KEYS = (
    *(option.key for option in MATCH_OPTIONS if option.where is not Where.PORT),
    "ports",
)
"""The keys a file may hold at its top level (``ports`` holds the players' tables)."""

PORT_KEYS = tuple(option.key for option in MATCH_OPTIONS if option.where is not Where.TOP)
"""The keys a ``[ports.a]`` or ``[ports.b]`` table may hold."""

OVERRIDE_NAMES = frozenset(name for option in MATCH_OPTIONS for name in option.names)
"""The command-line names ``load_config`` takes as overrides (argparse's, ``-`` as ``_``)."""

_BY_KEY = MappingProxyType({option.key: option for option in MATCH_OPTIONS})


def match_option(key: str) -> MatchOption[Any]:
    """The row of ``key``."""
    return _BY_KEY[key]
