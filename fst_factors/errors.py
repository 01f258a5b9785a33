"""The errors of fst_factors.

Every error it raises on purpose derives from :class:`FstFactorsError`. strgm builds its
one error hierarchy on this base: ``strgm.errors.StrgmError`` *is* this class, so one
``except StrgmError`` clause also catches what this layer raises, and the classes below
are strgm's own (``strgm.errors.InputError is fst_factors.errors.InputError``).
"""

from __future__ import annotations


class FstFactorsError(Exception):
    """Base class of every error raised on purpose here (and, as ``StrgmError``, by
    strgm). Every one pickles (for a child process to hand it back) with its message and
    attributes, whatever its constructor's arguments."""

    def __reduce__(self):
        return rebuilt, (type(self), self.args, dict(self.__dict__))


def rebuilt(cls, args: tuple, state: dict) -> FstFactorsError:
    """A pickled :class:`FstFactorsError` rebuilt without calling its constructor."""
    e = cls.__new__(cls, *args)
    e.args = args
    e.__dict__.update(state)
    return e


class InputError(FstFactorsError, ValueError):
    """Malformed user input. ``path`` and ``line`` (1-based) locate it when known."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None):
        self.path = path
        self.line = line
        self.detail = message
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        super().__init__(where + message)


class OptionError(InputError):
    """A bad value for an option or keyword argument: names the option and the value."""

    def __init__(self, option: str, value, reason: str):
        self.option = option
        self.value = value
        self.reason = reason
        super().__init__(f"option {option}: {reason}, got {value!r}" if option
                         else f"{reason}, got {value!r}")


class UnknownSymbolError(InputError):
    """A symbol that is not in the alphabet (names the symbol and where it occurred)."""

    def __init__(self, symbol: str, where: str = "", path: str | None = None,
                 line: int | None = None):
        self.symbol = symbol
        msg = f"unknown symbol {symbol!r} (U+{ord(symbol[0]):04X})" if symbol else "empty symbol"
        if where:
            msg += f" in {where}"
        super().__init__(msg, path=path, line=line)


class DivergenceError(FstFactorsError, ArithmeticError):
    """A weighted automaton whose total weight is infinite (not normalisable).

    ``radius_at_least``, when not None, is a proven lower bound c ≥ 1 on the spectral
    radius of the automaton's transition matrix (a nonnegative v ≠ 0 with A v ≥ c v was
    found); callers that damp every arc by e^{-δ} know that δ ≤ log c cannot help."""

    radius_at_least = None

    def __init__(self, *args, radius_at_least=None):
        super().__init__(*args)
        self.radius_at_least = radius_at_least


class MessageTooLargeError(FstFactorsError, MemoryError):
    """A message, belief or intermediate automaton exceeded the state, arc or memory budget
    (``--max-states``, ``--max-memory``). The message names the variable or factor and
    what to do about it."""
