"""The embedding model's graph, rewritten at load so that its lookup tables stay int8 in memory.

The packaged model stores each weight as int8 rows with a float scale per row, dequantised in
the graph: `table = Cast(table_q) * scale`, then `Gather(table, ids)` for the token and position
embeddings. ONNX Runtime folds every such constant into a float32 copy when it loads the model,
which for the 30,522 x 384 word-embedding table is 47 MB kept for good, to look up a few dozen
rows per query. Rewritten as `Cast(Gather(table_q, ids)) * Gather(scale, ids)`, only the rows
asked for are dequantised, by the same float operations on the same values, so every vector is
bit for bit the one the original graph gives (a test compares them); the table stays int8
(11.7 MB). Measured: 34 MB less resident after loading, 90 MB less at the load's peak
(docs/BENCHMARKS.md, searching memory at 1M).

Only the fields this rewrite reads are declared: protobuf keeps every other field of the model
as it was, unknown to this schema, and writes it back unchanged.
"""

from collections import Counter
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_F = descriptor_pb2.FieldDescriptorProto
_MESSAGES: dict[str, tuple[tuple[str, int, bool, str | None], ...]] = {
    "Node": (
        ("input", 1, True, None),
        ("output", 2, True, None),
        ("name", 3, False, None),
        ("op_type", 4, False, None),
    ),
    "Graph": (("node", 1, True, "Node"),),
    "Model": (("graph", 7, False, "Graph"),),
}
"""ModelProto.graph -> GraphProto.node -> NodeProto's strings, numbered as in onnx.proto:
message -> (field, number, repeated, message type or None for a string)."""


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
                type=_F.TYPE_MESSAGE if of else _F.TYPE_STRING,
            )
            if of:
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
    order = [
        copy for node in nodes if id(node) not in moved for copy in rewritten.get(id(node), [node])
    ]
    kept = [type(node)() for node in order]
    for copy, node in zip(kept, order, strict=True):
        copy.CopyFrom(node)
    del model.graph.node[:]
    model.graph.node.extend(kept)
    return bytes(model.SerializeToString())
