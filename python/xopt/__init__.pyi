"""Type stub of the xopt package (its functions are documented in xopt/__init__.py)."""

import os
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Union

import numpy as np
import onnx

from . import viz as viz
from ._errors import BadModelError as BadModelError
from ._errors import PassFailedError as PassFailedError
from ._errors import UsageError as UsageError
from ._errors import XoptError as XoptError

__version__: str
__all__: List[str]

ModelLike = Union[onnx.ModelProto, bytes, str, os.PathLike[str]]
InputShapes = Union[None, Mapping[str, Union[str, Iterable[int], Sequence[Iterable[int]]]],
                    Sequence[str]]

@dataclass
class ProgressEvent:
    kind: str
    name: str
    nodes: int = 0

@dataclass
class PassStats:
    name: str
    runs: int
    changed: int
    nodes_removed: int
    nodes_added: int
    seconds: float
    counters: Dict[str, int] = ...

@dataclass
class Stats:
    pipeline: str
    changed: bool
    nodes_before: int
    nodes_after: int
    initializers_before: int
    initializers_after: int
    seconds: float
    passes: List[PassStats]
    raw: Dict[str, Any] = ...
    def find(self, name: str) -> PassStats: ...
    def to_dict(self) -> Dict[str, Any]: ...

@dataclass
class Outcome:
    model: onnx.ModelProto
    stats: Stats
    plan: Optional[PlanInfo]
    report: Optional[Dict[str, Any]]
    offload: Optional[Dict[str, Any]]
    provenance: Dict[str, List[str]]
    max_batch: Optional[int] = None
    validation: Optional[ValidationResult] = None
    output: Optional[str] = None

def run_pipeline(model: ModelLike, passes: str = "fold,fuse,plan",
                 input_shapes: InputShapes = None, batch: Optional[int] = None,
                 output: Optional[Union[str, os.PathLike[str]]] = None, *,
                 progress: Optional[Callable[[ProgressEvent], Any]] = None,
                 **options: Any) -> Outcome: ...
def optimize(model: ModelLike, passes: str = "fold,fuse,plan",
             input_shapes: InputShapes = None, batch: Optional[int] = None,
             output: Optional[Union[str, os.PathLike[str]]] = None, *,
             progress: Optional[Callable[[ProgressEvent], Any]] = None,
             **options: Any) -> onnx.ModelProto: ...
def list_passes() -> List[str]: ...
def cuda_built() -> bool: ...
def main(argv: Optional[Sequence[str]] = None) -> int: ...

@dataclass
class PlannedValue:
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
    def device_total(self) -> int: ...
    @property
    def total(self) -> int: ...
    @property
    def host_total(self) -> int: ...

@dataclass
class PlanInfo:
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
    raw: Dict[str, Any] = ...
    @property
    def ratio_to_lower_bound(self) -> float: ...
    def value(self, name: str) -> PlannedValue: ...
    def to_dict(self) -> Dict[str, Any]: ...

def plan_info(model: ModelLike) -> PlanInfo: ...

@dataclass
class OutputDiff:
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
    title: str
    outputs: List[OutputDiff]

@dataclass
class ValidationResult:
    passed: bool
    tables: List[ValidationTable]
    text: str
    message: str = ""
    def __bool__(self) -> bool: ...
    def to_dict(self) -> Dict[str, Any]: ...

def validate(a: ModelLike, b: Optional[ModelLike] = None, *, input_shapes: InputShapes = None,
             batch: Optional[int] = None, **options: Any) -> ValidationResult: ...

@dataclass
class NodeArg:
    name: str
    type: str
    shape: List[Union[int, str, None]]

class Session:
    def __init__(self, model: ModelLike, device: str = "cpu", *, use_plan: bool = True,
                 threads: int = 0) -> None: ...
    @property
    def device(self) -> str: ...
    @property
    def planned(self) -> bool: ...
    def get_inputs(self) -> List[NodeArg]: ...
    def get_outputs(self) -> List[NodeArg]: ...
    @property
    def host_transfer_bytes(self) -> int: ...
    def run(self, output_names: Optional[Sequence[str]], input_feed: Mapping[str, Any],
            run_options: Any = None, *, stream: Any = 0) -> List[np.ndarray]: ...
    def run_dlpack(self, output_names: Optional[Sequence[str]],
                   input_feed: Mapping[str, Any], *, stream: Any = 0) -> List[Any]: ...
