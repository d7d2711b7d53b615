"""A small scripted OpenAI-compatible HTTP server for tests (a real socket, no patching).

Script it with a list of replies; each reply is consumed in order by
``/v1/chat/completions`` (streaming or not). A reply may be:
- a string: the assistant's content;
- ``{"content": str, "logprobs": [float, ...]}`` (optionally ``"finish_reason": "length"``, a cut-off reply);
- ``{"status": 500}`` (an HTTP error) or ``{"sleep": seconds, ...}`` (a slow reply);
- ``{"content": str, "fail_after_chunks": n, "fail_mode": "drop" | "malformed" | "error"}``: a stream
  that fails part-way: ``n`` deltas of the content are sent, then the connection drops in the middle of
  a chunked body ("drop", the default), a non-JSON event is sent ("malformed"), or an SSE error event
  ("error"); no ``[DONE]`` follows. Non-streaming requests ignore it;
- a callable ``(request_json) -> reply`` for replies that depend on the prompt.
When the script runs out, ``default`` is used (or HTTP 500 if None).
Every request body is recorded in ``requests``.

Structured output like a real endpoint: ``response_formats`` lists the ``response_format`` types it accepts
(default json_schema and json_object); a request with another type is refused with HTTP 400 (recorded in
``refused``, no reply consumed). NeoRAG's one-off probe (app/services/structured.py) is answered
``{"ok": true}`` when accepted, recorded in ``probes`` and never consumes a scripted reply.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from app.services.structured import PROBE_SYSTEM

Reply = str | dict[str, Any] | Callable[[dict[str, Any]], Any]


class ScriptedOpenAI:
    """Start with ``with ScriptedOpenAI([...]) as llm: llm.base_url``."""

    def __init__(self, replies: list[Reply] | None = None, default: Reply | None = "OK",
                 response_formats: tuple[str, ...] = ("json_schema", "json_object")) -> None:
        self.replies: list[Reply] = list(replies or [])
        self.default = default
        self.response_formats = response_formats
        self.requests: list[dict[str, Any]] = []
        self.probes: list[dict[str, Any]] = []
        self.refused: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> ScriptedOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def push(self, *replies: Reply) -> None:
        with self._lock:
            self.replies.extend(replies)

    def _next(self, body: dict[str, Any]) -> dict[str, Any] | None:
        with self._lock:
            self.requests.append(body)
            reply = self.replies.pop(0) if self.replies else self.default
        if callable(reply):
            reply = reply(body)
        if reply is None:
            return None
        if isinstance(reply, str):
            return {"content": reply}
        return dict(reply)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # quiet
                pass

            def _json(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802
                if self.path.rstrip("/").endswith("/models"):
                    self._json(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})
                else:
                    self._json(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._json(404, {"error": {"message": "not found"}})
                    return
                kind = (body.get("response_format") or {}).get("type", "text")
                if kind != "text" and kind not in outer.response_formats:
                    with outer._lock:
                        outer.refused.append(body)
                    self._json(400, {"error": {"message": f"response_format {kind} is not supported",
                                               "type": "invalid_request_error"}})
                    return
                messages = body.get("messages") or [{}]
                if messages[0].get("content") == PROBE_SYSTEM:
                    with outer._lock:
                        outer.probes.append(body)
                    self._json(200, _completion(body, '{"ok": true}', None))
                    return
                reply = outer._next(body)
                if reply is None or reply.get("status", 200) >= 400:
                    status = 500 if reply is None else int(reply["status"])
                    self._json(status, {"error": {"message": "scripted failure", "type": "server_error"}})
                    return
                if reply.get("sleep"):
                    time.sleep(float(reply["sleep"]))
                content = str(reply.get("content", ""))
                if body.get("stream") and reply.get("fail_after_chunks") is not None:
                    self._failing_stream(content, int(reply["fail_after_chunks"]),
                                         str(reply.get("fail_mode", "drop")))
                elif body.get("stream"):
                    self._stream(content)
                else:
                    self._json(200, _completion(body, content, reply.get("logprobs"),
                                                str(reply.get("finish_reason", "stop"))))

            def _stream(self, content: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                pieces = [content[i:i + 7] for i in range(0, len(content), 7)] or [""]
                for piece in pieces:
                    chunk = {"id": "chatcmpl-s", "object": "chat.completion.chunk", "created": 0,
                             "model": "scripted",
                             "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

            def _failing_stream(self, content: str, n: int, mode: str) -> None:
                """``n`` deltas as HTTP chunks, then a failure (see the module docstring)."""
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.send_header("Connection", "close")
                self.end_headers()

                def chunk(data: bytes) -> None:
                    self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                    self.wfile.flush()

                for piece in [content[i:i + 7] for i in range(0, len(content), 7)][:n]:
                    event = {"id": "chatcmpl-s", "object": "chat.completion.chunk", "created": 0,
                             "model": "scripted",
                             "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
                    chunk(f"data: {json.dumps(event)}\n\n".encode())
                self.close_connection = True
                if mode == "malformed":
                    chunk(b"data: {this is not json\n\n")
                elif mode == "error":
                    error = {"error": {"message": "scripted mid-stream failure", "type": "server_error"}}
                    chunk(f"data: {json.dumps(error)}\n\n".encode())
                else:  # drop: announce a chunk, send part of it, close the socket
                    self.wfile.write(b"400\r\ndata: {")
                    self.wfile.flush()
                    return
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

        return Handler


def _completion(body: dict[str, Any], content: str, logprobs: list[float] | None,
                finish_reason: str = "stop") -> dict[str, Any]:
    prompt_words = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
    choice: dict[str, Any] = {"index": 0, "message": {"role": "assistant", "content": content},
                              "finish_reason": finish_reason}
    if logprobs is not None:
        choice["logprobs"] = {"content": [{"token": f"t{i}", "logprob": lp, "bytes": None, "top_logprobs": []}
                                          for i, lp in enumerate(logprobs)]}
    return {"id": "chatcmpl-scripted", "object": "chat.completion", "created": 0, "model": "scripted",
            "choices": [choice],
            "usage": {"prompt_tokens": prompt_words, "completion_tokens": len(content.split()),
                      "total_tokens": prompt_words + len(content.split())}}
