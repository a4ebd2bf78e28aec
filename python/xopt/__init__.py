"""xopt: optimizes ONNX models for serving (fold constants, fuse, plan activation memory).

The package calls xopt's C++ libraries in process (the pipeline that ``xopt`` itself calls); it
takes the ``xopt`` command line's pass names and options and raises its one-line errors
(``XoptError`` and its subclasses, one per exit code).

    import onnx, numpy as np, xopt
    opt = xopt.optimize("model.onnx", passes="fold,fuse,plan", batch=1)   # -> onnx.ModelProto
    print(xopt.plan_info(opt).arena_bytes)
    sess = xopt.Session(opt)
    (y,) = sess.run(None, {"input": np.zeros((1, 3, 224, 224), np.float32)})
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

import onnx

from . import _xopt
from ._errors import BadModelError, PassFailedError, UsageError, XoptError, error_from_stderr

__all__ = [
    "optimize", "run_pipeline", "Outcome", "Stats", "PassStats", "ProgressEvent", "plan_info", "validate", "Session", "main", "list_passes", "cuda_built",
    "PlanInfo", "PlannedValue", "Breakdown", "ValidationResult", "ValidationTable", "OutputDiff",
    "NodeArg", "XoptError", "UsageError", "BadModelError", "PassFailedError", "viz",
]
__version__ = "0.1.0"

ModelLike = Union[onnx.ModelProto, bytes, str, "os.PathLike[str]"]

# ModelProtos at least this large are written with their weights as external data (protobuf
# cannot serialize a message of 2 GiB or more).
_PROTO_LIMIT = 2**31 - 1


class _ModelFile:
    """A path for a model given as a path, bytes or a ModelProto (written to a temporary folder)."""

    def __init__(self, model: ModelLike, tmp: str, name: str = "model.onnx") -> None:
        if isinstance(model, (str, os.PathLike)):
            self.path = os.fspath(model)
            return
        self.path = os.path.join(tmp, name)
        if isinstance(model, (bytes, bytearray, memoryview)):
            with open(self.path, "wb") as f:
                f.write(model)
            return
        if isinstance(model, onnx.ModelProto):
            if model.ByteSize() >= _PROTO_LIMIT:
                onnx.save_model(model, self.path, save_as_external_data=True,
                                location=name + ".data", size_threshold=1024)
            else:
                with open(self.path, "wb") as f:
                    f.write(model.SerializeToString())
            return
        raise UsageError("model: expected an onnx.ModelProto, bytes or a path, got "
                         + type(model).__name__)


def _dims(shape: Union[str, Iterable[int]]) -> str:
    return shape if isinstance(shape, str) else "x".join(str(int(d)) for d in shape)


def _shape_args(input_shapes: Union[None, Mapping[str, Any], Sequence[str]]) -> List[str]:
    """``{"x": (1, 3, 224, 224)}`` or ``["x=1x3x224x224"]`` -> repeated ``--input-shape``."""
    if not input_shapes:
        return []
    args: List[str] = []
    if isinstance(input_shapes, Mapping):
        for name, shape in input_shapes.items():
            if isinstance(shape, tuple) and shape and not isinstance(shape[0], (int,)):
                shape = ":".join(_dims(s) for s in shape)  # a range: (min, max) or (min, opt, max)
            args += ["--input-shape", "%s=%s" % (name, _dims(shape))]
    else:
        for s in input_shapes:
            args += ["--input-shape", s]
    return args


def _shape_strings(input_shapes: Union[None, Mapping[str, Any], Sequence[str]]) -> List[str]:
    """The ``--input-shape`` values of ``input_shapes`` (see _shape_args)."""
    args = _shape_args(input_shapes)
    return [args[i + 1] for i in range(0, len(args), 2)]


def _option_args(options: Mapping[str, Any]) -> List[str]:
    """Keyword options -> flags: ``fold_max_bytes="4MiB"`` -> ``--fold-max-bytes 4MiB``, ``True``
    -> a bare flag, ``False``/``None`` -> nothing, a list -> the flag repeated."""
    args: List[str] = []
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            args.append(flag)
        elif isinstance(value, (list, tuple)):
            for v in value:
                args += [flag, str(v)]
        else:
            args += [flag, str(value)]
    return args


# Keywords of ``optimize`` that ``xopt --validate`` takes; the rest go to the pipeline.
_VALIDATE_KEYS = ("data", "input", "input_range", "seed", "rtol", "atol", "random_inputs",
                  "no_plan")


@dataclass
class ProgressEvent:
    """What the pipeline is doing: ``kind`` "step" (a long step: "loading m.onnx",
    "writing out.onnx", ...) or "pass" (a pass begins, on a graph of ``nodes`` nodes)."""

    kind: str
    name: str
    nodes: int = 0


@dataclass
class PassStats:
    """One pass of the pipeline: how often it ran and changed the model, and its counters."""

    name: str
    runs: int
    changed: int
    nodes_removed: int
    nodes_added: int
    seconds: float
    counters: Dict[str, int] = field(default_factory=dict)


@dataclass
class Stats:
    """The pipeline's statistics, as ``xopt --stats-json`` writes them (``to_dict()`` is that
    document)."""

    pipeline: str
    changed: bool
    nodes_before: int
    nodes_after: int
    initializers_before: int
    initializers_after: int
    seconds: float
    passes: List[PassStats]
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    def find(self, name: str) -> PassStats:
        """The statistics of the pass ``name`` (KeyError when it did not run)."""
        for p in self.passes:
            if p.name == name:
                return p
        raise KeyError(name)

    def to_dict(self) -> Dict[str, Any]:
        return json.loads(json.dumps(self.raw))


def _stats_from_json(doc: Dict[str, Any]) -> Stats:
    keys = PassStats.__dataclass_fields__
    passes = [PassStats(**{k: v for k, v in p.items() if k in keys}) for p in doc["passes"]]
    return Stats(pipeline=doc["pipeline"], changed=doc["changed"],
                 nodes_before=doc["nodes_before"], nodes_after=doc["nodes_after"],
                 initializers_before=doc["initializers_before"],
                 initializers_after=doc["initializers_after"], seconds=doc["seconds"],
                 passes=passes, raw=doc)


@dataclass
class Outcome:
    """What one run of the pipeline produced (``xopt.run_pipeline``): the optimized model, the
    per-pass statistics, the memory plan and its report (with the plan group), the offload
    schedule (with ``mem_budget``), the provenance of every node a pass made (its name -> the
    original nodes it replaced), and with ``validate=True`` the validation's result."""

    model: onnx.ModelProto
    stats: Stats
    plan: Optional["PlanInfo"]
    report: Optional[Dict[str, Any]]
    offload: Optional[Dict[str, Any]]
    provenance: Dict[str, List[str]]
    max_batch: Optional[int] = None
    validation: Optional["ValidationResult"] = None
    output: Optional[str] = None


def _progress_callback(progress: Any) -> Any:
    if progress is None:
        return None
    if not callable(progress):
        raise UsageError("progress: expected a callable taking a ProgressEvent")
    return lambda kind, name, nodes: progress(ProgressEvent(kind, name, int(nodes)))


def run_pipeline(model: ModelLike, passes: str = "fold,fuse,plan",
                 input_shapes: Union[None, Mapping[str, Any], Sequence[str]] = None,
                 batch: Optional[int] = None,
                 output: Optional[Union[str, "os.PathLike[str]"]] = None, *,
                 progress: Any = None, **options: Any) -> Outcome:
    """Runs xopt's pipeline library on ``model`` (the same call ``xopt`` makes) and returns its
    :class:`Outcome`. Arguments as for :func:`optimize`; ``progress`` is called with a
    :class:`ProgressEvent` at every long step and every pass start, from the calling thread. The
    GIL is released while the pipeline runs, so other threads (another optimize) run meanwhile.
    """
    validation = {k: options.pop(k) for k in _VALIDATE_KEYS if k in options}
    validate_after = bool(options.pop("validate", False))
    options.pop("quiet", None)
    with tempfile.TemporaryDirectory(prefix="xopt-") as tmp:
        src = _ModelFile(model, tmp)
        out = os.fspath(output) if output is not None else os.path.join(tmp, "model.opt.onnx")
        request: Dict[str, Any] = dict(options, model=src.path, passes=passes, output=out)
        request["input_shape"] = _shape_strings(input_shapes)
        if batch is not None:
            request["batch"] = int(batch)
        if "disable_pass" in request and isinstance(request["disable_pass"], str):
            request["disable_pass"] = [request["disable_pass"]]
        raw = _xopt.optimize(request, _progress_callback(progress))
        result = _outcome_from(raw, onnx.load(out, load_external_data=output is None))
        if validate_after:
            device = {k: options[k] for k in ("device", "tf32") if k in options}
            result.validation = validate(src.path, out, input_shapes=input_shapes, batch=batch,
                                         **device, **validation)
            if not result.validation:
                raise UsageError(result.validation.message, 1, "mismatch")
        result.output = os.fspath(output) if output is not None else None
        return result


def _outcome_from(raw: Dict[str, Any], model: onnx.ModelProto) -> Outcome:
    plan = _plan_from_json(json.loads(raw["plan"])) if raw["plan"] is not None else None
    return Outcome(model=model, stats=_stats_from_json(json.loads(raw["stats"])), plan=plan,
                   report=json.loads(raw["report"]) if raw["report"] is not None else None,
                   offload=json.loads(raw["offload"]) if raw["offload"] is not None else None,
                   provenance={k: list(v) for k, v in raw["provenance"].items()},
                   max_batch=raw["max_batch"])


def optimize(model: ModelLike, passes: str = "fold,fuse,plan",
             input_shapes: Union[None, Mapping[str, Any], Sequence[str]] = None,
             batch: Optional[int] = None, output: Optional[Union[str, "os.PathLike[str]"]] = None,
             *, progress: Any = None, **options: Any) -> onnx.ModelProto:
    """Optimizes ``model`` as ``xopt --passes=PASSES MODEL`` does and returns the result.

    ``model`` is an ``onnx.ModelProto``, the bytes of one, or a path (external data beside it is
    read from there). ``input_shapes`` binds inputs' symbolic dims (``{"x": (1, 3, 224, 224)}``, a
    range as ``{"x": ((1, 3, 48, 32), (1, 3, 48, 2048))}``, or the CLI's ``["x=1x3x224x224"]``);
    ``batch`` binds every symbolic leading dim. Other keywords are the CLI's flags with ``_`` for
    ``-``: ``disable_pass=["cse"]``, ``fold_max_bytes="4MiB"``, ``align=64``, ``io_in_arena=True``,
    ``external_data="1KiB"``, ``max_batch="24GiB"``, ``report="out/"``, ``stats_json="s.json"``,
    ``verify_each=True``, ``validate=True``, ``device="cuda"``...; ``progress`` a callable taking
    a :class:`ProgressEvent` (e.g. a tqdm bar's update).

    The pipeline library runs in process with the GIL released (:func:`run_pipeline` returns its
    whole outcome: statistics, plan, report, provenance). With ``output`` the model is also
    written there (weights over 2 GiB, or as ``external_data`` says, to ``<output>.data``) and the
    returned ModelProto refers to that external data instead of holding it. Raises
    ``UsageError`` (exit code 1), ``BadModelError`` (2) or ``PassFailedError`` (3) with the
    command line's message.
    """
    return run_pipeline(model, passes, input_shapes, batch, output, progress=progress,
                        **options).model


def list_passes() -> List[str]:
    """``xopt --list-passes``: one line per group and pass (name, then what it does)."""
    entries = _xopt.registry()
    width = max((len(e[0]) for e in entries), default=0)
    lines = []
    for name, kind, description, fixpoint, members in entries:
        if kind == "group":
            lines.append("%-*s  group%s [%s]: %s" % (width, name, ", to a fixpoint" if fixpoint
                                                     else "", ", ".join(members) or "empty",
                                                     description))
        else:
            lines.append("%-*s  %s" % (width, name, description))
    return lines


def cuda_built() -> bool:
    """Whether this build carries the CUDA executor (``Session(device="cuda")``)."""
    return bool(_xopt.cuda_built())


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The ``xopt`` command line (``python -m xopt``): prints as it does, returns its exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    sys.stdout.flush()
    sys.stderr.flush()
    return int(_xopt.run_cli(["xopt", *args]))


def _console_main() -> None:
    sys.exit(main())


# ---- plan_info ----


@dataclass
class PlannedValue:
    """One value of the arena: bytes [offset, offset + size), live from step first to last."""

    name: str
    offset: int
    size: int
    bytes: int
    first: int
    last: int
    alias_of: str = ""
    alias_kind: str = ""
    role: str = "activation"


@dataclass
class Breakdown:
    """The memory breakdown ``xopt`` prints (bytes): the device buckets as the executor allocates
    them (``parameters`` counts the weights resident on the device) and, beside them, the host
    bucket (``offloaded``: weights kept in pinned host memory by ``--mem-budget``). Estimates are
    marked as such."""

    cuda_context: int
    parameters: int
    activations: int
    workspace: int
    io: int = 0
    staging: int = 0
    offloaded: int = 0
    offloaded_weights: int = 0
    budget: int = 0
    cuda_context_estimated: bool = True
    workspace_estimated: bool = True
    device: str = ""

    @property
    def device_total(self) -> int:
        """What the device holds besides the CUDA context (what ``--mem-budget`` counts)."""
        return self.parameters + self.staging + self.activations + self.workspace + self.io

    @property
    def total(self) -> int:
        """The device total with the CUDA context."""
        return self.device_total + self.cuda_context

    @property
    def host_total(self) -> int:
        return self.offloaded


def _breakdown_from_json(doc: Dict[str, Any]) -> Breakdown:
    """The "memory_breakdown" document (planner/memory_breakdown.h) beside the plan."""
    dev, host = doc["device"], doc["host"]
    return Breakdown(cuda_context=dev["cuda_context"]["bytes"],
                     parameters=dev["parameters"]["bytes"],
                     activations=dev["activations"]["bytes"],
                     workspace=dev["workspace"]["bytes"], io=dev["io"]["bytes"],
                     staging=dev["staging"]["bytes"],
                     offloaded=host["offloaded_parameters"]["bytes"],
                     offloaded_weights=host["offloaded_parameters"]["weights"],
                     budget=doc.get("budget", {}).get("bytes", 0),
                     cuda_context_estimated=dev["cuda_context"]["estimated"],
                     workspace_estimated=dev["workspace"]["estimated"],
                     device=doc.get("measured_on", ""))


@dataclass
class PlanInfo:
    """The memory plan stored in an optimized model (what ``xopt plan-info`` prints)."""

    arena_bytes: int
    lower_bound: int
    naive_bytes: int
    workspace_bytes: int
    alignment: int
    batch: int
    strategy: str
    io_in_arena: bool
    node_order: List[str]
    values: List[PlannedValue]
    breakdown: Breakdown
    version: int = 0
    input_naive_bytes: int = 0
    proven_optimal: bool = False
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def ratio_to_lower_bound(self) -> float:
        return 1.0 if self.lower_bound == 0 else self.arena_bytes / self.lower_bound

    def value(self, name: str) -> PlannedValue:
        """The planned value named ``name`` (KeyError when there is none)."""
        for v in self.values:
            if v.name == name:
                return v
        raise KeyError(name)

    def to_dict(self) -> Dict[str, Any]:
        """The plan's JSON document (``metadata_props["xopt.memory_plan"]``) as a dict."""
        return json.loads(json.dumps(self.raw))


def _plan_from_json(doc: Dict[str, Any]) -> PlanInfo:
    keys = PlannedValue.__dataclass_fields__
    values = [PlannedValue(**{k: v for k, v in e.items() if k in keys}) for e in doc["values"]]
    doc = dict(doc)
    memory = doc.pop("memory_breakdown", None)
    if memory is not None:
        breakdown = _breakdown_from_json(memory)
    else:
        bkeys = Breakdown.__dataclass_fields__
        breakdown = Breakdown(**{k: v for k, v in doc["breakdown"].items() if k in bkeys})
    return PlanInfo(arena_bytes=doc["arena_bytes"], lower_bound=doc["lower_bound"],
                    naive_bytes=doc["naive_bytes"], workspace_bytes=doc["workspace_bytes"],
                    alignment=doc["alignment"], batch=doc["batch"], strategy=doc["strategy"],
                    io_in_arena=doc["io_in_arena"], node_order=list(doc["node_order"]),
                    values=values, breakdown=breakdown, version=doc.get("version", 0),
                    input_naive_bytes=doc.get("input_naive_bytes", 0),
                    proven_optimal=doc.get("proven_optimal", False), raw=doc)


def plan_info(model: ModelLike) -> PlanInfo:
    """The memory plan stored in ``model`` (optimized with the plan group), checked as
    ``xopt plan-info`` checks it; raises ``BadModelError`` with its message when there is none."""
    with tempfile.TemporaryDirectory(prefix="xopt-") as tmp:
        return _plan_from_json(json.loads(_xopt.plan_json(_ModelFile(model, tmp).path)))


# ---- validate ----


@dataclass
class OutputDiff:
    """One output compared: passes when max_abs <= atol + rtol * max_ref (other types: equal)."""

    name: str
    dtype: str
    shape: List[int]
    ok: bool
    max_abs: float
    max_ref: float
    max_rel: float
    cosine: float
    unequal: int
    worst_index: int
    nonfinite_mismatch: int
    problem: str = ""


@dataclass
class ValidationTable:
    """One comparison (one data set; what is compared with what) and its rows, one per output."""

    title: str
    outputs: List[OutputDiff]


@dataclass
class ValidationResult:
    """What ``xopt validate`` found: ``passed``, the tables, the printed report and, on a mismatch,
    the command line's message (``validation failed: N of M outputs outside tolerance``)."""

    passed: bool
    tables: List[ValidationTable]
    text: str
    message: str = ""

    def __bool__(self) -> bool:
        return self.passed

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)


def validate(a: ModelLike, b: Optional[ModelLike] = None, *,
             input_shapes: Union[None, Mapping[str, Any], Sequence[str]] = None,
             batch: Optional[int] = None, **options: Any) -> ValidationResult:
    """Runs ``a`` (and ``b``) on the same inputs and compares every output, as
    ``xopt validate A [B]``: ``b`` against ``a``, or ``a`` against the expected outputs stored
    beside it. Keywords are the CLI's flags: ``data="dir"``, ``input=["x=x.pb"]``,
    ``input_range=["ids=0:99"]``, ``seed=3``, ``rtol=1e-4``, ``atol=1e-5``,
    ``random_inputs=True``, ``no_plan=True``, ``device="cuda"``. A mismatch is a result with
    ``passed`` False; anything else wrong raises like the CLI.
    """
    with tempfile.TemporaryDirectory(prefix="xopt-") as tmp:
        request: Dict[str, Any] = dict(options, a=_ModelFile(a, tmp, "a.onnx").path)
        if b is not None:
            request["b"] = _ModelFile(b, tmp, "b.onnx").path
        request["input_shape"] = _shape_strings(input_shapes)
        if batch is not None:
            request["batch"] = int(batch)
        passed, tables, text, verdict = _xopt.validate(request)
    result_tables = [ValidationTable(title, [OutputDiff(**row) for row in rows])
                     for title, rows in tables]
    if passed:
        return ValidationResult(True, result_tables, text)
    return ValidationResult(False, result_tables, text, verdict)


# ---- Session ----


@dataclass
class NodeArg:
    """A graph input or output, as onnxruntime's ``NodeArg``: name, ONNX type, shape (symbolic
    dims as their names, unknown ones as None)."""

    name: str
    type: str
    shape: List[Union[int, str, None]]


class Session:
    """Runs a model with xopt's executors, shaped like ``onnxruntime.InferenceSession``.

    ``model`` is a ModelProto, bytes or a path. A model carrying a memory plan runs inside it
    (one arena at the planned offsets) unless ``use_plan`` is False. ``device="cuda"`` runs a
    planned model on the GPU in a build with the CUDA executor (``xopt.cuda_built()``); otherwise
    it raises the CLI's message.

    ``run(output_names, feeds)`` takes numpy arrays (or any DLPack tensor: a torch tensor, CPU or,
    in a CUDA build, on the GPU) and returns numpy arrays; ``run_dlpack`` returns DLPack-capable
    arrays (``torch.from_dlpack``, ``np.from_dlpack``) that share the result's memory.

    On ``device="cuda"``, feeds that hold a CUDA tensor are read where they lie: each input is
    copied device-to-device into its planned slot, and ``run_dlpack`` writes each output into a new
    CUDA array (``torch.from_dlpack`` takes it without a copy), so no byte goes through the host
    (``host_transfer_bytes`` stays unchanged). The work follows what ``stream`` has queued (a
    ``torch.cuda.Stream`` or its ``cuda_stream`` handle; default 0, the legacy default stream,
    which is PyTorch's unless you changed it) and the call returns when the outputs are written.
    """

    def __init__(self, model: ModelLike, device: str = "cpu", *, use_plan: bool = True,
                 threads: int = 0) -> None:
        # The model is read while the temporary file exists; the session keeps what it needs.
        with tempfile.TemporaryDirectory(prefix="xopt-") as tmp:
            self._session = _xopt.Session(_ModelFile(model, tmp).path, device, use_plan, threads)

    @property
    def device(self) -> str:
        return self._session.device

    @property
    def planned(self) -> bool:
        """Whether runs happen inside the model's stored memory plan."""
        return self._session.planned

    def get_inputs(self) -> List[NodeArg]:
        return [NodeArg(*t) for t in self._session.inputs()]

    def get_outputs(self) -> List[NodeArg]:
        return [NodeArg(*t) for t in self._session.outputs()]

    @staticmethod
    def _feeds(feeds: Mapping[str, Any]) -> Dict[str, Any]:
        import numpy as np

        out: Dict[str, Any] = {}
        for name, value in feeds.items():
            if hasattr(value, "__dlpack__") and not isinstance(value, np.ndarray):
                out[name] = value
            else:
                out[name] = np.ascontiguousarray(value)
        return out

    @property
    def host_transfer_bytes(self) -> int:
        """Bytes of graph inputs and outputs moved between host and GPU by this session's runs so
        far (0 on the CPU)."""
        return self._session.host_transfer_bytes

    @staticmethod
    def _stream(stream: Any) -> int:
        handle = getattr(stream, "cuda_stream", stream)
        return int(handle or 0)

    def run(self, output_names: Optional[Sequence[str]], input_feed: Mapping[str, Any],
            run_options: Any = None, *, stream: Any = 0) -> List[Any]:
        """The outputs named (all, in graph order, when None) as numpy arrays."""
        return self._session.run(list(output_names) if output_names else None,
                                 self._feeds(input_feed), True, self._stream(stream))

    def run_dlpack(self, output_names: Optional[Sequence[str]],
                   input_feed: Mapping[str, Any], *, stream: Any = 0) -> List[Any]:
        """Like ``run``, the outputs as DLPack-capable arrays (no copy of the results; on the GPU
        when the feeds hold a CUDA tensor)."""
        return self._session.run(list(output_names) if output_names else None,
                                 self._feeds(input_feed), False, self._stream(stream))


from . import viz  # noqa: E402  (viz uses the helpers above)
