"""The client's sans-I/O core: requests to bytes, bytes to answers, error codes to exceptions.

Neither the sync nor the asyncio client parses or frames anything itself: both feed what the
socket returned to ``ClientProtocol.receive`` and ask it for the answers, so the two can never
disagree about the wire. A failure answer becomes the same exception class the daemon raised
(``headd.errors``), found by its ``ERR_`` code for domain failures and by its JSON-RPC code for
protocol ones; an ``ERR_`` code this client does not know still becomes a ``HeaddError`` whose
``code`` is the one sent.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping

import msgspec

from headd.errors import InvalidParams, InvalidRequest, ProtocolViolation, from_wire
from headd.wire.framing import DEFAULT_LINE_LIMIT, LineFramer, Oversized
from headd.wire.nesting import MAX_DEPTH, nests_deeper_than

JSONRPC_VERSION = "2.0"


class ErrorObject(msgspec.Struct):
    code: int
    message: str
    data: object = None


class Answer(msgspec.Struct):
    """One JSON-RPC response; exactly one of ``result``/``error`` is meaningful."""

    id: int | str | None
    jsonrpc: str = JSONRPC_VERSION
    result: object = None
    error: ErrorObject | None = None


_decode_answer = msgspec.json.Decoder(Answer).decode
_decode_batch = msgspec.json.Decoder(list[Answer]).decode
_encoder = msgspec.json.Encoder()


def exception_for(error: ErrorObject) -> Exception:
    """The typed exception an error object stands for (``headd.errors.from_wire``)."""
    return from_wire({"code": error.code, "message": error.message, "data": error.data})


def unwrap(answer: Answer) -> object:
    """The result of an answer, or raise the exception its error stands for."""
    if answer.error is not None:
        raise exception_for(answer.error)
    return answer.result


class ClientProtocol:
    """Ids, encoding and framing for one connection; no sockets in here."""

    def __init__(self, line_limit: int = DEFAULT_LINE_LIMIT) -> None:
        self._ids = itertools.count(1)
        self._framer = LineFramer(line_limit)
        self._line_limit = line_limit

    def request(self, method: str, params: Mapping[str, object] | None = None) -> tuple[int, bytes]:
        """A request line (with its newline) and the id its answer will carry."""
        request_id = next(self._ids)
        return request_id, self._within_limit(self._encode(method, params, request_id) + b"\n")

    def notification(self, method: str, params: Mapping[str, object] | None = None) -> bytes:
        return self._within_limit(self._encode(method, params, None) + b"\n")

    def _within_limit(self, line: bytes) -> bytes:
        """``line``, or the size limit it breaks: the daemon would close the connection on it,
        which a caller would otherwise read as a dead daemon."""
        if len(line) > self._line_limit:
            raise InvalidRequest(
                f"the request is {len(line)} bytes, over the {self._line_limit}-byte line limit",
                {"limit": self._line_limit, "size": len(line)},
            )
        return line

    def batch(
        self, calls: list[tuple[str, Mapping[str, object] | None]]
    ) -> tuple[list[int], bytes]:
        ids = [next(self._ids) for _ in calls]
        body = b",".join(
            self._encode(method, params, rid)
            for rid, (method, params) in zip(ids, calls, strict=True)
        )
        return ids, self._within_limit(b"[" + body + b"]\n")

    @staticmethod
    def _encode(method: str, params: Mapping[str, object] | None, request_id: int | None) -> bytes:
        message: dict[str, object] = {"jsonrpc": JSONRPC_VERSION, "method": method}
        if params is not None:
            message["params"] = {k: v for k, v in params.items() if v is not None}
        if request_id is not None:
            message["id"] = request_id
        try:
            return _encoder.encode(message)
        except UnicodeEncodeError:  # a str holding undecodable bytes (surrogate escapes)
            raise InvalidParams(f"the params of {method} are not UTF-8 text") from None

    def receive(self, data: bytes) -> list[Answer | list[Answer]]:
        """The answers (a list for a batch answer) that ``data`` completes."""
        out: list[Answer | list[Answer]] = []
        for line in self._framer.feed(data):
            if isinstance(line, Oversized):
                raise ProtocolViolation(f"answer longer than {line.limit} bytes")
            if not line.strip():
                continue
            if nests_deeper_than(line):
                raise ProtocolViolation(f"answer nested deeper than {MAX_DEPTH} levels")
            try:
                if line.lstrip()[:1] == b"[":
                    out.append(_decode_batch(line))
                else:
                    out.append(_decode_answer(line))
            except msgspec.DecodeError as exc:
                raise ProtocolViolation(f"undecodable answer: {exc}") from None
        return out
