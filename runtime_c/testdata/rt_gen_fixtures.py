#!/usr/bin/env python3
"""Regenerates the runtime's hand-made fixtures in this directory (checked in;
run this only to change them): rt_p0.npy, rt_{basic,head_io,fail,par}.*.json
and the malformed variants rt_bad_*.{graph,meta}.json, each with one defect
(see runtime_c/runtime_test.c, test_malformed). No numpy needed.

    python3 runtime_c/testdata/rt_gen_fixtures.py
"""
import copy
import json
import os
import struct

D = os.path.dirname(os.path.abspath(__file__))

def npy(path, shape, values, descr='<f4', fmt='f'):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else ""))
    total = 10 + len(header) + 1
    pad = (64 - total % 64) % 64
    header = header + " " * pad + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%d%s" % (len(values), fmt), *values))

npy(os.path.join(D, "rt_p0.npy"), [2, 3], [0.5, -1.0, 2.0, 0.25, -3.0, 1.5])

def op(name, func, inputs, nout=1, op_names=None):
    attrs = {"func_name": func, "num_inputs": str(len(inputs)), "num_outputs": str(nout),
             "flatten_data": "0"}
    if op_names: attrs["op_names"] = op_names
    return {"op": "tvm_op", "name": name, "attrs": attrs, "inputs": [[i, k, 0] for i, k in inputs]}

def null(name):
    return {"op": "null", "name": name, "inputs": []}

def attrs(n, sids, shape=(2, 3), dtype="float32"):
    return {"dltype": ["list_str", [dtype] * n], "storage_id": ["list_int", sids],
            "shape": ["list_shape", [list(shape)] * n], "device_index": ["list_int", [1] * n]}

def meta(model, inputs, outputs, **kw):
    m = {"producer": "kiln 0.1.0", "target": "llvm -mtriple=x86_64-pc-linux-gnu",
         "model": model, "kernel_abi_version": 1, "input_names": inputs, "output_names": outputs}
    m.update(kw)
    return m

def dump(name, obj):
    with open(os.path.join(D, name), "w") as f:
        # One node per line: small, diffable fixtures.
        if isinstance(obj, dict) and "nodes" in obj:
            f.write("{\n  \"nodes\": [\n")
            f.write(",\n".join("    " + json.dumps(n) for n in obj["nodes"]))
            f.write("\n  ],\n")
            rest = [k for k in obj if k != "nodes"]
            for i, k in enumerate(rest):
                f.write("  %s: %s%s\n" % (json.dumps(k), json.dumps(obj[k]), "," if i + 1 < len(rest) else ""))
            f.write("}\n")
        else:
            f.write(json.dumps(obj, indent=1) + "\n")

basic = {
    "nodes": [null("x"), null("y"), null("rt_p0"),
              op("add0", "rt_add_f32", [(0, 0), (1, 0)], op_names="add"),
              op("relu0", "rt_relu_f32", [(3, 0)], op_names="nn.relu"),
              op("add1", "rt_add_f32", [(4, 0), (2, 0)]),
              op("split/0", "rt_split2_f32", [(5, 0)], nout=2, op_names="add,multiply")],
    "arg_nodes": [0, 1, 2],
    "node_row_ptr": [0, 1, 2, 3, 4, 5, 6, 8],
    "heads": [[6, 0, 0], [6, 1, 0], [4, 0, 0]],
    "attrs": attrs(8, [0, 1, 2, 3, 4, 3, 5, 6]),
}
dump("rt_basic.graph.json", basic)
dump("rt_basic.meta.json", meta("rt_basic", ["x", "y"], ["output0", "output1", "relu_out"]))

head_io = {
    "nodes": [null("x"), null("rt_p0"), op("relu", "rt_relu_f32", [(0, 0)])],
    "arg_nodes": [0, 1], "node_row_ptr": [0, 1, 2, 3],
    "heads": [[0, 0, 0], [1, 0, 0], [2, 0, 0]],
    "attrs": attrs(3, [0, 1, 2]),
}
dump("rt_head_io.graph.json", head_io)
dump("rt_head_io.meta.json", meta("rt_head_io", ["x"], ["x_out", "p_out", "relu_out"]))

fail = {
    "nodes": [null("x"), op("relu", "rt_relu_f32", [(0, 0)]), op("boom", "rt_fail", [(1, 0)])],
    "arg_nodes": [0], "node_row_ptr": [0, 1, 2, 3], "heads": [[2, 0, 0]],
    "attrs": attrs(3, [0, 1, 2]),
}
dump("rt_fail.graph.json", fail)
dump("rt_fail.meta.json", meta("rt_fail", ["x"], ["output0"]))

par = {
    "nodes": [null("x"), op("scale", "rt_scale_par_f32", [(0, 0)], op_names="multiply,add"),
              op("relu", "rt_relu_f32", [(1, 0)]), op("scale_1", "rt_scale_par_f32", [(2, 0)])],
    "arg_nodes": [0], "node_row_ptr": [0, 1, 2, 3, 4], "heads": [[3, 0, 0]],
    "attrs": attrs(4, [0, 1, 2, 3], shape=(4, 1000)),
}
dump("rt_par.graph.json", par)
dump("rt_par.meta.json", meta("rt_par", ["x"], ["output0"]))

# Malformed variants of the basic graph (meta: rt_basic.meta.json unless noted).
def variant(name, mutate, meta_obj=None):
    g = copy.deepcopy(basic)
    if mutate: mutate(g)
    dump("rt_bad_%s.graph.json" % name, g)

def m_node_index(g): g["nodes"][4]["inputs"] = [[99, 0, 0]]
def m_func_name(g): del g["nodes"][4]["attrs"]["func_name"]
def m_symbol(g): g["nodes"][4]["attrs"]["func_name"] = "rt_no_such_kernel"
def m_storage(g): g["attrs"]["storage_id"][1][4] = -1
def m_dltype(g): g["attrs"]["dltype"][1][3] = "float13"
def m_param_shape(g): g["attrs"]["shape"][1][2] = [3, 2]
def m_topo(g): g["nodes"][4]["inputs"] = [[5, 0, 0]]
def m_shared_input(g): g["attrs"]["storage_id"][1][3] = 0
def m_live(g): g["attrs"]["storage_id"][1][5] = 4; g["heads"] = [[6, 0, 0], [6, 1, 0], [3, 0, 0]]
def m_num_inputs(g): g["nodes"][5]["attrs"]["num_inputs"] = "3"
for n, f in [("node_index", m_node_index), ("func_name", m_func_name), ("symbol", m_symbol),
             ("storage", m_storage), ("dltype", m_dltype), ("param_shape", m_param_shape),
             ("topo", m_topo), ("shared_input", m_shared_input), ("live", m_live),
             ("num_inputs", m_num_inputs)]:
    variant(n, f)

with open(os.path.join(D, "rt_bad_json.graph.json"), "w") as f:
    f.write('{"nodes": [{"op": "null", "name": "x", "inputs": []},\n')
dump("rt_bad_meta.meta.json", {k: v for k, v in meta("rt_basic", ["x", "y"], ["a", "b", "c"]).items() if k != "producer"})
dump("rt_bad_input_names.meta.json", meta("rt_basic", ["x", "z"], ["a", "b", "c"]))
dump("rt_bad_abi.meta.json", meta("rt_basic", ["x", "y"], ["a", "b", "c"], kernel_abi_version=2))
