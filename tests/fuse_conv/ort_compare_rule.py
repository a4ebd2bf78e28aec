"""The output comparison rule of tests/util/compare_outputs.h, for the onnxruntime check scripts
in this folder."""
import numpy as np


def close(got, want, rtol=1e-4, atol=1e-5, min_cosine=0.9999):
    """tests/util/compare_outputs.h's rule: max|a-b| <= atol + rtol * max|ref|, cosine at least
    min_cosine, NaN or a non-finite value where the reference is finite a mismatch, and a reference
    whose max|ref| is at least 100 x atol (a tinier one passes any output near zero)."""
    g = np.asarray(got, dtype=np.float64).ravel()
    w = np.asarray(want, dtype=np.float64).ravel()
    if g.shape != w.shape or not np.all(np.isfinite(w)):
        return False
    scale = float(np.max(np.abs(w))) if w.size else 0.0
    if scale <= 0 or scale < 100 * atol or not np.all(np.isfinite(g)):
        return False
    if float(np.max(np.abs(g - w))) > atol + rtol * scale:
        return False
    ng, nw = float(np.linalg.norm(g)), float(np.linalg.norm(w))
    return ng > 0 and float(np.dot(g, w)) / (ng * nw) >= min_cosine
