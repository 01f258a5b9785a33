"""The envelope of every JSON file the command line writes, and the schema of each format.

Each document starts with ``format`` (what it is, e.g. ``strgm-hmm-trace``), ``version``
(of that format) and ``strgm_version`` (of the program that wrote it), followed by the
command's fields. The JSON Schema (draft 2020-12) of each format ships inside the package
as ``strgm/schemas/<format>.schema.json``: :func:`schema` reads it, ``strgm validate``
checks documents against it, and tests validate real outputs against them.

    >>> from strgm.cli.json_output import formats, schema
    >>> "strgm-hmm-trace" in formats()
    True
    >>> schema("strgm-hmm-trace")["properties"]["format"]["const"]
    'strgm-hmm-trace'
"""

from __future__ import annotations

import json
from importlib import resources

from strgm.cli.version import package_version
from strgm.errors import InputError

__all__ = ["document", "write_document", "formats", "schema"]

_SUFFIX = ".schema.json"


def document(fmt: str, payload: dict, version: int = 1) -> dict:
    """``payload`` with the envelope fields first (a new dict)."""
    return {"format": fmt, "version": version, "strgm_version": package_version(),
            **{k: v for k, v in payload.items() if k not in ("format", "version")}}


def write_document(path, fmt: str, payload: dict, version: int = 1) -> None:
    """Write :func:`document` atomically as strict JSON."""
    from strgm.safe_io import atomic_write_json

    atomic_write_json(path, document(fmt, payload, version))


def _schemas():
    """The package's directory of schemas (package data)."""
    return resources.files("strgm").joinpath("schemas")


def formats() -> list:
    """The formats that have a JSON Schema, sorted."""
    return sorted(p.name[:-len(_SUFFIX)] for p in _schemas().iterdir()
                  if p.name.endswith(_SUFFIX))


def schema(fmt: str) -> dict:
    """The JSON Schema of format ``fmt`` (an InputError listing the formats when none)."""
    if fmt not in formats():
        raise InputError(f"no JSON Schema for format {fmt!r} (schemas: "
                         f"{', '.join(formats())})")
    return json.loads(_schemas().joinpath(fmt + _SUFFIX).read_text(encoding="utf-8"))
