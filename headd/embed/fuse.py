"""MiniLM's attention and GELU as one onnxruntime kernel each, on the float32 graph.

Why: unfused, a short query's embedding pays as much for the graph's small nodes as for its
matrix products. The exported graph spells each layer's attention as some thirty nodes (reshapes,
transposes, slices, the mask's ``Where`` and the softmax's ``IsNaN`` guard) and each GELU as five
(``Div``, ``Erf``, ``Add``, ``Mul``, ``Mul``); onnxruntime's own fusions do not recognise this
export's attention, and its GELU fusion no longer matches once the products are quantized. Here,
before quantization, each attention becomes one ``com.microsoft.MultiHeadAttention`` fed by the
same query, key and value projections (so ``quantize_dynamic`` quantizes exactly the products it
quantizes in the unfused graph) and each GELU one ``com.microsoft.Gelu``: 75 nodes run where the
export has 280, and the vectors equal the unfused model's to float rounding (cosine >= 0.99999,
tested), so the vector space is unchanged.

Pure: a ``ModelProto`` in, the same object rewritten; :class:`FusionMismatch` when the graph is not
the one this rewrite knows (the caller then quantizes the graph unfused).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import onnx

#: The key padding mask as MultiHeadAttention takes it (int32, 1 = attend).
MASK_INT32 = "attention_mask_int32"
HEADS = 12


class FusionMismatch(ValueError):
    """The graph does not have the shape the fusion expects; nothing was changed."""


class _Graph:
    """Who produces and who consumes each tensor of a graph, with checked look-ups."""

    def __init__(self, nodes: Iterable[Any]) -> None:
        self.producer: dict[str, Any] = {}
        self.consumers: dict[str, list[Any]] = {}
        for node in nodes:
            for name in node.output:
                self.producer[name] = node
            for name in node.input:
                self.consumers.setdefault(name, []).append(node)

    def made_by(self, tensor: str, op: str) -> Any:
        node = self.producer.get(tensor)
        if node is None or node.op_type != op:
            raise FusionMismatch(f"{tensor} is not the output of a {op}")
        return node

    def used_by(self, tensor: str, op: str) -> Any:
        users = [node for node in self.consumers.get(tensor, []) if node.op_type == op]
        if len(users) != 1:
            raise FusionMismatch(f"{tensor} does not feed exactly one {op}")
        return users[0]


def fuse_attention_and_gelu(model: onnx.ModelProto) -> tuple[int, int]:
    """Rewrite ``model`` in place; answers (attentions fused, GELUs fused)."""
    import onnx
    from onnx import numpy_helper

    graph = model.graph
    if "attention_mask" not in {i.name for i in graph.input}:
        raise FusionMismatch("no attention_mask input")
    nodes = _Graph(graph.node)
    scalars = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    replaced: set[str] = set()
    fused: list[Any] = []
    attentions = 0
    for softmax in [n for n in graph.node if n.op_type == "Softmax"]:
        query, key, value, scale, out = _attention(nodes, scalars, softmax)
        fused.append(
            onnx.helper.make_node(
                "MultiHeadAttention",
                [query, key, value, "", MASK_INT32],
                [out],
                name=f"fused_attention_{attentions}",
                domain="com.microsoft",
                num_heads=HEADS,
                scale=scale,
            )
        )
        replaced.add(out)
        attentions += 1
    gelus = 0
    for erf in [n for n in graph.node if n.op_type == "Erf"]:
        source, out = _gelu(nodes, scalars, erf)
        fused.append(
            onnx.helper.make_node(
                "Gelu", [source], [out], name=f"fused_gelu_{gelus}", domain="com.microsoft"
            )
        )
        replaced.add(out)
        gelus += 1
    if attentions == 0:
        raise FusionMismatch("no attention found")
    cast = onnx.helper.make_node(
        "Cast", ["attention_mask"], [MASK_INT32], name="mask_to_int32", to=onnx.TensorProto.INT32
    )
    kept = [n for n in graph.node if not replaced.intersection(n.output)]
    ordered = _live_in_order([cast, *kept, *fused], graph)
    del graph.node[:]
    graph.node.extend(ordered)
    used = {name for node in ordered for name in node.input}
    for initializer in [i for i in graph.initializer if i.name not in used]:
        graph.initializer.remove(initializer)
    if not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(onnx.helper.make_opsetid("com.microsoft", 1))
    return attentions, gelus


def _attention(
    nodes: _Graph, scalars: dict[str, Any], softmax: Any
) -> tuple[str, str, str, float, str]:
    """(query, key, value projections, the scale, the heads' merged output) around ``softmax``:
    ``softmax(Q·s × (K·s)ᵀ + mask)``, guarded against NaN, times V, heads merged back."""
    scores = nodes.made_by(softmax.input[0], "Add")
    product = nodes.made_by(scores.input[0], "MatMul")
    query_scaled = nodes.made_by(product.input[0], "Mul")
    query_heads = nodes.made_by(query_scaled.input[0], "Transpose")
    query = nodes.made_by(query_heads.input[0], "Reshape").input[0]
    key_scaled = nodes.made_by(product.input[1], "Mul")
    step = nodes.made_by(key_scaled.input[0], "Reshape")
    while nodes.producer.get(step.input[0]) is not None and nodes.producer[
        step.input[0]
    ].op_type in ("Reshape", "Transpose"):
        step = nodes.producer[step.input[0]]
    key = step.input[0]
    guarded = nodes.used_by(softmax.output[0], "Where")
    weighted = nodes.used_by(guarded.output[0], "MatMul")
    value_heads = nodes.made_by(weighted.input[1], "Transpose")
    value = nodes.made_by(value_heads.input[0], "Reshape").input[0]
    merged = nodes.used_by(nodes.used_by(weighted.output[0], "Transpose").output[0], "Reshape")
    scale = 1.0
    for mul in (query_scaled, key_scaled):
        factor = scalars.get(mul.input[1])
        if factor is None or factor.size != 1:
            raise FusionMismatch("the attention's scale is not a constant")
        scale *= float(factor.reshape(-1)[0])
    return query, key, value, scale, merged.output[0]


def _gelu(nodes: _Graph, scalars: dict[str, Any], erf: Any) -> tuple[str, str]:
    """(input, output) of ``x * 0.5 * (1 + erf(x / sqrt 2))`` around ``erf``."""
    divide = nodes.made_by(erf.input[0], "Div")
    source = divide.input[0]
    plus_one = nodes.used_by(erf.output[0], "Add")
    half = nodes.used_by(plus_one.output[0], "Mul")
    times_x = nodes.used_by(half.output[0], "Mul")
    constants = {
        divide.input[1]: 2**0.5,
        _other(plus_one, erf.output[0]): 1.0,
        _other(half, plus_one.output[0]): 0.5,
    }
    for name, expected in constants.items():
        value = scalars.get(name)
        if value is None or value.size != 1 or abs(float(value.reshape(-1)[0]) - expected) > 1e-6:
            raise FusionMismatch("not the erf GELU")
    if _other(times_x, half.output[0]) != source:
        raise FusionMismatch("not the erf GELU")
    return source, times_x.output[0]


def _other(node: Any, known: str) -> str:
    others = [name for name in node.input if name != known]
    if len(others) != 1:
        raise FusionMismatch(f"{node.op_type} does not take two inputs")
    return str(others[0])


def _live_in_order(candidates: list[Any], graph: Any) -> list[Any]:
    """The nodes the graph's outputs need, each after its inputs' producers."""
    producer = {name: node for node in candidates for name in node.output}
    live: set[int] = set()
    stack = [o.name for o in graph.output]
    while stack:
        node = producer.get(stack.pop())
        if node is None or id(node) in live:
            continue
        live.add(id(node))
        stack.extend(name for name in node.input if name)
    ready = {i.name for i in graph.input} | {i.name for i in graph.initializer} | {""}
    pending = [node for node in candidates if id(node) in live]
    ordered: list[Any] = []
    while pending:
        waiting = []
        for node in pending:
            if all(name in ready for name in node.input):
                ordered.append(node)
                ready.update(node.output)
            else:
                waiting.append(node)
        if len(waiting) == len(pending):
            raise FusionMismatch("the fused graph has a cycle")
        pending = waiting
    return ordered
