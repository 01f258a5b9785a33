"""``strgm validate FILE...``: is each file a valid strgm JSON document?

Each file's ``format`` and ``version`` fields say what it is; a ``--json`` output is
checked against the JSON Schema of its format shipped in the package
(:func:`strgm.cli.json_output.schema`; needs ``jsonschema``), a model file by reading it
as the commands that use it do. One line per file: ``FILE: valid FORMAT (format N)`` on
stdout, or the error naming the file and the first failing place (a JSON Pointer) on
stderr. Exit status 0 when every file is valid, else 1. :func:`validate_file` and
:func:`validate_document` do the same for Python callers.
"""

from __future__ import annotations

import json
import sys

from strgm.errors import InputError, MissingDependencyError, file_kind

__all__ = ["validate_file", "validate_document", "INSTALL"]

INSTALL = "validating a JSON document needs jsonschema: pip install 'strgm[validate]'"
#: longest error text kept from the validator (its messages quote the failing value)
_MAX_MESSAGE = 160

DESCRIPTION = """\
Check strgm JSON documents: a --json output against the JSON Schema of its format (the
schemas ship inside the package), an HMM, TSG or phonology model file by reading it.
Each file prints 'FILE: valid FORMAT (format N)', or one error line naming the file and
the first failing place as a JSON Pointer. Exit status 0 when every file is valid, 1
otherwise. Needs jsonschema for --json outputs: pip install 'strgm[validate]'."""


def add_subparser(sub) -> None:
    v = sub.add_parser("validate", help="check strgm JSON outputs and model files",
                       description=DESCRIPTION)
    v.add_argument("files", nargs="+", metavar="FILE",
                   help="a JSON document strgm wrote (--json output or model file)")
    v.set_defaults(func=cmd_validate)


def cmd_validate(args) -> int:
    """Validate every file; 1 when any is invalid (a missing jsonschema is an error of
    the command, raised)."""
    from strgm.cli.errors import error_line

    bad = 0
    for path in args.files:
        try:
            fmt, version = validate_file(path)
        except InputError as e:
            print(error_line(e), file=sys.stderr)
            bad += 1
            continue
        print(f"{path}: valid {fmt} (format {version})")
    return 1 if bad else 0


def _load_hmm(path) -> None:
    from strgm.hmm.model_file import load_model

    load_model(path)


def _load_tsg(path) -> None:
    from strgm.grammars.tsg.model_file import load_model

    load_model(path)


def _load_phonology(path) -> None:
    from strgm.models.edit_model import PhonologyEditModel

    PhonologyEditModel.load(str(path))


#: model files: no schema, checked by reading them as the commands that use them do
_LOADERS = {"strgm-hmm-model": _load_hmm, "strgm-tsg-model": _load_tsg,
            "strgm-phonology-v1": _load_phonology}


def _pointer(path) -> str:
    """A JSON Pointer (RFC 6901) to the failing value; ``/`` for the whole document."""
    return "/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in path)


def _shorten(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_MESSAGE else text[:_MAX_MESSAGE - 1] + "…"


def _identify(doc) -> tuple:
    """(format, version) that ``doc`` names; an InputError saying what it is when strgm
    cannot check it."""
    from strgm.cli.json_output import formats

    fmt = doc.get("format") if isinstance(doc, dict) else None
    if not isinstance(fmt, str) or not fmt.startswith("strgm-"):
        raise InputError("not a strgm document (no 'format' field naming a strgm format)")
    version = doc.get("version")
    if version is None and fmt[-3:-1] == "-v" and fmt[-1].isdigit():
        version = int(fmt[-1])  # formats that carry their version in the name
    if fmt not in formats() and fmt not in _LOADERS:
        raise InputError(f"{file_kind(doc) or fmt} has no schema to validate against "
                         f"(schemas: {', '.join(formats() + sorted(_LOADERS))})")
    return fmt, version


def validate_document(doc) -> tuple:
    """(format, version) of the decoded ``--json`` document ``doc``; an InputError naming
    the first failing place (a JSON Pointer) when it does not match its schema, a
    MissingDependencyError without ``jsonschema``."""
    from strgm.cli.json_output import schema

    fmt, version = _identify(doc)
    try:
        import jsonschema
    except ImportError:
        raise MissingDependencyError(INSTALL) from None
    s = schema(fmt)
    validator = jsonschema.validators.validator_for(s)(s)
    error = jsonschema.exceptions.best_match(validator.iter_errors(doc))
    if error is not None:
        raise InputError(f"invalid {fmt} (format {version}) at "
                         f"{_pointer(error.absolute_path)}: {_shorten(error.message)}")
    return fmt, version


def validate_file(path) -> tuple:
    """(format, version) of the strgm JSON document in ``path`` when it is valid; an
    InputError naming the file and the first failing place otherwise."""
    from strgm.safe_io import read_text

    text = read_text(path, "JSON document")
    try:
        doc = json.loads(text)
    except ValueError as e:
        where = f" at line {e.lineno} column {e.colno}" if hasattr(e, "lineno") else ""
        raise InputError(f"not JSON ({getattr(e, 'msg', e)}{where})", str(path)) from None
    try:
        fmt, version = _identify(doc)
        if fmt in _LOADERS:
            _LOADERS[fmt](path)
            return fmt, version
        return validate_document(doc)
    except InputError as e:
        if e.path is not None:
            raise
        raise InputError(e.detail, str(path)) from None
