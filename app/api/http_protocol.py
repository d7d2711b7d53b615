"""uvicorn's HTTP protocol with JSON 400s: a request its parser refuses before the app sees it (an unknown
method such as ``FOO``, a malformed request line or header) is answered like every other NeoRAG error,
``{"error": "bad_request", "message": ...}``, instead of uvicorn's plain text."""

from __future__ import annotations

import json

from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol


class JsonErrorsHttpProtocol(HttpToolsProtocol):
    """httptools-based protocol (uvicorn's default when httptools is installed) with a JSON 400 body."""

    def send_400_response(self, msg: str) -> None:
        """The parser's refusal as the shared JSON error shape; the connection is closed (the stream
        position is unknown after a parse error)."""
        body = json.dumps({"error": "bad_request", "message": f"malformed HTTP request: {msg}"}).encode()
        content = [STATUS_LINE[400]]
        for name, value in self.server_state.default_headers:
            content.extend([name, b": ", value, b"\r\n"])
        content.extend([b"content-type: application/json\r\n",
                        b"content-length: " + str(len(body)).encode("ascii") + b"\r\n",
                        b"connection: close\r\n", b"\r\n", body])
        self.transport.write(b"".join(content))
        self.transport.close()
