"""``run_client`` on a thread of its own, for the tests that drive a client in-process."""

from __future__ import annotations

import threading
from collections.abc import Callable

TIMEOUT = 5.0


class ClientThread:
    """``run_client`` on a thread; its exit code (or its exception) once it has returned."""

    def __init__(self, run: Callable[[], int]) -> None:
        self.exit_code: int | None = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(run,), name="test-client")

    def _run(self, run: Callable[[], int]) -> None:
        try:
            self.exit_code = run()
        except BaseException as exc:
            self.error = exc

    def start(self) -> None:
        self._thread.start()

    def result(self, timeout: float = TIMEOUT) -> int:
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "run_client did not return"
        if self.error is not None:
            raise self.error
        assert self.exit_code is not None
        return self.exit_code

    @property
    def running(self) -> bool:
        return self._thread.is_alive()
