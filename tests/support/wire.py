"""What the wire fuzz tests share: JSON values worth sending, and whether params are wrong."""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import strategies as st

from headd.errors import InvalidParams
from headd.wire.methods import decode_request

#: Every code a bad line may be answered with; -32603 (the daemon's own failure) is not one.
TYPED_ERRORS = frozenset({-32700, -32600, -32601, -32602, -32000})

#: Field names the methods take, for params that look close to right.
FIELDS = ["path", "query", "limit", "at", "session", "ops", "filter", "paths", "href", "to"]
FIELDS += ["entity", "key", "hash", "base", "landed", "probes", "id", "embed", "signal", "budget"]

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
    | st.sampled_from([10**30, -(10**400), 1e308, 2**63, -(2**63) - 1]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=10,
)

#: Params for any method: an object of plausible fields, or any JSON value at all.
any_params = st.dictionaries(st.sampled_from(FIELDS), json_values, max_size=3) | json_values


def params_are_wrong(method: str, params: Any) -> bool:
    """True when ``params`` do not decode for ``method``, so the daemon must answer -32602."""
    try:
        decode_request(method, msgspec.json.encode(params))
    except InvalidParams:
        return True
    return False
