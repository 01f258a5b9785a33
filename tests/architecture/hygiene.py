"""Checks of the text of the code: citations a reader of the repository cannot open,
module and function sizes, and the file:function table of docs/architecture.md."""

from __future__ import annotations

import ast
import io
import json
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: a citation of an issue tracker entry or of documents outside the repository
CITATION = re.compile(r"\bissues?\s*#?\d+|\bitem\s+\d+\s+of\s+issue|ARCHITECTURE\s*§|"
                      r"\.\./shared/(?!data\b)|\bshared/ARCHITECTURE|\bseeds/", re.I)
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60


def _rel(p: Path) -> str:
    try:
        return str(p.relative_to(ROOT))
    except ValueError:
        return str(p)


def prose_of_python(text: str) -> list[tuple[int, str]]:
    """(line, text) of every comment and docstring of a Python source."""
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            out.append((tok.start[0], tok.string))
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                             ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                line = node.body[0].lineno
                out.extend((line + i, s) for i, s in enumerate(doc.splitlines()))
    return out


def prose_of_notebook(text: str) -> list[tuple[int, str]]:
    out = []
    for i, cell in enumerate(json.loads(text).get("cells", [])):
        src = "".join(cell.get("source", []))
        if cell.get("cell_type") == "markdown":
            out.extend((i, s) for s in src.splitlines())
        else:
            out.extend((i, s) for s in src.splitlines() if s.lstrip().startswith("#"))
    return out


def citations(paths) -> list[str]:
    bad = []
    for p in paths:
        text = p.read_text(encoding="utf-8")
        prose = prose_of_notebook(text) if p.suffix == ".ipynb" else prose_of_python(text)
        for line, s in prose:
            if CITATION.search(s):
                bad.append(f"{_rel(p)}:{line}: {s.strip()[:80]}")
    return bad


def long_functions(paths) -> list[str]:
    """Functions over MAX_FUNCTION_LINES lines whose docstring does not say
    "DP kernel" (a dynamic program kept whole on purpose)."""
    bad = []
    for p in paths:
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES and "DP kernel" not in (ast.get_docstring(node) or ""):
                    bad.append(f"{_rel(p)}:{node.lineno} {node.name} ({n} lines)")
    return bad


def long_modules(paths) -> list[str]:
    return [f"{_rel(p)} ({n} lines)" for p in paths
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES]


TABLE_ENTRY = re.compile(r"`((?:strgm|fst_factors|benchmarks|examples)/[\w/]+\.py):([\w.]+)`")


def missing_table_entries(doc: Path) -> list[str]:
    """``path.py:function`` or ``path.py:Class.method`` references of the document that
    do not exist."""
    bad = []
    for path, name in TABLE_ENTRY.findall(doc.read_text(encoding="utf-8")):
        f = ROOT / path
        if not f.exists():
            bad.append(f"{path} (no such file)")
            continue
        tree = ast.parse(f.read_text(encoding="utf-8"))
        scope = tree.body
        for part in name.split("."):
            found = [n for n in scope if isinstance(n, (ast.FunctionDef, ast.ClassDef,
                                                        ast.AsyncFunctionDef))
                     and n.name == part]
            found += [n for n in scope if isinstance(n, ast.Assign)
                      and any(getattr(t, "id", None) == part for t in n.targets)]
            if not found:
                bad.append(f"{path}:{name}")
                break
            scope = getattr(found[0], "body", [])
    return bad


#: a repository document cited in prose
DOC_CITATION = re.compile(r"\bdocs/[\w/.-]+?\.md\b")


def cited_documents_missing(paths) -> list[str]:
    """``file: docs/x.md`` for every cited design document that does not exist."""
    bad = []
    for p in paths:
        for doc in sorted(set(DOC_CITATION.findall(p.read_text(encoding="utf-8")))):
            if not (ROOT / doc).exists():
                bad.append(f"{p.name}: {doc}")
    return bad


#: a measured time or speed-up: "20 ms", "3 CPU s", "took 52 s", "4.4× faster", "faster
#: than" (a stated period such as "a line every 8 s" is a contract, not a measurement)
TIMING = re.compile(r"\b\d+(?:\.\d+)?\s*(?:ms|µs|CPU s)\b|\btook\b[^.]{0,60}?\d\s*"
                    r"(?:s|min|minutes|seconds)\b|\d\s*×\s*faster|\bfaster than\b", re.I)


def timing_figures(paths) -> list[str]:
    """``file:object: text`` for every docstring (module, class or function) that quotes a
    measured time or speed-up: measurements belong in docs/ and benchmarks/results/."""
    bad = []
    for p in paths:
        tree = ast.parse(p.read_text(encoding="utf-8"))
        for node in [tree, *ast.walk(tree)]:
            if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                     ast.AsyncFunctionDef)):
                continue
            doc = ast.get_docstring(node, clean=False) or ""
            for m in TIMING.finditer(doc):
                bad.append(f"{_rel(p)}:{getattr(node, 'name', '<module>')}: {m.group(0)}")
    return sorted(set(bad))
