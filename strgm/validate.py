"""One validation layer for numeric options, shared by the command line and the API.

Each ``check_*`` function returns the value when it is acceptable and otherwise raises
:class:`~strgm.errors.OptionError` naming the option and the value, e.g.::

    check_float("--l2", -1.0, min=0)      ->  option --l2: must be ≥ 0, got -1.0

The command line wraps the same checks as ``argparse`` types (:func:`int_arg`,
:func:`float_arg`), so a bad value stops the run before any file is read; library entry
points call the checks on their keyword arguments (named after the keyword) so that an API
user gets the same message. NaN and infinities are refused unless ``finite=False``.
"""

from __future__ import annotations

import argparse
import math
from typing import Callable, Optional

from strgm.errors import OptionError


def _bounds(min, max, min_open, max_open) -> str:
    parts = []
    if min is not None:
        parts.append(f"{'>' if min_open else '≥'} {min:g}")
    if max is not None:
        parts.append(f"{'<' if max_open else '≤'} {max:g}")
    return " and ".join(parts)


def check_float(name: str, value, min: Optional[float] = None, max: Optional[float] = None,
                min_open: bool = False, max_open: bool = False, finite: bool = True) -> float:
    """``value`` as a float in the given range (``min_open``: strictly above ``min``)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise OptionError(name, value, "must be a number") from None
    if math.isnan(v) or (finite and math.isinf(v)):
        raise OptionError(name, value, "must be a finite number")
    bad = ((min is not None and (v < min or (min_open and v == min)))
           or (max is not None and (v > max or (max_open and v == max))))
    if bad:
        raise OptionError(name, value, "must be " + _bounds(min, max, min_open, max_open))
    return v


def check_int(name: str, value, min: Optional[int] = None,
              max: Optional[int] = None) -> int:
    """``value`` as an int in ``[min, max]`` (booleans and non-integral floats refused)."""
    if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
        raise OptionError(name, value, "must be an integer")
    try:
        v = int(value)
    except (TypeError, ValueError, OverflowError):
        raise OptionError(name, value, "must be an integer") from None
    if (min is not None and v < min) or (max is not None and v > max):
        raise OptionError(name, value, "must be " + _bounds(min, max, False, False))
    return v


def check_probability(name: str, value, open_low: bool = True, open_high: bool = True
                      ) -> float:
    """A probability strictly inside (0, 1) by default."""
    return check_float(name, value, 0.0, 1.0, min_open=open_low, max_open=open_high)


def check_choice(name: str, value, choices) -> str:
    if value not in choices:
        raise OptionError(name, value, "must be one of " + ", ".join(map(str, choices)))
    return value


def _arg(check: Callable, **kw) -> Callable[[str], object]:
    def parse(text: str):
        try:
            return check("", text, **kw)
        except OptionError as e:
            raise argparse.ArgumentTypeError(f"{e.reason}, got {text!r}") from None

    parse.__name__ = check.__name__.replace("check_", "")  # argparse's "invalid int value"
    return parse


def int_arg(min: Optional[int] = None, max: Optional[int] = None):
    """An argparse ``type`` accepting integers in ``[min, max]``."""
    return _arg(check_int, min=min, max=max)


def float_arg(min: Optional[float] = None, max: Optional[float] = None,
              min_open: bool = False, max_open: bool = False, finite: bool = True):
    """An argparse ``type`` accepting finite floats in the given range."""
    return _arg(check_float, min=min, max=max, min_open=min_open, max_open=max_open,
                finite=finite)


_UNITS = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def check_size(name: str, value, min: int = 1) -> int:
    """A size in bytes: an integer, or a number with a unit ``K``, ``M``, ``G`` or ``T``
    (powers of 1024; ``KB``/``KiB`` spellings accepted), e.g. ``--max-memory 4G``."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        text = str(value)
    elif isinstance(value, str):
        text = value.strip()
    else:
        raise OptionError(name, value, "must be a size such as 512M or 4G")
    t = text.upper().replace("IB", "").replace("B", "") if text else text
    unit = t[-1:] if t[-1:] in _UNITS and t[-1:] != "" and not t[-1:].isdigit() else ""
    number = t[:-1] if unit else t
    try:
        v = float(number)
    except ValueError:
        raise OptionError(name, value, "must be a size such as 512M or 4G") from None
    if not math.isfinite(v):
        raise OptionError(name, value, "must be a finite size")
    n = int(v * _UNITS[unit])
    if n < min:
        raise OptionError(name, value, f"must be at least {min} bytes")
    return n


def size_arg(min: int = 1):
    """An argparse ``type`` for :func:`check_size`."""
    return _arg(check_size, min=min)
