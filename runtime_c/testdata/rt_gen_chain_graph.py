#!/usr/bin/env python3
"""Writes the GRAPH JSON of a chain of N trivial `rt_copy4` kernels (float32[4]
each): x -> copy4 -> copy4_1 -> ... -> copy4_{N-1}. Intermediates ping-pong
between two shared storages; the head has its own. Used by
//runtime_c:executor_bench through kiln_test_artifact.

    python3 rt_gen_chain_graph.py [N] > chain.graph.json      (N = 1000)
"""
import json
import sys


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    nodes = [{"op": "null", "name": "x", "inputs": []}]
    storage = [0]
    for k in range(1, n + 1):
        name = "copy4" if k == 1 else "copy4_%d" % (k - 1)
        nodes.append({"op": "tvm_op", "name": name,
                      "attrs": {"func_name": "rt_copy4", "num_inputs": "1",
                                "num_outputs": "1", "flatten_data": "0", "op_names": "copy"},
                      "inputs": [[k - 1, 0, 0]]})
        storage.append(3 if k == n else 1 + k % 2)
    entries = n + 1
    graph = {
        "nodes": nodes,
        "arg_nodes": [0],
        "node_row_ptr": list(range(entries + 1)),
        "heads": [[n, 0, 0]],
        "attrs": {
            "dltype": ["list_str", ["float32"] * entries],
            "storage_id": ["list_int", storage],
            "shape": ["list_shape", [[4]] * entries],
            "device_index": ["list_int", [1] * entries],
        },
    }
    json.dump(graph, sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
