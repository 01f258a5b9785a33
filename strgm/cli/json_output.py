"""The envelope of every JSON file the command line writes.

Each document starts with ``format`` (what it is, e.g. ``strgm-hmm-trace``), ``version``
(of that format) and ``strgm_version`` (of the program that wrote it), followed by the
command's fields. The JSON Schema of each format is ``schemas/<format>.schema.json`` in
the repository; tests validate real outputs against them.
"""

from __future__ import annotations

from strgm.cli.version import package_version

__all__ = ["document", "write_document"]


def document(fmt: str, payload: dict, version: int = 1) -> dict:
    """``payload`` with the envelope fields first (a new dict)."""
    return {"format": fmt, "version": version, "strgm_version": package_version(),
            **{k: v for k, v in payload.items() if k not in ("format", "version")}}


def write_document(path, fmt: str, payload: dict, version: int = 1) -> None:
    """Write :func:`document` atomically as strict JSON."""
    from strgm.safe_io import atomic_write_json

    atomic_write_json(path, document(fmt, payload, version))
