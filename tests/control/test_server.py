"""The control socket: its messages, its server (uid, refusals, stale sockets) and `ctl`."""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from doubles import Harness

from serialref import cli
from serialref.cli.ctl import status_lines
from serialref.control.client import send_request
from serialref.control.protocol import (
    Reply,
    Request,
    decode_reply,
    decode_request,
    encode_request,
)
from serialref.control.server import MAX_CLIENTS, ControlServer
from serialref.errors import CommandError, ControlError
from serialref.happenings import SupervisorCommand
from serialref.referee.match import MatchReferee


@pytest.mark.parametrize(
    ("line", "error"),
    [
        (b"pause", "not a JSON request line"),
        (b"[1, 2]", "a request is a JSON object"),
        (b'{"command": "pause", "args": "now"}', "args .a list of texts."),
        (b'{"command": 3}', "needs a command"),
        (b"\xff", "not a JSON request line"),
        (b'{"command": "pause", "board": 0}', "board is a board number"),
        (b'{"command": "pause", "board": "3"}', "board is a board number"),
        (b'{"command": "pause", "board": true}', "board is a board number"),
    ],
)
def test_a_bad_request_is_named(line: bytes, error: str) -> None:
    with pytest.raises(CommandError, match=error):
        decode_request(line)


def test_a_board_survives_the_round_trip() -> None:
    request = Request("adjudicate", ("1-0", "arbiter"), 7)
    assert decode_request(encode_request(request)) == request
    assert b"board" not in encode_request(Request("status"))


def test_a_bad_answer_is_a_control_error() -> None:
    with pytest.raises(ControlError, match="no ok field"):
        decode_reply(b'{"status": {}}')
    assert decode_reply(b'{"ok": false, "error": "no"}') == Reply(False, error="no")


@pytest.fixture
def harness() -> Harness:
    harness = Harness()
    harness.start_game()
    harness.move("a", "e4")
    return harness


@pytest.fixture
def server(tmp_path: Path, harness: Harness) -> Iterator[ControlServer]:
    control = ControlServer(tmp_path / "control.sock")
    harness.referee.publisher._observers.append(control)  # as the assembly lists it

    def submit(task: Callable[[MatchReferee], None]) -> None:
        task(harness.referee)  # the test's thread waits for the answer: no race

    control.start(submit)
    harness.move("b", "e5")  # seen by the server: its last records
    yield control
    control.close()
    assert not control.path.exists()


def test_status_and_commands_over_the_socket(server: ControlServer, harness: Harness) -> None:
    status = send_request(server.path, Request("status")).status
    assert status is not None
    assert status["game"]["moves"] == ["e4", "e5"]  # type: ignore[index]
    recent = status["ports"]["b"]["recent"]  # type: ignore[index]
    assert "refreq reply" in recent[0]["text"] and recent[0]["to"] is False
    assert "refcom respond" in status["ports"]["a"]["recent"][-1]["text"]  # type: ignore[index]
    assert os.stat(server.path).st_mode & 0o777 == 0o660
    paused = send_request(server.path, Request("pause"))
    assert paused.ok and paused.status is not None and paused.status["match"]["paused"]  # type: ignore[index]
    (journaled,) = harness.events.of(SupervisorCommand)
    assert journaled.uid == os.getuid()
    again = send_request(server.path, Request("pause"))
    assert again == Reply(False, error="the match is paused already")


def test_garbage_on_the_socket_gets_a_reason(server: ControlServer) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.connect(str(server.path))
        client.sendall(b"\x1b[2J hello\n")
        answer = json.loads(client.makefile("rb").readline())
    assert answer["ok"] is False and "not a JSON request line" in answer["error"]


def test_a_stale_socket_is_replaced_a_live_one_or_a_file_is_not(tmp_path: Path) -> None:
    path = tmp_path / "control.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as dead:
        dead.bind(str(path))  # bound, never listening: what a killed referee leaves
    first = ControlServer(path)
    try:
        with pytest.raises(ControlError, match="another referee is listening there"):
            ControlServer(path)
    finally:
        first.close()
    path.write_text("not a socket")
    with pytest.raises(ControlError, match="a file that is not a socket is there"):
        ControlServer(path)
    with pytest.raises(ControlError, match="no such group"):
        ControlServer(tmp_path / "other.sock", group="no-such-group-here")


def test_a_referee_that_stopped_answers_no_more(tmp_path: Path) -> None:
    control = ControlServer(tmp_path / "control.sock")
    control.start(lambda task: None)  # the loop has ended: tasks never run
    control.close()
    with pytest.raises(ControlError, match="no control socket"):
        send_request(tmp_path / "control.sock", Request("status"))


def test_ctl_prints_the_status_and_exits_by_the_answer(
    server: ControlServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["ctl", "--socket", str(server.path), "status"]) == cli.EXIT_OK
    out = capsys.readouterr().out
    assert out.startswith("match: in game, 0 of 1 games played, score A 0 - B 0\n")
    assert "moves: e4 e5" in out
    assert cli.main(["ctl", "--socket", str(server.path), "--json", "resume"]) == 1
    assert capsys.readouterr().err == "serialref: refused: the match is not paused\n"
    assert cli.main(["ctl", "--socket", str(server.path), "--json", "pause"]) == cli.EXIT_OK
    assert json.loads(capsys.readouterr().out)["match"]["paused"] is True


def test_ctl_without_a_referee_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["ctl", "--socket", str(tmp_path / "none.sock"), "status"])
    assert code == cli.EXIT_FAILURE
    err = capsys.readouterr().err
    assert err.startswith("serialref: error: no control socket at") and err.count("\n") == 1


def test_under_systemd_a_lone_referee_listens_in_its_runtime_directory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from serialref.appliance.assembly import with_runtime_socket
    from serialref.appliance.config import load_config

    config = load_config(None, {"port_a": "/dev/ttyUSB0", "port_b": "/dev/ttyUSB1"})
    monkeypatch.delenv("RUNTIME_DIRECTORY", raising=False)
    assert with_runtime_socket(config).control_socket is None
    monkeypatch.setenv("RUNTIME_DIRECTORY", "/run/serialref")
    assert with_runtime_socket(config).control_socket == Path("/run/serialref/control.sock")
    given = load_config(None, {"control_socket": "/tmp/ref.sock"})
    assert with_runtime_socket(given).control_socket == Path("/tmp/ref.sock")


def test_ctl_says_why_when_silent_clients_take_every_place(
    server: ControlServer, capsys: pytest.CaptureFixture[str]
) -> None:
    silent = [socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(MAX_CLIENTS + 4)]
    try:
        for client in silent:
            client.connect(str(server.path))
        assert cli.main(["ctl", "--socket", str(server.path), "status"]) == cli.EXIT_REJECTED
        last = capsys.readouterr().err.splitlines()[-1]  # after the server's own warnings
        assert last == (f"serialref: refused: {MAX_CLIENTS} control clients are being served "
                        "at once: try again soon")  # fmt: skip
    finally:
        for client in silent:
            client.close()


def test_an_events_status_names_its_open_seats(tmp_path: Path) -> None:
    control = ControlServer(tmp_path / "control.sock")
    control.start_event("Open night", lambda reason: None, open_seats=("Guest",))
    try:
        status = send_request(control.path, Request("status")).status
    finally:
        control.close()
    assert status is not None and status["event"]["open_seats"] == ["Guest"]  # type: ignore[index]
    lines = status_lines(status)
    assert lines[1] == ("OPEN SEATS (no token, no address: whoever signs on with the name takes "
                        "the seat): Guest")  # fmt: skip
