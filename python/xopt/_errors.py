"""Exceptions raised by xopt: one per exit-code category of the ``xopt`` command line."""

from __future__ import annotations


class XoptError(Exception):
    """An error of the xopt core.

    ``message`` is the command line's one-line error (what ``xopt`` prints after
    ``xopt: error:``), ``exit_code`` the code it exits with (1 usage, 2 bad model or file,
    3 a pass failed) and ``category`` its name ("usage", "bad-model", "pass-failed").
    """

    exit_code: int = 0
    category: str = "error"

    def __init__(self, message: str, exit_code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if exit_code is not None:
            self.exit_code = exit_code


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


def error_for(exit_code: int, message: str) -> XoptError:
    """The exception for an exit code of the command line."""
    cls = _BY_CODE.get(exit_code, XoptError)
    return cls(message, exit_code)


def error_from_stderr(exit_code: int, stderr: str, program: str = "xopt") -> XoptError:
    """The exception for a command line that exited with ``exit_code``, printing ``stderr``."""
    prefix = program + ": error: "
    lines = [line[len(prefix):] for line in stderr.splitlines() if line.startswith(prefix)]
    message = lines[-1] if lines else (stderr.strip().splitlines() or ["exit code %d" % exit_code])[-1]
    return error_for(exit_code, message)
