"""Tests for serialref.standby.keys and the verbs around it: keygen, and no key, no replication."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from serialref import cli
from serialref.errors import ConfigError
from serialref.standby.keys import KEY_SIZE, generate_key, load_key


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def key_file(tmp_path: Path, data: bytes, mode: int = 0o600) -> Path:
    path = tmp_path / "replication.key"
    path.write_bytes(data)
    path.chmod(mode)
    return path


def test_keygen_writes_fresh_random_bytes_readable_by_the_owner_only(tmp_path: Path) -> None:
    first, second = tmp_path / "one.key", tmp_path / "two.key"
    old_umask = os.umask(0)  # the mode must not depend on the caller's umask
    try:
        generate_key(first)
    finally:
        os.umask(old_umask)
    generate_key(second)
    for path in (first, second):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert len(path.read_bytes()) == KEY_SIZE
    assert first.read_bytes() != second.read_bytes()
    assert load_key(first, option="--key") == first.read_bytes()


def test_keygen_never_overwrites_a_file(tmp_path: Path) -> None:
    path = key_file(tmp_path, b"precious" * 8)
    with pytest.raises(ConfigError, match="exists already"):
        generate_key(path)
    assert path.read_bytes() == b"precious" * 8


def test_keygen_in_a_missing_directory_says_so(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"cannot create .*No such file or directory"):
        generate_key(tmp_path / "missing" / "replication.key")


def test_a_key_is_the_whole_file_of_32_bytes_or_more(tmp_path: Path) -> None:
    long_key = bytes(range(256)) * 2
    assert load_key(key_file(tmp_path, long_key), option="--key") == long_key


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o620, 0o660])
def test_a_key_file_others_can_use_is_refused_with_the_fix(tmp_path: Path, mode: int) -> None:
    path = key_file(tmp_path, bytes(KEY_SIZE), mode)
    with pytest.raises(ConfigError) as caught:
        load_key(path, option="--key")
    message = str(caught.value)
    assert message.startswith("--key: ")
    assert f"mode {mode:04o}" in message
    assert f"chmod 600 {path}" in message
    assert "\n" not in message


def test_a_short_key_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="holds 31 bytes, a key needs at least 32"):
        load_key(key_file(tmp_path, bytes(31)), option="--key")


def test_a_missing_key_file_says_how_to_make_one(tmp_path: Path) -> None:
    path = tmp_path / "nowhere.key"
    with pytest.raises(ConfigError, match=f"keygen {path}"):
        load_key(path, option="--replicate-key")


def test_a_key_file_that_is_not_a_file_or_far_too_large_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not a regular file"):
        load_key(tmp_path, option="--key")
    with pytest.raises(ConfigError, match="too large"):
        load_key(key_file(tmp_path, bytes(5000)), option="--key")


# ------------------------------------------------------------------ the verbs


def test_the_keygen_verb(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "replication.key"
    code, out, err = run(capsys, "keygen", str(path))
    assert (code, err) == (cli.EXIT_OK, "")
    assert out.startswith(f"{path}: new replication key")
    assert len(path.read_bytes()) == KEY_SIZE
    code, _, err = run(capsys, "keygen", str(path))
    assert code == cli.EXIT_USAGE
    assert err.count("\n") == 1 and "exists already" in err


def test_run_with_replicate_and_no_key_refuses_to_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(
        capsys, "run", "/dev/null-a", "/dev/null-b", "--journal", str(tmp_path / "j.jsonl"),
        "--replicate", "127.0.0.1:7600",
    )  # fmt: skip
    assert code == cli.EXIT_USAGE
    assert err.count("\n") == 1
    assert err.startswith("serialref: error: --replicate-key: replication needs a shared key")
    assert "serialref keygen FILE" in err
    assert not (tmp_path / "j.jsonl").exists()  # refused before anything started


def test_standby_with_no_key_refuses_to_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(
        capsys, "standby", "127.0.0.1:0", "/dev/null-a", "/dev/null-b",
        "--journal", str(tmp_path / "mirror.jsonl"),
    )  # fmt: skip
    assert code == cli.EXIT_USAGE
    assert err.startswith("serialref: error: --key: replication needs a shared key")
    assert not (tmp_path / "mirror.jsonl").exists()


def test_a_readable_key_from_the_config_file_is_refused_naming_the_file_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = key_file(tmp_path, bytes(KEY_SIZE), 0o644)
    config = tmp_path / "match.toml"
    config.write_text(f'replicate = "127.0.0.1:7600"\nreplicate_key = "{key}"\n')
    code, _, err = run(
        capsys, "run", "/dev/null-a", "/dev/null-b", "--config", str(config),
        "--journal", str(tmp_path / "j.jsonl"),
    )  # fmt: skip
    assert code == cli.EXIT_USAGE
    assert err.startswith("serialref: error: replicate_key: the key file")
    assert f"chmod 600 {key}" in err
