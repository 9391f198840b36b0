"""JSON-RPC 2.0 over one framed line: envelopes, batches, notifications, and error answers.

This layer knows nothing about memories. It turns one line into calls of a ``Dispatch`` function
(method name, raw params) and the results or failures back into one line, or into nothing when
every message on the line was a notification. Params stay as ``msgspec.Raw`` here so the method
layer (``methods.py``) decodes each straight into its own typed Struct.

Failure mapping, which is the contract's section 3:
- a line that is not JSON is -32700, an envelope that is not a request is -32600, and so is a
  line nested deeper than ``headd.wire.nesting.MAX_DEPTH`` (refused before it is decoded);
- ``RpcError`` subclasses carry their own standard code;
- ``HeaddError`` subclasses are -32000 with ``data = {code: "ERR_…", details}``;
- anything else is logged with its traceback and answered -32603 with a fixed message, so no
  memory text or exception payload leaks onto the wire and no bad message takes the daemon down.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
from msgspec import UNSET, Raw, UnsetType

from headd.errors import HeaddError, InternalError, InvalidRequest, ParseError, RpcError
from headd.wire.nesting import MAX_DEPTH, nests_deeper_than

log = logging.getLogger(__name__)

JSONRPC_VERSION = "2.0"

RequestId = int | str | None

Dispatch = Callable[[str, Raw | None], Awaitable[Any]]
"""Run one method with its raw params (None when the request had none); return the result."""


class Envelope(msgspec.Struct, forbid_unknown_fields=True):
    """A request or notification as it arrives; ``id`` absent (UNSET) marks a notification."""

    jsonrpc: str
    method: str
    params: Raw | UnsetType = UNSET
    id: int | str | None | UnsetType = UNSET


class _IdOnly(msgspec.Struct):
    """What we salvage from a broken envelope so its error answer can still name its id."""

    id: int | str | None = None


_decode_raw = msgspec.json.Decoder(Raw).decode
_decode_batch = msgspec.json.Decoder(list[Raw]).decode
_decode_envelope = msgspec.json.Decoder(Envelope).decode
_decode_id = msgspec.json.Decoder(_IdOnly).decode
_encoder = msgspec.json.Encoder()


def error_object(exc: BaseException) -> dict[str, Any]:
    """The ``error`` member for a failure, by the mapping in the module docstring."""
    if isinstance(exc, HeaddError | RpcError):
        return exc.to_wire()
    return InternalError("internal error").to_wire()


def _response(request_id: RequestId, *, result: Any = UNSET, error: Any = UNSET) -> bytes:
    if error is UNSET:
        try:
            return _encoder.encode({"jsonrpc": JSONRPC_VERSION, "id": request_id, "result": result})
        except (TypeError, ValueError, OverflowError):
            log.exception("result of request %r did not encode", request_id)
            error = InternalError("result did not encode").to_wire()
    return _encoder.encode({"jsonrpc": JSONRPC_VERSION, "id": request_id, "error": error})


def error_line(exc: BaseException, request_id: RequestId = None) -> bytes:
    """A whole response carrying ``exc``: for failures found before any dispatch (framing)."""
    return _response(request_id, error=error_object(exc))


def _salvage_id(raw: bytes | Raw) -> RequestId:
    try:
        return _decode_id(raw).id
    except msgspec.DecodeError:
        return None


async def _answer_one(raw: Raw, dispatch: Dispatch) -> bytes | None:
    """Answer one envelope; None for a notification (whose failures are logged, not sent)."""
    try:
        envelope = _decode_envelope(raw)
    except msgspec.DecodeError as exc:
        return error_line(InvalidRequest(f"not a JSON-RPC request: {exc}"), _salvage_id(raw))
    notification = envelope.id is UNSET
    request_id: RequestId = None if isinstance(envelope.id, UnsetType) else envelope.id
    if envelope.jsonrpc != JSONRPC_VERSION:
        if notification:
            return None
        return error_line(InvalidRequest('jsonrpc must be "2.0"'), request_id)
    params = None if isinstance(envelope.params, UnsetType) else envelope.params
    try:
        result = await dispatch(envelope.method, params)
    except (HeaddError, RpcError) as exc:
        if notification:
            log.info("notification %s failed: %s", envelope.method, exc)
            return None
        return _response(request_id, error=error_object(exc))
    except Exception:
        log.exception("method %s failed", envelope.method)
        if notification:
            return None
        return _response(request_id, error=error_object(InternalError("internal error")))
    if notification:
        return None
    return _response(request_id, result=result)


async def answer_line(line: bytes, dispatch: Dispatch) -> bytes | None:
    """The answer to one line (without its newline), or None when nothing is owed."""
    if nests_deeper_than(line):
        message = f"nested deeper than {MAX_DEPTH} levels"
        return error_line(InvalidRequest(message, {"max_depth": MAX_DEPTH}))
    try:
        whole = _decode_raw(line)
    except msgspec.DecodeError as exc:
        return error_line(ParseError(f"parse error: {exc}"))
    if line.lstrip()[:1] != b"[":
        return await _answer_one(whole, dispatch)
    items = _decode_batch(whole)
    if not items:
        return error_line(InvalidRequest("empty batch"))
    answers: list[bytes] = []
    for item in items:
        await asyncio.sleep(0)  # let other connections (and signals) in between batch items
        answer = await _answer_one(item, dispatch)
        if answer is not None:
            answers.append(answer)
    if not answers:
        return None
    return b"[" + b",".join(answers) + b"]"
