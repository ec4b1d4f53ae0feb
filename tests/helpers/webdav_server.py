"""A real WebDAV server on 127.0.0.1 (wsgidav on cheroot, in a thread) for the sync tests."""

from __future__ import annotations

import threading
from pathlib import Path
from types import TracebackType

from cheroot import wsgi
from wsgidav.wsgidav_app import WsgiDAVApp

USER = "alice"
PASSWORD = "correct horse"


class WebDavServer:
    """Serves ``root`` at ``http://127.0.0.1:<free port>/dav/`` with one user (basic auth).

    Use as a context manager; ``url`` is the base URL, ``requests`` counts what it answered.
    """

    def __init__(self, root: Path) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.root = root
        config = {
            "host": "127.0.0.1",
            "port": 0,
            "provider_mapping": {"/dav": str(root)},
            "simple_dc": {"user_mapping": {"*": {USER: {"password": PASSWORD}}}},
            "http_authenticator": {
                "accept_basic": True,
                "accept_digest": False,
                "default_to_digest": False,
            },
            "verbose": 0,
            "logging": {"enable": False},
            "dir_browser": {"enable": False},
            "lock_storage": True,
        }
        self._server = wsgi.Server(("127.0.0.1", 0), WsgiDAVApp(config))
        # The serving loop notices stop() at its next wake-up, every 0.5 s by default: each
        # test with a server then waited ~0.5 s at its end doing nothing.
        self._server.expiration_interval = 0.05
        self._thread: threading.Thread | None = None
        self.url = ""

    def __enter__(self) -> WebDavServer:
        self._server.prepare()
        port = self._server.bind_addr[1]
        self.url = f"http://127.0.0.1:{port}/dav/"
        self._thread = threading.Thread(target=self._server.serve, daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.stop()
        if self._thread is not None:
            self._thread.join(timeout=10)
