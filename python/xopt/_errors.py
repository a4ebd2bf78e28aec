"""Exceptions raised by xopt: one per exit-code category of the ``xopt`` command line."""

from __future__ import annotations

import re
from typing import List, Optional

# "node 'fused_1 (from conv1, bn1)' (Conv)" or "node 'conv1' (Conv)": how the core names a node
# in an error (ir::Node::describe), with the user's original names when a pass made the node.
_NODE = re.compile(r"node '([^']*?)(?: \(from ([^)]*)\))?' \(")


class XoptError(Exception):
    """An error of the xopt core.

    ``message`` is the command line's one-line error (what ``xopt`` prints after
    ``xopt: error:``), ``exit_code`` the code it exits with (1 usage, 2 bad model or file,
    3 a pass failed) and ``category`` its name ("usage", "bad-model", "pass-failed").
    ``status`` is the core's own category of the error ("invalid argument", "invalid model",
    "unsupported", "i/o error", "pass failed", "mismatch", "internal error"; "" when the error
    came from a command line's text). Where the message names a node, ``node`` is its name and
    ``original_nodes`` the user's nodes it was made from (``[node]`` for an original one).
    """

    exit_code: int = 0
    category: str = "error"

    def __init__(self, message: str, exit_code: int | None = None, status: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        if exit_code is not None:
            self.exit_code = exit_code
        match = _NODE.search(message)
        self.node: Optional[str] = match.group(1) if match else None
        self.original_nodes: List[str] = []
        if match:
            self.original_nodes = ([n.strip() for n in match.group(2).split(",")]
                                   if match.group(2) else [match.group(1)])


class UsageError(XoptError, ValueError):
    """Bad arguments or options (exit code 1), or a validation mismatch."""

    exit_code = 1
    category = "usage"


class BadModelError(XoptError):
    """The model (or a file) cannot be read, checked, run or written (exit code 2)."""

    exit_code = 2
    category = "bad-model"


class PassFailedError(XoptError):
    """A pass failed, or the optimized graph is invalid (exit code 3)."""

    exit_code = 3
    category = "pass-failed"


_BY_CODE = {1: UsageError, 2: BadModelError, 3: PassFailedError}


def error_for(exit_code: int, message: str, status: str = "") -> XoptError:
    """The exception for an exit code of the command line (and the core's category)."""
    cls = _BY_CODE.get(exit_code, XoptError)
    return cls(message, exit_code, status)


def error_from_stderr(exit_code: int, stderr: str, program: str = "xopt") -> XoptError:
    """The exception for a command line that exited with ``exit_code``, printing ``stderr``."""
    prefix = program + ": error: "
    lines = [line[len(prefix):] for line in stderr.splitlines() if line.startswith(prefix)]
    message = lines[-1] if lines else (stderr.strip().splitlines() or ["exit code %d" % exit_code])[-1]
    return error_for(exit_code, message)
