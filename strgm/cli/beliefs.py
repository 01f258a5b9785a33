"""``strgm beliefs DIR``: query beliefs saved by ``strgm infer --save-beliefs DIR``.

``--top`` (1..100000) and the ``--json`` and ``--plot`` paths are checked (neither may lie
inside DIR, which would make it unloadable) and every ``--var`` is looked up before any
belief is read or queried. A ``--prob`` string with a segment outside the saved
alphabet has probability 0 (no belief can produce it); the output says which symbol, and
the JSON lists it under ``not_in_alphabet``. ``--json -`` prints only the JSON, on stdout.
"""

from __future__ import annotations

from strgm.cli.errors import announce_written
from strgm.errors import OptionError, did_you_mean
from strgm.validate import int_arg


def add_subparser(sub) -> None:
    b = sub.add_parser("beliefs", help="query beliefs saved by `infer --save-beliefs`")
    b.add_argument("dir", help="directory written by --save-beliefs")
    b.add_argument("--var", action="append", metavar="NAME",
                   help="variable to show (repeatable; default: all)")
    b.add_argument("--top", type=int_arg(1, 100_000), default=5,
                   help="strings shown (default: %(default)s)")
    b.add_argument("--prob", action="append", metavar="STRING",
                   help="also print the probability of STRING (repeatable)")
    b.add_argument("--entropy", action="store_true", help="also print each entropy (nats)")
    b.add_argument("--json", metavar="OUT", help="write what is shown as JSON")
    b.add_argument("--plot", metavar="FILE.png", help="draw the top strings of the first "
                   "--var (or the first variable) as bars (needs strgm[plot])")
    b.set_defaults(func=cmd_beliefs)


def _check_names(r, names, where: str) -> None:
    for v in names:
        if v not in r.variables:
            shown = ", ".join(map(repr, r.variables[:5])) + (", ..." if len(r.variables) > 5
                                                            else "")
            raise OptionError("--var", v, f"no such variable in {where}"
                                          f"{did_you_mean(v, r.variables)} (it has "
                                          f"{len(r.variables)}: {shown})")


def _query(b, args) -> tuple[dict, dict]:
    """(the JSON row of belief ``b``, strings -> their segments outside the alphabet)."""
    from fst_factors.alphabet import segment

    row = {"top": [[s, p] for s, p in b.kbest(args.top)]}
    unknown = {}
    if args.prob:
        row["prob"] = {}
        for w in args.prob:
            missing = [c for c in segment(w) if c not in b.alphabet]
            if missing:
                unknown[w] = missing
            row["prob"][w] = 0.0 if missing else b.prob(w)
        if unknown:
            row["not_in_alphabet"] = unknown
    if args.entropy:
        row["entropy_nats"] = b.entropy()
    return row, unknown


def _show(say, v: str, row: dict, unknown: dict) -> None:
    top = "  ".join(f"{s or 'ε'} {p:.3f}" for s, p in row["top"])
    say(f"{v}\t{top}")
    for w, p in row.get("prob", {}).items():
        note = (f" (symbol {unknown[w][0]!r} is not in the alphabet)" if w in unknown
                else "")
        say(f"\tP({w or 'ε'}) = {p:.4g}{note}")
    if "entropy_nats" in row:
        say(f"\tentropy {row['entropy_nats']:.3f} nats")


def cmd_beliefs(args) -> int:
    """Top-k strings, probabilities of given strings, entropy (module docstring)."""
    from strgm.inference.result import InferenceResult
    from strgm.cli.json_output import document, write_document
    from strgm.safe_io import check_outputs, strict_json
    from strgm.validate import check_int

    check_int("--top", args.top, min=1, max=100_000)
    if args.plot:
        from strgm.plot import check_figure_path
        check_figure_path(args.plot)
    check_outputs([(args.json, "--json"), (args.plot, "--plot")],
                  [(args.dir, "the saved-beliefs directory")])
    r = InferenceResult.load(args.dir)
    names = args.var or r.variables
    _check_names(r, names, args.dir)
    status = "converged" if r.converged else "stopped at the iteration cap"
    say = print if args.json != "-" else (lambda *a, **k: None)  # --json -: JSON only
    say(f"{args.dir}: {len(r.variables)} beliefs from method {r.method} "
        f"({r.iterations} iterations, {status})")
    data = {}
    for v in names:
        data[v], unknown = _query(r.belief(v), args)
        _show(say, v, data[v], unknown)
    if args.json == "-":
        print(strict_json(document("strgm-beliefs", {"beliefs": data})))
    elif args.json:
        write_document(args.json, "strgm-beliefs", {"beliefs": data})
        announce_written(args.json)
    if args.plot:
        from strgm.plot import plot_belief, save_figure
        save_figure(plot_belief(r.belief(names[0]), k=args.top), args.plot)
        announce_written(args.plot)
    return 0
