"""tests/ffi/python: libkiln.so end to end through its C ABI, from Python.

    python3 main.py MODEL.onnx INPUT.npy EXPECTED.npy WORKDIR

Imports an ONNX model, compiles it to WORKDIR/model.so, loads that artifact,
runs one session on INPUT.npy and compares the output with EXPECTED.npy
(|a-b| <= 1e-4 + 1e-4*|b|); checks the DLPack copy of the output and one error
path (an input of the wrong shape). Standard library only (ctypes; no NumPy):
the .npy files are parsed here (float32 little-endian, C order) and the input
DLTensor is filled in by hand.

libkiln.so is loaded from $KILN_LIB (a path) or by name ("libkiln.so", found
through LD_LIBRARY_PATH), with RTLD_GLOBAL: compiled models resolve the
runtime's kiln_* kernel-ABI functions from the global scope.
Exits 0 only if every check passed.
"""

import array
import ast
import ctypes
import math
import os
import struct
import sys

# ------------------------------------------------------------------- DLPack

KDL_CPU = 1
KDL_FLOAT = 2


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    pass


DLManagedTensorDeleter = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [
    ("dl_tensor", DLTensor),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", DLManagedTensorDeleter),
]

# --------------------------------------------------------------------- kiln

KILN_INVALID_ARGUMENT = 3


class KilnCompileOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("target", ctypes.c_char_p),
        ("opt_level", ctypes.c_int32),
        ("disabled_passes", ctypes.POINTER(ctypes.c_char_p)),
        ("num_disabled_passes", ctypes.c_int32),
        ("no_memory_plan", ctypes.c_int32),
        ("num_threads", ctypes.c_int32),
        ("cc", ctypes.c_char_p),
    ]


class KilnCompileReport(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("passes_ms", ctypes.c_double),
        ("lower_ms", ctypes.c_double),
        ("plan_ms", ctypes.c_double),
        ("codegen_ms", ctypes.c_double),
        ("link_ms", ctypes.c_double),
        ("num_fused_calls", ctypes.c_int32),
        ("num_kernels", ctypes.c_int32),
        ("arena_bytes", ctypes.c_int64),
        ("naive_bytes", ctypes.c_int64),
        ("file_bytes", ctypes.c_uint64),
    ]


# The layouts of the C structs on LP64 (x86_64, aarch64 Linux).
assert ctypes.sizeof(DLTensor) == 48, ctypes.sizeof(DLTensor)
assert ctypes.sizeof(DLManagedTensor) == 64, ctypes.sizeof(DLManagedTensor)
assert ctypes.sizeof(KilnCompileOptions) == 56, ctypes.sizeof(KilnCompileOptions)
assert ctypes.sizeof(KilnCompileReport) == 80, ctypes.sizeof(KilnCompileReport)

Status = ctypes.c_void_p  # KilnStatus*: None (NULL) on success
Handle = ctypes.c_void_p  # KilnModel*, KilnArtifact*, KilnSession*
P = ctypes.POINTER


def load_kiln():
    path = os.environ.get("KILN_LIB") or "libkiln.so"
    lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    sigs = {
        "kiln_version": (ctypes.c_char_p, []),
        "kiln_api_version": (ctypes.c_uint32, []),
        "kiln_status_code": (ctypes.c_int, [Status]),
        "kiln_status_message": (ctypes.c_char_p, [Status]),
        "kiln_status_code_name": (ctypes.c_char_p, [ctypes.c_int]),
        "kiln_status_free": (None, [Status]),
        "kiln_model_load_onnx_file": (Status, [ctypes.c_char_p, ctypes.c_void_p, P(Handle)]),
        "kiln_model_release": (None, [Handle]),
        "kiln_model_num_inputs": (Status, [Handle, P(ctypes.c_int32)]),
        "kiln_model_input_info": (Status, [Handle, ctypes.c_int32, P(ctypes.c_char_p), P(DLTensor)]),
        "kiln_model_compile": (Status, [Handle, P(KilnCompileOptions), ctypes.c_char_p,
                                        P(KilnCompileReport)]),
        "kiln_artifact_load": (Status, [ctypes.c_char_p, P(Handle)]),
        "kiln_artifact_release": (None, [Handle]),
        "kiln_artifact_num_inputs": (ctypes.c_int32, [Handle]),
        "kiln_artifact_num_outputs": (ctypes.c_int32, [Handle]),
        "kiln_artifact_input_info": (Status, [Handle, ctypes.c_int32, P(ctypes.c_char_p),
                                              P(DLTensor)]),
        "kiln_session_create": (Status, [Handle, ctypes.c_void_p, P(Handle)]),
        "kiln_session_release": (None, [Handle]),
        "kiln_session_set_input": (Status, [Handle, ctypes.c_char_p, P(DLTensor)]),
        "kiln_session_run": (Status, [Handle]),
        "kiln_session_get_output": (Status, [Handle, ctypes.c_int32, P(P(DLTensor))]),
        "kiln_session_get_output_dlpack": (Status, [Handle, ctypes.c_int32,
                                                    P(P(DLManagedTensor))]),
    }
    for name, (restype, argtypes) in sigs.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    return lib


def text(b):
    return "(null)" if b is None else b.decode("utf-8", "replace")


class Checker:
    def __init__(self, lib):
        self.lib = lib
        self.failures = 0

    def fail(self, what):
        print("FAIL: " + what, file=sys.stderr)
        self.failures += 1

    def ok(self, st, what):
        """A NULL status is success; otherwise prints and frees it and counts a failure."""
        if not st:
            return True
        lib = self.lib
        self.fail("%s: %s: %s" % (what, text(lib.kiln_status_code_name(lib.kiln_status_code(st))),
                                  text(lib.kiln_status_message(st))))
        lib.kiln_status_free(st)
        return False


def shape_of(t):
    if t.ndim <= 0 or not t.shape:
        return []
    return [t.shape[i] for i in range(t.ndim)]


def describe(t):
    return "%s dtype code=%d bits=%d lanes=%d" % (shape_of(t), t.dtype.code, t.dtype.bits,
                                                  t.dtype.lanes)


def is_float32(t):
    return t.dtype.code == KDL_FLOAT and t.dtype.bits == 32 and t.dtype.lanes == 1


def is_compact(t):
    """strides NULL, or the compact row-major strides."""
    if not t.strides:
        return True
    shape = shape_of(t)
    expect = 1
    for i in reversed(range(len(shape))):
        if shape[i] != 1 and t.strides[i] != expect:
            return False
        expect *= shape[i]
    return True


def product(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def f32_bytes(t, n):
    if not n:
        return b""
    if not t.data:
        raise ValueError("a tensor with NULL data")
    return ctypes.string_at(t.data + t.byte_offset, 4 * n)


def f32_values(raw):
    a = array.array("f")
    assert a.itemsize == 4
    a.frombytes(raw)
    if sys.byteorder != "little":
        a.byteswap()
    return a


# ---------------------------------------------------------------------- npy


class NpyError(Exception):
    pass


def read_npy_f32(path):
    """(shape, raw little-endian float32 bytes) of a float32 C-order .npy file."""
    try:
        with open(path, "rb") as f:
            b = f.read()
    except OSError as e:
        raise NpyError("%s: cannot read: %s" % (path, e))
    if len(b) < 10 or b[:6] != b"\x93NUMPY":
        raise NpyError("%s: not a .npy file (bad magic)" % path)
    major, minor = b[6], b[7]
    if major == 1:
        (header_len,), start = struct.unpack("<H", b[8:10]), 10
    elif major in (2, 3) and len(b) >= 12:
        (header_len,), start = struct.unpack("<I", b[8:12]), 12
    else:
        raise NpyError("%s: unsupported .npy format version %d.%d" % (path, major, minor))
    if len(b) < start + header_len:
        raise NpyError("%s: truncated .npy header" % path)
    header_text = b[start:start + header_len].decode("latin-1")
    try:
        header = ast.literal_eval(header_text.strip())
    except (ValueError, SyntaxError) as e:
        raise NpyError("%s: malformed .npy header %r: %s" % (path, header_text.strip(), e))
    if not isinstance(header, dict) or not {"descr", "fortran_order", "shape"} <= set(header):
        raise NpyError("%s: malformed .npy header %r" % (path, header_text.strip()))
    descr = header["descr"]
    if descr != "<f4":
        raise NpyError("%s: unsupported dtype %r: this reader supports only float32 "
                       "little-endian ('<f4')" % (path, descr))
    if header["fortran_order"]:
        raise NpyError("%s: Fortran-order arrays are not supported (only C order)" % path)
    shape = header["shape"]
    if not isinstance(shape, tuple) or not all(isinstance(d, int) and d >= 0 for d in shape):
        raise NpyError("%s: bad shape %r in .npy header" % (path, shape))
    count = product(shape)
    body = b[start + header_len:]
    if len(body) < 4 * count:
        raise NpyError("%s: short data: %d bytes for %d float32 elements" % (path, len(body), count))
    return list(shape), body[:4 * count]


def make_tensor(shape, raw):
    """A float32 CPU DLTensor over a ctypes copy of `raw`; returns (tensor, keepalive)."""
    n = product(shape)
    data = (ctypes.c_float * max(n, 1))()
    if raw:
        ctypes.memmove(data, raw, len(raw))
    dims = (ctypes.c_int64 * max(len(shape), 1))(*shape)
    t = DLTensor()
    t.data = ctypes.cast(data, ctypes.c_void_p)
    t.device = DLDevice(KDL_CPU, 0)
    t.ndim = len(shape)
    t.dtype = DLDataType(KDL_FLOAT, 32, 1)
    t.shape = ctypes.cast(dims, P(ctypes.c_int64))
    t.strides = None
    t.byte_offset = 0
    return t, (data, dims)


# --------------------------------------------------------------------- main


def run(lib, ck, handles, model_path, input_path, expected_path, workdir):
    so_path = os.path.join(workdir, "model.so")
    so_c = so_path.encode()

    # 2. Versions.
    print("kiln_version: %s" % text(lib.kiln_version()))
    api = lib.kiln_api_version()
    print("kiln_api_version: %d" % api)
    if api < 1:
        ck.fail("kiln_api_version() < 1")

    # 3. Import and compile.
    model = Handle()
    if not ck.ok(lib.kiln_model_load_onnx_file(model_path.encode(), None, ctypes.byref(model)),
                 "kiln_model_load_onnx_file"):
        return
    handles["model"] = model
    n_model_inputs = ctypes.c_int32(0)
    if ck.ok(lib.kiln_model_num_inputs(model, ctypes.byref(n_model_inputs)),
             "kiln_model_num_inputs"):
        print("model inputs: %d" % n_model_inputs.value)
        if n_model_inputs.value != 1:
            ck.fail("the model should have 1 input")
        for i in range(n_model_inputs.value):
            name = ctypes.c_char_p()
            info = DLTensor()
            if ck.ok(lib.kiln_model_input_info(model, i, ctypes.byref(name), ctypes.byref(info)),
                     "kiln_model_input_info"):
                print("  model input %d: %s %s" % (i, text(name.value), describe(info)))

    options = KilnCompileOptions()
    options.struct_size = ctypes.sizeof(KilnCompileOptions)
    options.opt_level = 3
    report = KilnCompileReport()
    report.struct_size = ctypes.sizeof(KilnCompileReport)
    if not ck.ok(lib.kiln_model_compile(model, ctypes.byref(options), so_c, ctypes.byref(report)),
                 "kiln_model_compile"):
        return
    print("compiled %s: num_kernels=%d file_bytes=%d" % (so_path, report.num_kernels,
                                                         report.file_bytes))
    if report.num_kernels <= 0:
        ck.fail("report.num_kernels should be > 0")
    if report.file_bytes == 0:
        ck.fail("report.file_bytes should be > 0")

    # 4. Release the model; load the artifact.
    lib.kiln_model_release(handles.pop("model"))
    artifact = Handle()
    if not ck.ok(lib.kiln_artifact_load(so_c, ctypes.byref(artifact)), "kiln_artifact_load"):
        return
    handles["artifact"] = artifact
    n_in = lib.kiln_artifact_num_inputs(artifact)
    n_out = lib.kiln_artifact_num_outputs(artifact)
    print("artifact: %d input(s), %d output(s)" % (n_in, n_out))
    if n_in != 1:
        ck.fail("the artifact should have 1 input")
    if n_out != 1:
        ck.fail("the artifact should have 1 output")
    name = ctypes.c_char_p()
    info = DLTensor()
    if ck.ok(lib.kiln_artifact_input_info(artifact, 0, ctypes.byref(name), ctypes.byref(info)),
             "kiln_artifact_input_info"):
        print("  artifact input 0: %s %s" % (text(name.value), describe(info)))
        if name.value != b"input":
            ck.fail('artifact input 0 should be "input"')
        if not is_float32(info):
            ck.fail("artifact input 0 should be float32")
        if shape_of(info) != [1, 3, 32, 32]:
            ck.fail("artifact input 0 should have shape [1, 3, 32, 32]")
    session = Handle()
    if not ck.ok(lib.kiln_session_create(artifact, None, ctypes.byref(session)),
                 "kiln_session_create"):
        return
    handles["session"] = session

    # 5. Input, run, output.
    try:
        in_shape, in_raw = read_npy_f32(input_path)
        exp_shape, exp_raw = read_npy_f32(expected_path)
    except NpyError as e:
        ck.fail(str(e))
        return
    in_t, keep = make_tensor(in_shape, in_raw)
    if not ck.ok(lib.kiln_session_set_input(session, b"input", ctypes.byref(in_t)),
                 "kiln_session_set_input"):
        return
    if not ck.ok(lib.kiln_session_run(session), "kiln_session_run"):
        return
    out_p = P(DLTensor)()
    if not ck.ok(lib.kiln_session_get_output(session, 0, ctypes.byref(out_p)),
                 "kiln_session_get_output"):
        return
    if not out_p:
        ck.fail("kiln_session_get_output gave NULL")
        return
    out = out_p.contents
    print("output 0: %s" % describe(out))
    out_shape = shape_of(out)
    n = product(out_shape)
    if out.device.device_type != KDL_CPU:
        ck.fail("output 0 should be on the CPU")
    view_ok = is_float32(out) and is_compact(out)
    out_raw = None
    if not is_float32(out):
        ck.fail("output 0 should be float32")
    elif out_shape != exp_shape:
        ck.fail("output 0 shape %s differs from EXPECTED.npy %s" % (out_shape, exp_shape))
    elif not is_compact(out):
        ck.fail("output 0 should be compact")
    else:
        out_raw = f32_bytes(out, n)
        got, want = f32_values(out_raw), f32_values(exp_raw)
        max_err = 0.0
        bad = 0
        for i, (a, b) in enumerate(zip(got, want)):
            err = abs(a - b)
            if not (err <= 1e-4 + 1e-4 * abs(b)):
                if bad < 5:
                    print("mismatch at %d: got %r, expected %r" % (i, a, b), file=sys.stderr)
                bad += 1
            if err > max_err or math.isnan(err):
                max_err = err
        print("compared %d elements: max abs error %.3g" % (n, max_err))
        if bad:
            ck.fail("output 0 differs from EXPECTED.npy")

    # The DLPack copy must equal the view.
    managed = P(DLManagedTensor)()
    if ck.ok(lib.kiln_session_get_output_dlpack(session, 0, ctypes.byref(managed)),
             "kiln_session_get_output_dlpack"):
        if not managed:
            ck.fail("kiln_session_get_output_dlpack gave NULL")
        else:
            m = managed.contents.dl_tensor
            if m.device.device_type != KDL_CPU:
                ck.fail("dlpack output should be on the CPU")
            if not view_ok or not is_float32(m) or shape_of(m) != out_shape or not is_compact(m):
                ck.fail("dlpack output dtype/shape differs from the view")
            elif f32_bytes(m, n) != f32_bytes(out, n):
                ck.fail("dlpack output data differs from the view")
            else:
                print("dlpack output equals the view")
            deleter = managed.contents.deleter
            if not deleter:
                ck.fail("dlpack output has no deleter")
            else:
                deleter(managed)

    # 6. One error path: an input of the wrong shape.
    wrong, keep_wrong = make_tensor([1, 3, 16, 16], b"")
    st = lib.kiln_session_set_input(session, b"input", ctypes.byref(wrong))
    if not st:
        ck.fail("kiln_session_set_input with shape [1, 3, 16, 16] should fail")
    else:
        code = lib.kiln_status_code(st)
        msg = text(lib.kiln_status_message(st))
        print("wrong shape: %s: %s" % (text(lib.kiln_status_code_name(code)), msg))
        if code != KILN_INVALID_ARGUMENT:
            ck.fail("wrong shape: the status code is %d, should be KILN_INVALID_ARGUMENT (3)" % code)
        if "input" not in msg:
            ck.fail('wrong shape: the message should mention "input"')
        lib.kiln_status_free(st)
    del keep, keep_wrong


def main(argv):
    if len(argv) != 5:
        print("usage: %s MODEL.onnx INPUT.npy EXPECTED.npy WORKDIR" % argv[0], file=sys.stderr)
        return 2
    try:
        lib = load_kiln()
    except (OSError, AttributeError) as e:
        print("FAIL: cannot load libkiln.so: %s" % e, file=sys.stderr)
        return 1
    ck = Checker(lib)
    handles = {}
    try:
        run(lib, ck, handles, *argv[1:])
    finally:
        # 7. Release everything (the session before its artifact).
        if "session" in handles:
            lib.kiln_session_release(handles.pop("session"))
        if "artifact" in handles:
            lib.kiln_artifact_release(handles.pop("artifact"))
        if "model" in handles:
            lib.kiln_model_release(handles.pop("model"))
    if ck.failures:
        print("python: %d check(s) failed" % ck.failures, file=sys.stderr)
        return 1
    print("python: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
