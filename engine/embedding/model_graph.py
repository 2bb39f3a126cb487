"""The embedding model's graph, rewritten at load: lookup tables stay int8 in memory, and the
linear layers multiply in integers.

The packaged model stores each weight as int8 with a float scale per row (lookup tables) or
per output column (linear layers), dequantised in the graph: `W = Cast(W_q) * scale`. ONNX
Runtime folds every such constant into a float32 copy when it loads the model, and runs float
products on it.

`gather_before_dequantising`: the token and position embeddings `Gather(Cast(T_q) * s, ids)`
become `Cast(Gather(T_q, ids)) * Gather(s, ids)`: only the rows asked for are dequantised, by
the same float operations on the same values, so every vector is bit for bit the one the
original graph gives (a test compares them); the 30,522 x 384 word table stays int8, a
quarter of its float32 copy, which lowers both the resident memory after loading and the
load's peak (`scripts/bench_memory.py`).

`integer_matmuls`: the 36 linear layers `MatMul(x, Cast(W_q) * s)` run as integer products:
each row of `x` (one token) is quantised to 8 bits over its own range, lowest to highest, and
`MatMulIntegerToFloat` multiplies it with the int8 weights and applies both scales; the row's
lowest value comes back through the weights' column sums, `x W = (x - low) W + low colsum(W)`
(the attention's two products per layer have no weights and stay float). Why these choices,
each measured (`scripts/bench_model.py`: speed, memory and vectors against the float graph):
- a range per token, not per batch (what ONNX Runtime's `DynamicQuantizeMatMul` does): with
  one range for the whole batch a text's vector depended on the texts it was batched with
  (cosine down to 0.978 between the same text alone and in a batch of 32); per token, a text's
  vector is bit for bit the same alone or in any batch, as the float graph's was;
- lowest to highest rather than +-max|x| around zero: a third of the error (cosine to the
  float graph's 0.9994 mean, 0.9988 lowest, against 0.998 / 0.994), for two more small ops;
- the weights shifted to uint8 with a zero point of 128: x86 CPUs without VNNI multiply
  uint8 x int8 with an instruction that saturates pairs of products at 16 bits, silently, on
  large values (measured here, AVX2); uint8 x uint8 is exact on every CPU. Where uint8 x int8
  is exact (`signed_products_probe` says so: VNNI's instruction adds every product in 32
  bits), the weights stay int8: the same integer products, so the same vectors bit for bit,
  and ONNX Runtime's int8 kernel there multiplies twice as many pairs per instruction (a
  query's embedding costs less CPU, `scripts/bench_model.py`).
The vectors change, so the embedder's model id names this execution
(`engine.embedding.embedder.MODEL_ID`).

Only the fields these rewrites read or write are declared: protobuf keeps every other field
of the model as it was, unknown to this schema, and writes it back unchanged.
"""

import struct
from collections import Counter
from typing import Any

import numpy as np
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_F = descriptor_pb2.FieldDescriptorProto
_SCALARS = {
    "string": _F.TYPE_STRING,
    "bytes": _F.TYPE_BYTES,
    "int64": _F.TYPE_INT64,
    "int32": _F.TYPE_INT32,
}
_MESSAGES: dict[str, tuple[tuple[str, int, bool, str], ...]] = {
    "Attribute": (
        ("name", 1, False, "string"),
        ("i", 3, False, "int64"),
        ("ints", 8, True, "int64"),
        ("type", 20, False, "int32"),
    ),
    "Node": (
        ("input", 1, True, "string"),
        ("output", 2, True, "string"),
        ("name", 3, False, "string"),
        ("op_type", 4, False, "string"),
        ("attribute", 5, True, "Attribute"),
        ("domain", 7, False, "string"),
    ),
    "Tensor": (
        ("dims", 1, True, "int64"),
        ("data_type", 2, False, "int32"),
        ("name", 8, False, "string"),
        ("raw_data", 9, False, "bytes"),
    ),
    "TensorType": (("elem_type", 1, False, "int32"),),
    "Type": (("tensor_type", 1, False, "TensorType"),),
    "ValueInfo": (("name", 1, False, "string"), ("type", 2, False, "Type")),
    "Graph": (
        ("node", 1, True, "Node"),
        ("name", 2, False, "string"),
        ("initializer", 5, True, "Tensor"),
        ("input", 11, True, "ValueInfo"),
        ("output", 12, True, "ValueInfo"),
    ),
    "OperatorSet": (("domain", 1, False, "string"), ("version", 2, False, "int64")),
    "Model": (
        ("ir_version", 1, False, "int64"),
        ("graph", 7, False, "Graph"),
        ("opset_import", 8, True, "OperatorSet"),
    ),
}
"""ModelProto and the parts of it rewritten, numbered as in onnx.proto:
message -> (field, number, repeated, scalar type or message)."""

FLOAT, UINT8, INT8 = 1, 2, 3
"""TensorProto.DataType values."""
ATTRIBUTE_INT, ATTRIBUTE_INTS = 2, 7
"""AttributeProto.AttributeType values."""
ONNXRUNTIME_DOMAIN = "com.microsoft"
"""Where ONNX Runtime's own operators (`MatMulIntegerToFloat`) live."""
ROW_LEVELS = 255.0
"""A token's values, lowest to highest, map to the uint8 0..255."""


def _model_class() -> Any:
    schema = descriptor_pb2.FileDescriptorProto(
        name="knowhow_onnx_subset.proto", package="knowhow_onnx", syntax="proto2"
    )
    for message, fields in _MESSAGES.items():
        declared = schema.message_type.add(name=message)
        for name, number, repeated, of in fields:
            field = declared.field.add(
                name=name,
                number=number,
                label=_F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL,
                type=_SCALARS.get(of, _F.TYPE_MESSAGE),
            )
            if of not in _SCALARS:
                field.type_name = f".knowhow_onnx.{of}"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(schema)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("knowhow_onnx.Model"))


def gather_before_dequantising(model_bytes: bytes) -> bytes:
    """The model with every `Gather(Cast(table_q) * scale, ids)` turned into
    `Cast(Gather(table_q, ids)) * Gather(scale, ids)`; a model without that pattern comes back
    as it was."""
    model = _model_class().FromString(model_bytes)
    nodes = list(model.graph.node)
    producer = {output: node for node in nodes for output in node.output}
    uses = Counter(name for node in nodes for name in node.input)
    rewritten: dict[int, list[Any]] = {}
    """id of a lookup's Gather node -> the nodes replacing it (the Cast and Mul move after)."""
    moved: set[int] = set()
    for gather in nodes:
        mul = producer.get(gather.input[0]) if gather.op_type == "Gather" else None
        cast = producer.get(mul.input[0]) if mul is not None and mul.op_type == "Mul" else None
        if mul is None or cast is None or cast.op_type != "Cast" or len(cast.input) != 1:
            continue
        if uses[mul.output[0]] != 1 or uses[cast.output[0]] != 1:
            continue  # the float table feeds something else too: it must stay
        ids, looked_up = gather.input[1], gather.output[0]
        rows_q, rows_scale = f"{looked_up}_rows_q", f"{looked_up}_rows_scale"
        scale_rows = type(gather)()
        scale_rows.CopyFrom(gather)  # same axis attribute
        scale_rows.name = f"{gather.name}_scale"
        scale_rows.input[:] = [mul.input[1], ids]
        scale_rows.output[:] = [rows_scale]
        gather.input[0], gather.output[0] = cast.input[0], rows_q
        cast.input[0] = rows_q
        mul.input[1], mul.output[0] = rows_scale, looked_up
        rewritten[id(gather)] = [gather, scale_rows, cast, mul]
        moved |= {id(cast), id(mul)}
    if not rewritten:
        return model_bytes
    _replace_nodes(model.graph, nodes, rewritten, moved)
    return bytes(model.SerializeToString())


def integer_matmuls(model_bytes: bytes, signed_weights: bool = False) -> bytes:
    """The model with every linear layer `MatMul(x, Cast(W_q) * scale)` (int8 weights, a float
    scale per output column) run as an integer product of `x`'s rows quantised one by one
    (module docstring); a model without that pattern comes back as it was. `signed_weights`:
    the weights stay int8 (only where `signed_products_probe` shows such products exact),
    else they are shifted to uint8."""
    model = _model_class().FromString(model_bytes)
    graph = model.graph
    nodes = list(graph.node)
    producer = {output: node for node in nodes for output in node.output}
    uses = Counter(name for node in nodes for name in node.input)
    tensors = {tensor.name: tensor for tensor in graph.initializer}
    added = _Added(graph, nodes[0])
    quantised: dict[str, tuple[str, str, str]] = {}
    """activation -> (its rows as uint8, their scales, their lowest values): the Q, K and V
    layers share theirs."""
    rewritten: dict[int, list[Any]] = {}
    """id of a layer's MatMul -> the nodes replacing it (its Cast and Mul go)."""
    dropped: set[int] = set()
    for matmul in nodes:
        layer = _linear_layer(matmul, producer, uses, tensors)
        if layer is None:
            continue
        mul, cast, weights, scale = layer
        inputs, outputs = weights.dims
        replacing: list[Any] = []
        if matmul.input[0] not in quantised:
            quantised[matmul.input[0]] = _quantise_rows(added, matmul.input[0], replacing)
        rows, row_scales, row_lows = quantised[matmul.input[0]]
        column_sums = (
            np.frombuffer(weights.raw_data, np.int8).reshape(inputs, outputs).sum(axis=0)
            * np.frombuffer(scale.raw_data, "<f4")
        ).astype("<f4")
        if not signed_weights:
            weights.raw_data = weights.raw_data.translate(_INT8_TO_UINT8)
            weights.data_type = UINT8
        scale.dims[:] = [outputs]
        out = matmul.output[0]
        replacing += [
            added.node(
                "MatMulIntegerToFloat",
                [
                    rows,
                    weights.name,
                    added.constant("knowhow_one", FLOAT, [], _floats(1.0)),
                    scale.name,
                    "",  # the rows' zero point: 0
                    ""  # the weights' zero point: 0 for int8, 128 for int8 shifted to uint8
                    if signed_weights
                    else added.constant(
                        f"knowhow_zero_points_{outputs}", UINT8, [outputs], bytes([128]) * outputs
                    ),
                ],
                f"{out}_knowhow_unscaled",
                domain=ONNXRUNTIME_DOMAIN,
            ),
            added.node("Mul", [f"{out}_knowhow_unscaled", row_scales], f"{out}_knowhow_shifted"),
            # x W = (x - low) W + low * (the column sums of W)
            added.node(
                "Mul",
                [
                    row_lows,
                    added.constant(
                        f"{out}_knowhow_column_sums", FLOAT, [outputs], column_sums.tobytes()
                    ),
                ],
                f"{out}_knowhow_lows",
            ),
            added.node("Add", [f"{out}_knowhow_shifted", f"{out}_knowhow_lows"], out),
        ]
        rewritten[id(matmul)] = replacing
        dropped |= {id(mul), id(cast)}
    if not rewritten:
        return model_bytes
    _replace_nodes(graph, nodes, rewritten, dropped)
    if not any(opset.domain == ONNXRUNTIME_DOMAIN for opset in model.opset_import):
        model.opset_import.add(domain=ONNXRUNTIME_DOMAIN, version=1)
    return bytes(model.SerializeToString())


def plain_attention(model_bytes: bytes) -> bytes:
    """The model's attention without two detours of its export, which cost a node apiece:

    - each layer's keys, transposed for `Q K^T` (`K.transpose(-2, -1)`), were flattened to
      three axes, transposed and shaped back, the shapes computed from the tensor's at every
      run (`Reshape(Transpose(Reshape(k, s1), [0, 2, 1]), s2)`, 9 nodes once ONNX Runtime
      has rewritten them): one `Transpose` swapping the last two axes moves the same values;
    - each softmax was followed by `Where(IsNaN(p), 0, p)`, for rows whose every key is
      masked: a row of ours always has its [CLS] and [SEP] keys, so its softmax is never NaN.

    Nothing computed changes: the vectors are the same bit for bit (tests compare them, and
    over the 100k corpus' queries and a padded batch of 32). Fewer nodes run, and ONNX Runtime
    pays per node much of a short query's time, so a query's embedding costs less CPU
    (`scripts/bench_model.py`). A graph without these
    patterns comes back as it was."""
    model = _model_class().FromString(model_bytes)
    graph = model.graph
    nodes = list(graph.node)
    producer = {output: node for node in nodes for output in node.output}
    rewritten: dict[int, list[Any]] = {}
    gone: set[int] = set()
    renamed: dict[str, str] = {}
    for node in nodes:
        if node.op_type == "Reshape":
            swap = _transposed_keys(node, producer)
            if swap is not None:
                transpose = type(node)(
                    op_type="Transpose",
                    name=f"{node.name}_knowhow",
                    input=[swap],
                    output=node.output,
                )
                transpose.attribute.add(name="perm", ints=[0, 1, 3, 2], type=ATTRIBUTE_INTS)
                rewritten[id(node)] = [transpose]
        elif node.op_type == "Where" and len(node.input) == 3:
            guard = producer.get(node.input[0])
            if guard is not None and guard.op_type == "IsNaN" and guard.input[0] == node.input[2]:
                source = producer.get(node.input[2])
                if source is not None and source.op_type == "Softmax":
                    renamed[node.output[0]] = node.input[2]
                    gone.add(id(node))
    if not rewritten and not renamed:
        return model_bytes
    for node in nodes:
        node.input[:] = [renamed.get(name, name) for name in node.input]
    _replace_nodes(graph, nodes, rewritten, gone)
    _drop_unused(graph)
    return bytes(model.SerializeToString())


def _transposed_keys(reshape: Any, producer: dict[str, Any]) -> str | None:
    """The 4-axis tensor that `Reshape(Transpose(Reshape(x, ...), perm [0, 2, 1]), ...)`
    transposes the last two axes of (`x`, itself a 4-axis `Transpose`), else None."""
    middle = producer.get(reshape.input[0])
    if middle is None or middle.op_type != "Transpose" or _ints(middle, "perm") != [0, 2, 1]:
        return None
    flat = producer.get(middle.input[0])
    if flat is None or flat.op_type != "Reshape":
        return None
    keys = producer.get(flat.input[0])
    if keys is None or keys.op_type != "Transpose" or len(_ints(keys, "perm")) != 4:
        return None
    return str(flat.input[0])


def _ints(node: Any, name: str) -> list[int]:
    return next((list(a.ints) for a in node.attribute if a.name == name), [])


def _drop_unused(graph: Any) -> None:
    """Leaves out the nodes none of whose outputs is used (by a node or as a graph output),
    until there is none: what computed the shapes of a rewritten detour."""
    while True:
        used = {name for node in graph.node for name in node.input}
        used |= {output.name for output in graph.output}
        nodes = list(graph.node)
        unused = {id(node) for node in nodes if not any(name in used for name in node.output)}
        if not unused:
            return
        _replace_nodes(graph, nodes, {}, unused)


PROBE_DEPTH = 64
PROBE_PRODUCTS = (255 * 127 * PROBE_DEPTH, 255 * -128 * PROBE_DEPTH)
"""What `signed_products_probe` computes when every product is added exactly (in 32 bits)."""


def signed_products_probe() -> bytes:
    """A model of one uint8 x int8 integer product (`MatMulIntegerToFloat`, the op and the
    constant weights the linear layers use), run on rows of 255 (its input `rows`, uint8,
    [n, PROBE_DEPTH]): against weight columns of 127 and of -128 every pair of products
    leaves the 16 bits that a CPU without VNNI adds them in, so the answer is
    `PROBE_PRODUCTS` only where ONNX Runtime multiplies such products exactly."""
    model = _model_class()()
    model.ir_version = 8
    model.opset_import.add(domain="", version=13)
    model.opset_import.add(domain=ONNXRUNTIME_DOMAIN, version=1)
    graph = model.graph
    graph.name = "knowhow_signed_products_probe"
    graph.initializer.add(
        name="weights",
        data_type=INT8,
        dims=[PROBE_DEPTH, 2],
        raw_data=bytes([127, 128]) * PROBE_DEPTH,
    )
    graph.initializer.add(name="one", data_type=FLOAT, dims=[], raw_data=_floats(1.0))
    graph.node.add(
        op_type="MatMulIntegerToFloat",
        domain=ONNXRUNTIME_DOMAIN,
        name="products",
        input=["rows", "weights", "one", "one"],
        output=["products"],
    )
    graph.input.add(name="rows").type.tensor_type.elem_type = UINT8
    graph.output.add(name="products").type.tensor_type.elem_type = FLOAT
    return bytes(model.SerializeToString())


_INT8_TO_UINT8 = bytes((value + 128) % 256 for value in range(256))
"""Byte translation of an int8 v (two's complement) to the uint8 v + 128."""


def _linear_layer(
    matmul: Any, producer: dict[str, Any], uses: Counter[str], tensors: dict[str, Any]
) -> tuple[Any, Any, Any, Any] | None:
    """(Mul, Cast, int8 weights, column scales) of `MatMul(x, Cast(weights) * scales)`, or None
    when the node is no such layer, or its weights or scales feed something else too."""
    mul = producer.get(matmul.input[1]) if matmul.op_type == "MatMul" else None
    cast = producer.get(mul.input[0]) if mul is not None and mul.op_type == "Mul" else None
    if mul is None or cast is None or cast.op_type != "Cast" or len(cast.input) != 1:
        return None
    weights, scale = tensors.get(cast.input[0]), tensors.get(mul.input[1])
    if weights is None or scale is None:
        return None
    if weights.data_type != INT8 or len(weights.dims) != 2 or not weights.raw_data:
        return None  # (weights and scales kept in raw_data, as the exporters write them)
    if (
        scale.data_type != FLOAT
        or not scale.raw_data
        or list(scale.dims)
        not in (
            [weights.dims[1]],
            [1, weights.dims[1]],
        )
    ):
        return None
    shared = (mul.output[0], cast.output[0], weights.name, scale.name)
    if any(uses[name] != 1 for name in shared):
        return None
    return mul, cast, weights, scale


def _quantise_rows(added: "_Added", activation: str, nodes: list[Any]) -> tuple[str, str, str]:
    """Appends to `nodes` the quantisation of `activation`'s rows (its last axis) to uint8:
    `round((x - low) / scale)`, with each row's lowest value `low` and `scale = (highest -
    lowest) / 255`; returns (rows, scales, lows), each row's scale and low kept as a column
    ([..., 1]). The division is its own node and `QuantizeLinear` (scale 1) rounds and clips:
    the values of a per-row `QuantizeLinear` on the rows flattened to a matrix (the earlier
    form), bit for bit on the 100k corpus' texts and queries, in 8 nodes instead of 11 (ONNX
    Runtime's cost per node is much of a short query's)."""
    prefix = f"{activation}_knowhow"
    nodes += [
        added.node("ReduceMin", [activation], f"{prefix}_lows", axes=[-1], keepdims=1),
        added.node("ReduceMax", [activation], f"{prefix}_highs", axes=[-1], keepdims=1),
        added.node("Sub", [f"{prefix}_highs", f"{prefix}_lows"], f"{prefix}_spans"),
        added.node(
            "Max",
            [f"{prefix}_spans", added.constant("knowhow_tiny", FLOAT, [], _floats(1e-30))],
            f"{prefix}_spans_positive",  # a row of one value still gets a scale to divide by
        ),
        added.node(
            "Mul",
            [
                f"{prefix}_spans_positive",
                added.constant("knowhow_per_level", FLOAT, [], _floats(1 / ROW_LEVELS)),
            ],
            f"{prefix}_scales",
        ),
        added.node("Sub", [activation, f"{prefix}_lows"], f"{prefix}_shifted"),
        added.node("Div", [f"{prefix}_shifted", f"{prefix}_scales"], f"{prefix}_levels"),
        added.node(  # no zero point: uint8, zero at 0; the scale 1: rounding and clipping
            "QuantizeLinear",
            [f"{prefix}_levels", added.constant("knowhow_one", FLOAT, [], _floats(1.0))],
            f"{prefix}_q",
        ),
    ]
    return f"{prefix}_q", f"{prefix}_scales", f"{prefix}_lows"


class _Added:
    """Makes the nodes and constants a rewrite adds to a graph (each constant once)."""

    def __init__(self, graph: Any, any_node: Any) -> None:
        self._graph = graph
        self._node_class = type(any_node)
        self._constants = {tensor.name for tensor in graph.initializer}

    def node(
        self,
        op_type: str,
        inputs: list[str],
        output: str,
        domain: str = "",
        **attributes: int | list[int],
    ) -> Any:
        made = self._node_class(
            op_type=op_type, name=output, input=inputs, output=[output], domain=domain
        )
        for name, value in attributes.items():
            if isinstance(value, list):
                made.attribute.add(name=name, ints=value, type=ATTRIBUTE_INTS)
            else:
                made.attribute.add(name=name, i=value, type=ATTRIBUTE_INT)
        return made

    def constant(self, name: str, data_type: int, dims: list[int], raw: bytes) -> str:
        if name not in self._constants:
            self._graph.initializer.add(name=name, data_type=data_type, dims=dims, raw_data=raw)
            self._constants.add(name)
        return name


def _floats(*values: float) -> bytes:
    return struct.pack(f"<{len(values)}f", *values)


def _replace_nodes(
    graph: Any, nodes: list[Any], replacing: dict[int, list[Any]], gone: set[int]
) -> None:
    """The graph's nodes in their order, each in `replacing` replaced by its list, those in
    `gone` left out (copies: the repeated field is cleared before it is filled again)."""
    order = [
        new for node in nodes if id(node) not in gone for new in replacing.get(id(node), [node])
    ]
    kept = [type(node)() for node in order]
    for copy, node in zip(kept, order, strict=True):
        copy.CopyFrom(node)
    del graph.node[:]
    graph.node.extend(kept)
