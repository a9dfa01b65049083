"""What every scripted model server of the tests shares: an HTTP server on 127.0.0.1 (a port of its own), served from
a thread, that stops by itself once no request came for `idle_timeout` seconds, so a test that dies leaves none
behind. A server says how it is made (`_made`) and calls `heard()` for every request."""

from __future__ import annotations

import threading
import time
from http.server import ThreadingHTTPServer
from types import TracebackType
from typing import Self


class LocalServer:
    """The lifecycle: `with Server(...) as server:` starts it; `stop()` or the idle timeout ends it."""

    def __init__(self, idle_timeout: float) -> None:
        self.idle_timeout = idle_timeout
        self._last = time.monotonic()
        self._stopped = threading.Event()
        self._server: ThreadingHTTPServer | None = None

    def _made(self) -> ThreadingHTTPServer:
        """The server, bound to 127.0.0.1 and a free port."""
        raise NotImplementedError

    def start(self) -> Self:
        self._server = self._made()
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True).start()
        threading.Thread(target=self._watch_idle, daemon=True).start()
        return self

    def stop(self) -> None:
        self._stopped.set()
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()

    def heard(self) -> None:
        """A request came: the idle timeout counts from now."""
        self._last = time.monotonic()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the scripted server is not running")
        return self._server.server_address[1]

    def _watch_idle(self) -> None:
        while not self._stopped.wait(0.5):
            if time.monotonic() - self._last > self.idle_timeout:
                self.stop()
                return

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()
