"""The Python package against the command line it wraps: same passes, plans, errors and files.

Run by CTest (tests/python/CMakeLists.txt) with PYTHONPATH at the package assembled in the build
tree, XOPT_CLI / XVIZ_CLI at the executables and XOPT_SHARED_DIR at the shared models.
"""

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import xopt
from xopt import _xopt

XOPT_CLI = os.environ["XOPT_CLI"]
XVIZ_CLI = os.environ["XVIZ_CLI"]
SOURCE = os.environ["XOPT_SOURCE_DIR"]
SHARED = os.environ.get("XOPT_SHARED_DIR", os.path.join(SOURCE, "..", "shared"))
TINY = os.path.join(SOURCE, "samples", "tiny_cnn", "model.onnx")
IN_CI = os.environ.get("CI", "") not in ("", "0", "false", "FALSE", "False", "no")


def shared_model(name):
    path = os.path.join(SHARED, "models", name, "model.onnx")
    if not os.path.exists(path):
        if IN_CI:
            pytest.fail("CI=%s but the shared model %s is missing" % (os.environ["CI"], path))
        pytest.skip("shared models not found at %s (XOPT_SHARED_DIR)" % SHARED)
    return path


def cli(*args, tool=XOPT_CLI):
    return subprocess.run([tool, *args], capture_output=True, text=True)


def cli_error(result, program="xopt"):
    lines = [l for l in result.stderr.splitlines() if l.startswith(program + ": error: ")]
    assert lines, result.stderr
    return lines[-1][len(program + ": error: "):]


def inputs_of(path):
    """The first test_data_set's inputs and outputs beside a model, as numpy arrays by name."""
    model = onnx.load(path, load_external_data=False)
    folder = os.path.join(os.path.dirname(path), "test_data_set_0")
    init = {i.name for i in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in init]
    feeds, expected = {}, []
    for i, name in enumerate(names):
        t = TensorProto()
        with open(os.path.join(folder, "input_%d.pb" % i), "rb") as f:
            t.ParseFromString(f.read())
        feeds[name] = onnx.numpy_helper.to_array(t)
    i = 0
    while os.path.exists(os.path.join(folder, "output_%d.pb" % i)):
        t = TensorProto()
        with open(os.path.join(folder, "output_%d.pb" % i), "rb") as f:
            t.ParseFromString(f.read())
        expected.append(onnx.numpy_helper.to_array(t))
        i += 1
    return feeds, expected


def op_counts(model):
    counts = {}
    for n in model.graph.node:
        counts[n.op_type] = counts.get(n.op_type, 0) + 1
    return counts


# ---- optimize: ModelProto, bytes, path; the same result as the CLI ----


@pytest.mark.parametrize("name,batch", [("resnet18", 1), ("bert_mini", None)])
def test_optimize_matches_cli(tmp_path, name, batch):
    path = shared_model(name)
    cli_out = str(tmp_path / "cli.opt.onnx")
    args = [path, "--passes=fold,fuse,plan", "-o", cli_out, "-q"]
    if batch:
        args += ["--batch", str(batch)]
    r = cli(*args)
    assert r.returncode == 0, r.stderr
    expected = onnx.load(cli_out)
    expected_plan = {p.key: p.value for p in expected.metadata_props}["xopt.memory_plan"]

    for given in (path, onnx.load(path), open(path, "rb").read()):
        got = xopt.optimize(given, passes="fold,fuse,plan", batch=batch)
        assert isinstance(got, onnx.ModelProto)
        assert len(got.graph.node) == len(expected.graph.node)
        assert op_counts(got) == op_counts(expected)
        plan = {p.key: p.value for p in got.metadata_props}["xopt.memory_plan"]
        assert json.loads(plan) == json.loads(expected_plan)
    assert len(got.graph.node) < len(onnx.load(path).graph.node)


def test_optimize_options_are_cli_flags(tmp_path):
    stats = tmp_path / "stats.json"
    got = xopt.optimize(TINY, passes="fold,fuse,plan", batch=2, align=64, io_in_arena=True,
                        disable_pass=["cse"], stats_json=str(stats), fold_max_bytes="4MiB")
    r = cli(TINY, "--passes=fold,fuse,plan", "--batch", "2", "--align", "64", "--io-in-arena",
            "--disable-pass", "cse", "--fold-max-bytes", "4MiB", "-o",
            str(tmp_path / "cli.onnx"), "-q")
    assert r.returncode == 0, r.stderr
    want = onnx.load(str(tmp_path / "cli.onnx"))
    assert op_counts(got) == op_counts(want)
    info = xopt.plan_info(got)
    assert info.alignment == 64 and info.io_in_arena and info.batch == 2
    assert json.loads(stats.read_text())  # written, as --stats-json writes it
    assert info.to_dict() == json.loads(
        {p.key: p.value for p in want.metadata_props}["xopt.memory_plan"])


def test_input_shapes_as_dict_and_as_cli_strings():
    a = xopt.optimize(TINY, passes="fold,fuse,plan", input_shapes={"image": (3, 3, 16, 16)})
    b = xopt.optimize(TINY, passes="fold,fuse,plan", input_shapes=["image=3x3x16x16"])
    assert xopt.plan_info(a).to_dict() == xopt.plan_info(b).to_dict()
    dims = [d.dim_value for d in a.graph.input[0].type.tensor_type.shape.dim]
    assert dims == [3, 3, 16, 16]


# ---- errors: the CLI's message and exit-code category ----


def test_unknown_pass_is_a_usage_error_with_the_cli_message():
    r = cli(TINY, "--passes=fold,no-such-pass", "-o", "/tmp/never.onnx")
    assert r.returncode == 1
    with pytest.raises(xopt.UsageError) as e:
        xopt.optimize(TINY, passes="fold,no-such-pass")
    assert e.value.exit_code == 1 and e.value.category == "usage"
    assert e.value.message == cli_error(r)
    assert str(e.value) == cli_error(r)


def test_bad_flag_value_is_a_usage_error():
    r = cli(TINY, "--align", "3", "-o", "/tmp/never.onnx")
    with pytest.raises(xopt.UsageError) as e:
        xopt.optimize(TINY, align=3)
    assert r.returncode == e.value.exit_code == 1
    assert e.value.message == cli_error(r)


def test_bad_model_is_exit_code_2_with_the_cli_message(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"this is not a model")
    r = cli(str(bad), "-o", str(tmp_path / "out.onnx"))
    assert r.returncode == 2
    with pytest.raises(xopt.BadModelError) as e:
        xopt.optimize(str(bad))
    assert e.value.exit_code == 2 and e.value.message == cli_error(r)
    with pytest.raises(xopt.BadModelError):
        xopt.optimize(b"this is not a model")
    with pytest.raises(xopt.XoptError) as e:
        xopt.plan_info(TINY)  # no plan stored: the CLI's code and message
    r = cli("plan-info", TINY)
    assert r.returncode == e.value.exit_code != 0 and e.value.message == cli_error(r)


def test_exit_code_categories():
    for code, cls in ((1, xopt.UsageError), (2, xopt.BadModelError), (3, xopt.PassFailedError)):
        e = xopt._errors.error_for(code, "m")
        assert isinstance(e, cls) and isinstance(e, xopt.XoptError) and e.exit_code == code


# ---- plan_info ----


def test_plan_info_is_what_plan_info_prints(tmp_path):
    out = str(tmp_path / "t.opt.onnx")
    xopt.optimize(TINY, passes="fold,fuse,plan", batch=2, output=out)
    info = xopt.plan_info(out)
    r = cli("plan-info", out)
    assert r.returncode == 0, r.stderr
    line = [l for l in r.stdout.splitlines() if l.startswith("arena ")][0]
    words = line.replace(",", "").split()
    assert int(words[1]) == info.arena_bytes
    assert int(words[words.index("bound") + 1]) == info.lower_bound
    assert int(words[words.index("naive") + 1]) == info.naive_bytes
    assert int(words[words.index("workspace") + 1]) == info.workspace_bytes
    assert info.batch == 2 and info.values and info.node_order
    assert info.arena_bytes >= info.lower_bound > 0
    assert info.breakdown.activations == info.arena_bytes
    for v in info.values:
        assert v.offset + v.size <= info.arena_bytes and v.first <= v.last
    d = info.to_dict()
    assert d["arena_bytes"] == info.arena_bytes and len(d["values"]) == len(info.values)
    assert xopt.plan_info(onnx.load(out)).to_dict() == d


def _matmul_chain(path, widths=(1024, 1024, 1024, 1024)):
    """x[1, 256] -> MatMul(w0) -> MatMul(w1) ...: float weights of 1, 4, 4 and 4 MiB by default."""
    rng = np.random.default_rng(0)
    nodes, inits, k, prev = [], [], 256, "x"
    for i, w in enumerate(widths):
        inits.append(onnx.numpy_helper.from_array(
            rng.standard_normal((k, w)).astype(np.float32), "w%d" % i))
        nodes.append(helper.make_node("MatMul", [prev, "w%d" % i], ["y%d" % i]))
        k, prev = w, "y%d" % i
    g = helper.make_graph(nodes, "chain",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 256])],
                          [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [1, k])], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)


def test_plan_info_breakdown_is_what_xopt_prints_under_offload(tmp_path):
    src, out = str(tmp_path / "chain.onnx"), str(tmp_path / "chain.opt.onnx")
    _matmul_chain(src)
    xopt.optimize(src, passes="fold,fuse,plan", output=out, mem_budget="75%")
    b = xopt.plan_info(out).breakdown
    r = cli("plan-info", out)
    assert r.returncode == 0, r.stderr
    rows = {l[2:30].strip(): int(l[30:47]) for l in r.stdout.splitlines()
            if l.startswith("  ") and l[30:47].strip().isdigit()}
    assert b.offloaded > 0 and b.staging > 0
    assert rows["parameters (resident)"] == b.parameters
    assert rows["offloaded parameters"] == b.offloaded
    assert rows["device total"] == b.device_total <= b.budget
    assert rows["total"] == b.total == b.device_total + b.cuda_context
    assert b.parameters + b.offloaded == (256 * 1024 + 3 * 1024 * 1024) * 4
    assert "memory_breakdown" not in xopt.plan_info(out).to_dict()


# ---- Session: the CPU executor's outputs, numpy and DLPack ----


@pytest.mark.parametrize("name", ["resnet18", "bert_mini"])
def test_session_outputs_equal_the_cpu_executor(tmp_path, name):
    path = shared_model(name)
    feeds, expected = inputs_of(path)
    out = str(tmp_path / "m.opt.onnx")
    xopt.optimize(path, passes="fold,fuse,plan", output=out, input_shapes={
        k: v.shape for k, v in feeds.items()})
    for model in (path, out):
        sess = xopt.Session(model)  # the thread count validate uses: the same bits
        assert sess.planned == (model == out)
        got = sess.run(None, feeds)
        ref = _xopt.run_reference(model, feeds)
        names = [o.name for o in sess.get_outputs()]
        assert len(got) == len(expected) == len(names)
        for n, g, e in zip(names, got, expected):
            assert isinstance(g, np.ndarray)
            np.testing.assert_array_equal(g, ref[n])  # the executor validate runs
            np.testing.assert_allclose(g, e, rtol=1e-3, atol=1e-4)  # the stored outputs


def test_session_is_shaped_like_onnxruntime():
    ort = pytest.importorskip("onnxruntime")
    feeds, _ = inputs_of(TINY)
    sess = xopt.Session(onnx.load(TINY))
    ref = ort.InferenceSession(TINY, providers=["CPUExecutionProvider"])
    assert [i.name for i in sess.get_inputs()] == [i.name for i in ref.get_inputs()]
    assert [o.name for o in sess.get_outputs()] == [o.name for o in ref.get_outputs()]
    name = ref.get_outputs()[0].name
    (got,) = sess.run([name], feeds)
    (want,) = ref.run([name], feeds)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    with pytest.raises(xopt.UsageError, match="is not an output of the graph"):
        sess.run(["nope"], feeds)
    with pytest.raises(xopt.XoptError, match="input"):
        sess.run(None, {"image": np.zeros((1, 2), np.float32)})


class DLPackOnly:
    """A tensor known only through the DLPack protocol (as a torch tensor is)."""

    def __init__(self, array):
        self._a = array

    def __dlpack__(self, **kwargs):
        return self._a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


def test_dlpack_in_and_out_on_the_cpu():
    feeds, _ = inputs_of(TINY)
    sess = xopt.Session(TINY)
    first = [sess.get_outputs()[0].name]
    (want,) = sess.run(first, feeds)
    (got,) = sess.run(first, {k: DLPackOnly(v) for k, v in feeds.items()})
    np.testing.assert_array_equal(got, want)
    (out,) = sess.run_dlpack(first, feeds)
    assert not isinstance(out, np.ndarray) and hasattr(out, "__dlpack__")
    assert out.__dlpack_device__()[0] == 1  # kDLCPU
    np.testing.assert_array_equal(np.from_dlpack(out), want)
    # A DLPack output feeds the next session without going through numpy.
    ident = helper.make_model(helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(want.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(want.shape))]),
        opset_imports=[helper.make_opsetid("", 17)])
    (again,) = xopt.Session(ident).run(None, {"x": out})
    np.testing.assert_array_equal(again, want)
    torch = sys.modules.get("torch")
    if torch is not None:  # only when torch happens to be installed
        (t,) = sess.run(first, {k: torch.from_numpy(v) for k, v in feeds.items()})
        np.testing.assert_array_equal(t, want)


def test_cuda_session(tmp_path):
    out = str(tmp_path / "t.opt.onnx")
    xopt.optimize(TINY, passes="fold,fuse,plan", batch=2, output=out)  # its test data's batch
    if not xopt.cuda_built():
        r = cli("validate", "--device", "cuda", TINY)
        with pytest.raises(xopt.UsageError) as e:
            xopt.Session(out, device="cuda")
        assert r.returncode == 1 and e.value.message == cli_error(r)
        pytest.skip("built without the CUDA executor: Session(device='cuda') refuses, as the CLI")
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    feeds, _ = inputs_of(TINY)
    (want, *_) = xopt.Session(out).run(None, feeds)
    sess = xopt.Session(out, device="cuda")
    (got, *_) = sess.run(None, {k: torch.from_numpy(v).cuda() for k, v in feeds.items()})
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_cuda_session_reads_and_writes_torch_cuda_tensors_in_place(tmp_path):
    # The twin: the CPU executor inside the same plan states the outputs (always runs).
    out = str(tmp_path / "t.opt.onnx")
    xopt.optimize(TINY, passes="fold,fuse,plan", batch=2, output=out)  # its test data's batch
    feeds, _ = inputs_of(TINY)
    want = xopt.Session(out).run(None, feeds)
    assert want and xopt.Session(out).host_transfer_bytes == 0
    if not xopt.cuda_built():
        pytest.skip("built without the CUDA executor: the GPU half needs it")
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device: the GPU half skipped")
    from torch.profiler import ProfilerActivity, profile
    sess = xopt.Session(out, device="cuda")
    cuda_feeds = {k: torch.from_numpy(v).cuda() for k, v in feeds.items()}
    sess.run_dlpack(None, cuda_feeds)
    torch.cuda.synchronize()
    before = sess.host_transfer_bytes
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        outs = sess.run_dlpack(None, cuda_feeds)
        tensors = [torch.from_dlpack(o) for o in outs]
        torch.cuda.synchronize()
    names = [e.name for e in prof.events() if "Memcpy" in e.name]
    assert not [n for n in names if "HtoD" in n or "DtoH" in n], names
    assert [n for n in names if "DtoD" in n], names  # the inputs were copied on the device
    assert sess.host_transfer_bytes == before
    for o, t, w in zip(outs, tensors, want):
        assert o.__dlpack_device__()[0] == 2 and t.is_cuda  # kDLCUDA
        assert torch.from_dlpack(o).data_ptr() == t.data_ptr()  # shared, not copied
        np.testing.assert_allclose(t.cpu().numpy(), w, rtol=1e-4, atol=1e-5)
    # Numpy feeds still take the staged path, and count what they move.
    sess.run(None, feeds)
    assert sess.host_transfer_bytes > before


# ---- validate ----


def test_validate_against_stored_outputs_and_two_models(tmp_path):
    res = xopt.validate(TINY)
    assert res.passed and res
    assert len(res.tables) == 1 and res.tables[0].outputs[0].ok
    assert "validation passed" in res.text
    opt = xopt.optimize(TINY, passes="fold,fuse,plan", batch=1)
    res = xopt.validate(TINY, opt, random_inputs=True, seed=3, batch=1)
    assert res.passed and "arena" in res.tables[0].title
    d = res.to_dict()
    assert d["tables"][0]["outputs"][0]["name"]


def test_validate_mismatch_is_a_result_with_the_cli_message(tmp_path):
    model = onnx.load(TINY)
    for init in model.graph.initializer:
        if init.data_type == TensorProto.FLOAT:
            a = onnx.numpy_helper.to_array(init) + 1.0
            init.CopyFrom(onnx.numpy_helper.from_array(a.astype(np.float32), init.name))
            break
    changed = str(tmp_path / "changed.onnx")
    onnx.save(model, changed)
    r = cli("validate", TINY, changed, "--random-inputs", "--batch", "1")
    assert r.returncode == 1
    res = xopt.validate(TINY, changed, random_inputs=True, batch=1)
    assert not res.passed and res.message == cli_error(r)
    assert not all(o.ok for t in res.tables for o in t.outputs)
    with pytest.raises(xopt.UsageError) as e:
        xopt.validate(TINY, rtol=-1)
    r = cli("validate", TINY, "--rtol", "-1")
    assert e.value.message == cli_error(r)


def test_validate_is_a_library_call(tmp_path, capfd):
    """xopt.validate prints nothing (its text is the result's, the CLI's stdout to the byte) and
    runs with the GIL released: two at once give what one gives."""
    import threading

    opt = str(tmp_path / "t.opt.onnx")
    xopt.optimize(TINY, passes="fold,fuse,plan", batch=1, output=opt)
    print("before-validate", flush=True)
    one = xopt.validate(TINY, opt, random_inputs=True, seed=5, batch=1)
    print("after-validate", flush=True)
    out = capfd.readouterr().out
    assert "before-validate" in out and "after-validate" in out
    assert "validation passed" not in out and "validation passed" in one.text
    r = cli("validate", TINY, opt, "--random-inputs", "--seed", "5", "--batch", "1")
    assert r.returncode == 0, r.stderr
    assert one.text == r.stdout
    texts, errors = [None, None], []

    def work(i):
        try:
            texts[i] = xopt.validate(TINY, opt, random_inputs=True, seed=5, batch=1).text
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert texts == [one.text, one.text]


# ---- viz: the same files as xviz ----


def test_viz_writes_what_xviz_writes(tmp_path):
    opt = str(tmp_path / "t.opt.onnx")
    xopt.optimize(TINY, passes="fold,fuse,plan", batch=2, output=opt)
    cases = [
        ("graph", lambda o: xopt.viz.graph(TINY, o, collapse_depth=1), ["graph", TINY], ".svg"),
        ("diff", lambda o: xopt.viz.diff(TINY, opt, o), ["diff", TINY, opt], ".html"),
        ("timeline", lambda o: xopt.viz.timeline(opt, o), ["timeline", opt], ".svg"),
        ("breakdown", lambda o: xopt.viz.breakdown([opt, opt], o, batch=[2]),
         ["breakdown", opt, opt, "--batch", "2"], ".svg"),
    ]
    for name, call, args, ext in cases:
        mine = str(tmp_path / ("py-" + name + ext))
        theirs = str(tmp_path / ("cli-" + name + ext))
        assert call(mine) == mine
        extra = ["--collapse-depth", "1"] if name == "graph" else []
        r = cli(*args, "-o", theirs, *extra, tool=XVIZ_CLI)
        assert r.returncode == 0, r.stderr
        with open(mine, "rb") as a, open(theirs, "rb") as b:
            assert a.read() == b.read(), name
    r = cli("graph", TINY, "-o", str(tmp_path / "x.txt"), tool=XVIZ_CLI)
    with pytest.raises(xopt.UsageError) as e:
        xopt.viz.graph(TINY, str(tmp_path / "x.txt"))
    assert r.returncode == 1 and e.value.message == cli_error(r, "xviz")
    with pytest.raises(xopt.BadModelError):
        xopt.viz.timeline(TINY, str(tmp_path / "t.svg"))  # no plan


# ---- python -m xopt ----


def test_python_m_xopt_is_the_cli():
    env = dict(os.environ)
    mine = subprocess.run([sys.executable, "-m", "xopt", "--list-passes"], capture_output=True,
                          text=True, env=env)
    theirs = cli("--list-passes")
    assert mine.returncode == theirs.returncode == 0
    assert mine.stdout == theirs.stdout and mine.stdout
    assert xopt.list_passes() == theirs.stdout.splitlines()
    mine = subprocess.run([sys.executable, "-m", "xopt", TINY, "--passes=nope"],
                          capture_output=True, text=True, env=env)
    theirs = cli(TINY, "--passes=nope")
    assert mine.returncode == theirs.returncode == 1
    assert mine.stderr == theirs.stderr


# ---- a model over 2 GiB, through external data ----


def test_model_over_2gib_round_trips_through_external_data(tmp_path):
    n = (1100 << 20) // 4  # two 1.1 GiB initializers: 2.2 GiB of weights
    need = 2 * n * 4 + (256 << 20)  # the output's data file; the input's is sparse
    free = shutil.disk_usage(str(tmp_path)).free
    if free < need:
        pytest.skip("needs %.1f GiB free under %s, has %.1f" % (need / 2**30, tmp_path,
                                                                  free / 2**30))
    data = tmp_path / "big.onnx.data"
    markers = {0: 1.5, n - 1: -2.0, n: 3.25, 2 * n - 1: 7.0}  # element index -> value
    with open(data, "wb") as f:
        f.truncate(2 * n * 4)  # sparse: zeros cost no disk
        for i, v in markers.items():
            f.seek(i * 4)
            f.write(np.float32(v).tobytes())
    inits = []
    for k, name in enumerate(("w1", "w2")):
        t = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=[n])
        t.data_location = TensorProto.EXTERNAL
        for key, value in (("location", data.name), ("offset", str(k * n * 4)),
                           ("length", str(n * 4))):
            e = t.external_data.add()
            e.key, e.value = key, value
        inits.append(t)
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w1"], ["s"]), helper.make_node("Add", ["s", "w2"], ["y"])],
        "big", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n])], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    src = tmp_path / "big.onnx"
    onnx.save(model, str(src))
    assert src.stat().st_size < 1 << 20

    out = tmp_path / "out" / "big.opt.onnx"
    out.parent.mkdir()
    got = xopt.optimize(str(src), passes="cleanup", output=str(out))
    assert len(got.graph.node) == 2
    total = 0
    for t in got.graph.initializer:
        assert t.data_location == TensorProto.EXTERNAL, t.name
        ext = {e.key: e.value for e in t.external_data}
        path = out.parent / ext["location"]
        offset, length = int(ext.get("offset", 0)), int(ext["length"])
        assert length == n * 4
        total += length
        with open(path, "rb") as f:
            base = 0 if t.name == "w1" else n
            for i, v in markers.items():
                if base <= i < base + n:
                    f.seek(offset + (i - base) * 4)
                    assert np.frombuffer(f.read(4), np.float32)[0] == v, (t.name, i)
    assert total > 2**31


def test_stub_names_the_public_api():
    # The stub declares every public name, and each function's parameters match the module's.
    import ast
    import inspect
    tree = ast.parse(open(os.path.join(os.path.dirname(xopt.__file__), "__init__.pyi")).read())
    declared = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            declared[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            declared[node.target.id] = node
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    declared[t.id] = node
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                declared[alias.asname or alias.name] = node
    for name in xopt.__all__:
        assert name in declared, name
        node, obj = declared[name], getattr(xopt, name)
        if isinstance(node, ast.FunctionDef) and inspect.isfunction(obj):
            stub_params = [a.arg for a in node.args.args + node.args.kwonlyargs]
            if node.args.vararg:
                stub_params.append(node.args.vararg.arg)
            if node.args.kwarg:
                stub_params.append(node.args.kwarg.arg)
            assert stub_params == list(inspect.signature(obj).parameters), name
    for name in ("optimize", "plan_info", "validate", "Session", "main", "viz"):
        assert getattr(xopt, name).__doc__ or name == "viz"


# ---- the pipeline library, called directly ----


def _without_times(doc):
    """A statistics document without its timings (which differ from run to run)."""
    if isinstance(doc, dict):
        return {k: _without_times(v) for k, v in doc.items() if k != "seconds"}
    if isinstance(doc, list):
        return [_without_times(v) for v in doc]
    return doc


def test_statistics_equal_the_cli_stats_json(tmp_path):
    stats = tmp_path / "cli.json"
    r = cli(TINY, "--passes=fold,fuse,plan", "--batch", "2", "--stats-json", str(stats), "-o",
            str(tmp_path / "cli.onnx"), "-q")
    assert r.returncode == 0, r.stderr
    outcome = xopt.run_pipeline(TINY, passes="fold,fuse,plan", batch=2)
    want = json.loads(stats.read_text())
    assert _without_times(outcome.stats.to_dict()) == _without_times(want)
    assert outcome.stats.nodes_after == want["nodes_after"] < want["nodes_before"]
    assert outcome.stats.find("fuse-conv-bn").runs >= 1
    assert outcome.plan is not None and outcome.report is not None
    assert outcome.plan.to_dict() == json.loads(
        {p.key: p.value for p in onnx.load(str(tmp_path / "cli.onnx")).metadata_props}[
            "xopt.memory_plan"])


def test_progress_callback_sees_every_pass():
    events = []
    outcome = xopt.run_pipeline(TINY, passes="fold,fuse,plan", batch=2, progress=events.append)
    runs = {}
    for e in events:
        if e.kind == "pass":
            runs[e.name] = runs.get(e.name, 0) + 1
            assert e.nodes > 0
    assert runs == {p.name: p.runs for p in outcome.stats.passes}
    steps = [e.name for e in events if e.kind == "step"]
    assert steps[0].startswith("loading ") and steps[-1].startswith("writing ")


def test_progress_callback_that_raises_stops_the_call():
    def boom(event):
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        xopt.optimize(TINY, passes="fold,fuse,plan", batch=2, progress=boom)


def test_two_threads_at_once_give_what_one_after_the_other_gives():
    import threading

    models = [(shared_model("resnet18"), 1), (shared_model("bert_mini"), None)]

    def summary(outcome):
        return (op_counts(outcome.model), outcome.plan.to_dict(),
                _without_times(outcome.stats.to_dict()), outcome.provenance)

    sequential = [summary(xopt.run_pipeline(m, passes="fold,fuse,plan", batch=b))
                  for m, b in models]
    results, errors = [None, None], []

    def work(i):
        try:
            m, b = models[i]
            results[i] = summary(xopt.run_pipeline(m, passes="fold,fuse,plan", batch=b))
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert results == sequential


def test_a_print_during_or_between_calls_is_never_captured(capfd):
    def loud(event):
        print("progress-seen:", event.name, flush=True)

    print("before-call", flush=True)
    xopt.optimize(TINY, passes="fold,fuse,plan", batch=2, progress=loud)
    print("between-calls", flush=True)
    xopt.list_passes()
    xopt.optimize(TINY, passes="cleanup")
    print("after-calls", flush=True)
    out = capfd.readouterr().out
    for marker in ("before-call", "between-calls", "after-calls", "progress-seen: loading",
                   "progress-seen: fuse-conv-bn"):
        assert marker in out, out


def test_list_passes_is_what_the_cli_prints():
    r = cli("--list-passes")
    assert r.returncode == 0, r.stderr
    assert xopt.list_passes() == r.stdout.splitlines()


def test_errors_carry_the_status_category():
    with pytest.raises(xopt.UsageError) as e:
        xopt.optimize(TINY, align=3)
    assert e.value.status == "invalid argument"
    with pytest.raises(xopt.UsageError) as e:
        xopt.optimize(TINY, no_such_option=1)
    assert "no_such_option" in e.value.message


def test_outcome_provenance_is_saved_in_the_model():
    outcome = xopt.run_pipeline(shared_model("resnet18"), passes="fold,fuse", batch=1)
    assert outcome.provenance
    stored = {p.key: p.value for p in outcome.model.metadata_props}["xopt.provenance"]
    assert json.loads(stored) == {"version": 1, "nodes": outcome.provenance}
    assert any(len(originals) >= 2 for originals in outcome.provenance.values())
