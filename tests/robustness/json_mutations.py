"""JSON files to fuzz the model and checkpoint loaders with: mutations of a good file's
parsed tree (a key deleted, a value of another type, extreme numbers, a huge list, deep
nesting, an unknown key) and of its raw bytes (truncation, byte flips, bytes that are not
UTF-8), drawn through ``pick(lo, hi)`` / ``choice(seq)`` as in :mod:`fst_mutations`, so
that hypothesis and a seeded ``random.Random`` draw the same kinds of file.

Numbers JSON cannot spell as Python's ``json.dumps`` would (``1e400``, which parses to
infinity, ``NaN``/``Infinity`` tokens, integers of hundreds of digits) are written as raw
tokens in the text.
"""

from __future__ import annotations

import json

_RAW = "\x00raw:"

#: Numbers at and beyond the edges of what a float or an int64 holds.
EXTREME_NUMBERS = (1e308, -1e308, 1e300, -1e300, 1e-320, 10 ** 30, -10 ** 30, 2 ** 63,
                   -2 ** 63 - 1, 2 ** 31, -1, -2, 0, 0.5, -0.5, 3.5)
#: Tokens written as they are: non-standard constants, overflowing literals, huge ints.
RAW_TOKENS = ("NaN", "Infinity", "-Infinity", "1e400", "-1e400", "9" * 400, "-" + "9" * 400)
#: Values of every JSON type (and strings that name non-finite numbers).
OTHER_VALUES = ("", "x", "nan", "inf", "-inf", "NaN", "Infinity", True, False, None, [], {},
                [0], [[]], {"a": 1}, ["x", 1], 0, 1, -1, 1.5)
KINDS = ("delete", "retype", "number", "raw_number", "huge_list", "deep", "nested_list",
         "add_key", "duplicate", "truncate", "flip", "not_utf8", "empty")


def raw(token: str) -> str:
    """A placeholder that :func:`dumps` writes as the bare ``token``."""
    return _RAW + token


def dumps(tree) -> bytes:
    """``tree`` as JSON text (NaN/Infinity as their tokens; placeholders as raw tokens)."""
    text = json.dumps(tree, allow_nan=True, ensure_ascii=False)
    escaped = json.dumps(_RAW)[:-1]  # '"\\u0000raw:': json.dumps escapes "\x00"
    while escaped in text:
        text = text.replace(escaped, "\x01", 1)
        start = text.index("\x01")
        end = text.index('"', start)
        text = text[:start] + text[start + 1:end] + text[end + 1:]
    return text.encode("utf-8")


def paths(tree, prefix=()) -> list:
    """(path, value) of every value of ``tree`` but the root; a path is a tuple of keys
    and indices."""
    out = []
    items = tree.items() if isinstance(tree, dict) else enumerate(tree) \
        if isinstance(tree, list) else ()
    for k, v in items:
        p = prefix + (k,)
        out.append((p, v))
        if isinstance(v, (dict, list)):
            out.extend(paths(v, p))
    return out


def _shape(path) -> tuple:
    return tuple("*" if isinstance(k, int) else k for k in path)


def pick_path(tree, pick, choice, where=lambda v: True):
    """A path to a value for which ``where`` holds: first a field (paths with list indices
    wildcarded, so every field of the format is as likely as any other), then one of its
    instances; None when there is none."""
    by_shape: dict = {}
    for p, v in paths(tree):
        if where(v):
            by_shape.setdefault(_shape(p), []).append(p)
    if not by_shape:
        return None
    same = by_shape[choice(sorted(by_shape, key=repr))]
    return same[pick(0, len(same) - 1)]


def get(tree, path):
    for k in path:
        tree = tree[k]
    return tree


def _copy(tree):
    return json.loads(json.dumps(tree, allow_nan=True))


def _set(tree, path, value):
    get(tree, path[:-1])[path[-1]] = value


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def mutate(blob: bytes, kind: str, pick, choice) -> bytes:
    """One mutation of the JSON file ``blob`` of ``kind``."""
    if kind == "truncate":
        return blob[:pick(0, len(blob) - 1)]
    if kind == "flip":
        out = bytearray(blob)
        for _ in range(pick(1, 4)):
            out[pick(0, len(out) - 1)] = pick(0, 255)
        return bytes(out)
    if kind == "not_utf8":
        at = pick(0, len(blob))
        return blob[:at] + choice((b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80\x80")) + blob[at:]
    if kind == "empty":
        return choice((b"", b"\n", b"null", b"[]", b"{}", b"0", b'"x"', b"\xef\xbb\xbf{}"))
    tree = _copy(json.loads(blob))
    if kind == "delete":
        p = pick_path(tree, pick, choice)
        if p is None:
            return dumps(tree)
        parent = get(tree, p[:-1])
        del parent[p[-1]]
    elif kind in ("number", "raw_number"):
        p = pick_path(tree, pick, choice, _is_number) or pick_path(tree, pick, choice)
        v = choice(EXTREME_NUMBERS) if kind == "number" else raw(choice(RAW_TOKENS))
        if p is None:
            return dumps(v)
        _set(tree, p, v)
    elif kind == "retype":
        p = pick_path(tree, pick, choice)
        if p is None:
            return dumps(choice(OTHER_VALUES))
        _set(tree, p, _copy(choice(OTHER_VALUES)))
    elif kind == "huge_list":
        p = pick_path(tree, pick, choice, lambda v: isinstance(v, list))
        if p is None:
            return dumps(tree)
        old = get(tree, p)
        item = old[0] if old and len(json.dumps(old[0])) <= 16 else choice((0, "a", 1.5))
        _set(tree, p, [item] * choice((10 ** 4, 10 ** 5)))
    elif kind == "deep":
        p = pick_path(tree, pick, choice)
        depth = choice((50, 1000, 10 ** 5))
        if p is None:
            return b"[" * depth + b"]" * depth
        return dumps(_with(tree, p, raw("@@DEEP@@"))).replace(
            b"@@DEEP@@", b"[" * depth + b"]" * depth, 1)
    elif kind == "nested_list":
        p = pick_path(tree, pick, choice)
        if p is not None:
            _set(tree, p, [[get(tree, p)]])
    elif kind == "add_key":
        p = pick_path(tree, pick, choice, lambda v: isinstance(v, dict))
        target = tree if p is None or not isinstance(tree, dict) or pick(0, 1) \
            else get(tree, p)
        if isinstance(target, dict):
            target[choice(("zzz", "format", "__class__", ""))] = choice(OTHER_VALUES)
    elif kind == "duplicate":
        p = pick_path(tree, pick, choice, lambda v: isinstance(v, list) and len(v) > 0)
        if p is not None:
            old = get(tree, p)
            old.append(_copy(old[pick(0, len(old) - 1)]))
    return dumps(tree)


def _with(tree, path, value):
    t = _copy(tree)
    _set(t, path, value)
    return t
