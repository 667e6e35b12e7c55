"""A stand-in for a peer installation over real HTTP, for the sender's tests: a handler class
answering the frames route as a test needs, served from a thread on a loopback port."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakePeerHandler(BaseHTTPRequestHandler):
    """Reads a request's JSON body and answers JSON; quiet in the test's output."""

    def read_json(self) -> Any:
        return json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"null")

    def answer_json(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        return None


@contextmanager
def serving(handler: type[FakePeerHandler], port: int = 0) -> Iterator[str]:
    """``handler`` on ``port`` (0: a free one) until the block ends; its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
