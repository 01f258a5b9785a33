"""``strgm pcfg train|parse``: the PCFG command (wired into ``strgm.cli`` by its owner).

    strgm pcfg train GRAMMAR CORPUS --method em|map|vb|cvb|gibbs|mh [--alpha A] [--iters N]
                     [--seed S] [--out GRAMMAR] [--chars] [--heldout YLD] [--burn-in B]
                     [--checkpoint PATH] [--resume PATH] [--resample-alpha]
    strgm pcfg parse GRAMMAR CORPUS [--decode viterbi|maxrule] [--chars]

``train`` prints the per-iteration trace (stderr) and the final grammar in Johnson's format
(stdout, or ``--out``).  ``parse`` prints one bracketed tree per line with its score;
sentences without a parse print ``(no parse)`` and are listed on stderr.
"""

from __future__ import annotations

import json
import sys

from strgm.errors import StrgmError

__all__ = ["add_subparser"]

METHODS = ("em", "map", "vb", "cvb", "gibbs", "mh")


def add_subparser(subparsers) -> None:
    p = subparsers.add_parser("pcfg", help="Bayesian PCFG estimation and parsing")
    sub = p.add_subparsers(dest="pcfg_command", required=True)

    t = sub.add_parser("train", help="estimate rule probabilities from a corpus of strings")
    t.add_argument("grammar", help="grammar file in Mark Johnson's format")
    t.add_argument("corpus", help="yield file: one sentence per line")
    t.add_argument("--method", choices=METHODS, default="em")
    t.add_argument("--alpha", type=float, default=None,
                   help="Dirichlet pseudocount for rules without their own (default 1)")
    t.add_argument("--iters", type=int, default=20)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--out", default=None, help="write the final grammar here (else stdout)")
    t.add_argument("--chars", action="store_true", help="split corpus lines into characters")
    t.add_argument("--heldout", default=None, help="held-out yield file for perplexity")
    t.add_argument("--burn-in", type=int, default=0, help="samplers: sweeps before averaging")
    t.add_argument("--checkpoint", default=None, help="samplers: checkpoint file (.json/.npz)")
    t.add_argument("--checkpoint-every", type=int, default=10)
    t.add_argument("--resume", default=None, help="samplers: resume from this checkpoint")
    t.add_argument("--resample-alpha", action="store_true")
    t.add_argument("--min-weight", type=float, default=0.0,
                   help="omit rules whose final probability is below this from the output")
    t.add_argument("--trace-json", default=None, help="also write the trace as JSON here")
    t.add_argument("--quiet", action="store_true", help="no per-iteration trace")
    t.set_defaults(func=_train)

    q = sub.add_parser("parse", help="parse a corpus with a PCFG")
    q.add_argument("grammar")
    q.add_argument("corpus")
    q.add_argument("--decode", choices=("viterbi", "maxrule"), default="viterbi")
    q.add_argument("--chars", action="store_true")
    q.set_defaults(func=_parse)


def _train(args) -> int:
    from strgm.datasets.johnson_format import format_grammar, read_grammar, read_yld
    from strgm.grammars.estimators import fit
    from strgm.grammars.samplers import CollapsedMH, GibbsPCFG, SamplerState, run

    try:
        g = read_grammar(args.grammar)
        corpus = read_yld(args.corpus, chars=args.chars)
        held = read_yld(args.heldout, chars=args.chars) if args.heldout else None
        log = sys.stderr
        if args.method in ("gibbs", "mh"):
            cls = GibbsPCFG if args.method == "gibbs" else CollapsedMH
            k = cls(g, corpus, alpha=args.alpha, resample_alpha=args.resample_alpha)
            state = SamplerState.load(args.resume) if args.resume else k.init(args.seed)
            if not args.resume:
                bad = [i for i, t in enumerate(state.trees) if t is None]
                if bad:
                    print(f"warning: {len(bad)} sentence(s) have no parse (line numbers "
                          f"{[i + 1 for i in bad[:20]]}); they are left out", file=log)
            res = run(k, state, args.iters, burn_in=args.burn_in, eval_every=1, heldout=held,
                      progress=not args.quiet, log=log, checkpoint=args.checkpoint,
                      checkpoint_every=args.checkpoint_every)
            theta, trace = res.theta_mean, res.trace
            if args.method == "mh" and res.state.proposed:
                print(f"acceptance rate {res.state.accepted / res.state.proposed:.4f}", file=log)
        else:
            kw = dict(iters=args.iters, heldout=held, progress=not args.quiet, log=log)
            if args.method != "em":
                kw["alpha"] = args.alpha
            if args.method == "cvb":
                kw["seed"] = args.seed
            res = fit(args.method, g, corpus, **kw)
            theta, trace = res.theta, res.trace
            for n in res.notes:
                print("note: " + n, file=log)
            if res.unparsable:
                print(f"warning: {len(res.unparsable)} sentence(s) have no parse (line numbers "
                      f"{[i + 1 for i in res.unparsable[:20]]})", file=log)
        text = format_grammar(g, theta, min_weight=args.min_weight or None)
        if args.out:
            with open(args.out, "w", encoding="utf-8") as f:
                f.write(text)
        else:
            sys.stdout.write(text)
        if args.trace_json:
            with open(args.trace_json, "w", encoding="utf-8") as f:
                json.dump(trace, f, indent=1, default=float)
        return 0
    except StrgmError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


def _parse(args) -> int:
    from strgm.datasets.johnson_format import read_grammar, read_yld
    from strgm.grammars.cfg import compile_grammar, tree_to_str
    from strgm.grammars.chart import batches_by_length, inside

    try:
        g = read_grammar(args.grammar)
        corpus = read_yld(args.corpus, chars=args.chars)
        cg = compile_grammar(g)
        theta = g.probabilities()
        out = [None] * len(corpus)
        for idx in batches_by_length(corpus):
            ch = inside(cg, [corpus[i] for i in idx], theta)
            res = ch.viterbi() if args.decode == "viterbi" else ch.maxrule()
            for i, r, lz in zip(idx, res, ch.logZ):
                out[i] = (r, lz)
        bad = []
        for i, (r, lz) in enumerate(out):
            if r is None:
                bad.append(i + 1)
                print("(no parse)\t-inf")
            else:
                print(f"{tree_to_str(r[0])}\t{r[1]:.6g}\t{lz:.6g}")
        if bad:
            print(f"{len(bad)} sentence(s) have no parse: lines {bad[:50]}", file=sys.stderr)
        return 0
    except StrgmError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
