"""Drawings of models and plans, as ``xviz`` writes them (the same files, by the same code).

    xopt.viz.graph("model.onnx", "graph.svg", collapse_depth=2)
    xopt.viz.diff("model.onnx", opt, "diff.html")
    xopt.viz.timeline(opt, "timeline.html")
    xopt.viz.breakdown([opt], "breakdown.svg", batch=[1, 8, 32])

Each calls the library functions ``xviz`` calls (the GIL released while drawing), returns the
output path and raises ``UsageError`` (1) or ``BadModelError`` (2) with xviz's message.
"""

from __future__ import annotations

import os
import tempfile
from typing import List, Optional, Sequence, Union

from . import _xopt

__all__ = ["graph", "diff", "timeline", "breakdown"]

PathLike = Union[str, "os.PathLike[str]"]


def _batches(batch: Optional[Sequence[int]]) -> List[int]:
    return [int(b) for b in batch] if batch else []


def _model_path(model, tmp: str, name: str) -> str:
    from . import _ModelFile

    return _ModelFile(model, tmp, name).path


def graph(model, output: PathLike, *, collapse_depth: Optional[int] = None,
          show_weights: bool = False) -> str:
    """``xviz graph MODEL -o OUTPUT``: the graph as .svg, .png, .pdf or .dot."""
    with tempfile.TemporaryDirectory(prefix="xopt-") as tmp:
        _xopt.viz_graph(_model_path(model, tmp, "model.onnx"), os.fspath(output),
                        -1 if collapse_depth is None else int(collapse_depth), bool(show_weights))
    return os.fspath(output)


def diff(a, b, output: PathLike) -> str:
    """``xviz diff A B -o OUTPUT``: what changed from A to B, as .svg, .html, .png, .pdf, .dot."""
    with tempfile.TemporaryDirectory(prefix="xopt-") as tmp:
        _xopt.viz_diff(_model_path(a, tmp, "a.onnx"), _model_path(b, tmp, "b.onnx"),
                       os.fspath(output))
    return os.fspath(output)


def timeline(model, output: PathLike, *, batch: Optional[Sequence[int]] = None) -> str:
    """``xviz timeline MODEL -o OUTPUT [--batch ...]``: the stored plan (.svg, .png, .html)."""
    with tempfile.TemporaryDirectory(prefix="xopt-") as tmp:
        _xopt.viz_timeline(_model_path(model, tmp, "model.onnx"), os.fspath(output),
                           _batches(batch))
    return os.fspath(output)


def breakdown(models, output: PathLike, *, batch: Optional[Sequence[int]] = None) -> str:
    """``xviz breakdown MODEL... -o OUTPUT [--batch ...]``: memory buckets as stacked bars."""
    if not isinstance(models, (list, tuple)):
        models = [models]
    with tempfile.TemporaryDirectory(prefix="xopt-") as tmp:
        paths = [_model_path(m, tmp, "model%d.onnx" % i) for i, m in enumerate(models)]
        _xopt.viz_breakdown(paths, os.fspath(output), _batches(batch))
    return os.fspath(output)
