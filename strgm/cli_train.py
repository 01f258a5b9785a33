"""``strgm train FILE``: learn the phonology by EM (see strgm.models.em)."""

from __future__ import annotations

import json
import sys
import warnings


def add_subparser(sub) -> None:
    p = sub.add_parser("train", help="train the phonology by EM over factor-graph beliefs")
    p.add_argument("file", help="paradigm (TSV or wide CSV)")
    p.add_argument("--method", default="pruned", choices=["bp", "pruned", "ep", "pep"])
    p.add_argument("--em-iters", type=int, default=3)
    p.add_argument("--l2", type=float, default=1.0, help="L2 penalty λ (default: %(default)s)")
    p.add_argument("--max-iters", type=int, default=3, help="inference iterations per E-step")
    p.add_argument("--json", metavar="OUT", help="write trace and held-out scores as JSON")
    p.add_argument("--save", metavar="MODEL", help="write the trained phonology (JSON)")
    p.add_argument("--checkpoint", metavar="PATH", help="checkpoint θ after every iteration")
    p.add_argument("--resume", metavar="CHECKPOINT")
    p.add_argument("--holdout", type=float, default=None, metavar="FRAC")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quiet", action="store_true")
    c = p.add_argument_group("phonology context (Cotterell, Peng & Eisner 2014 windows)")
    c.add_argument("--left-window", type=int, default=1, choices=[0, 1],
                   help="input symbols to the left (default: %(default)s)")
    c.add_argument("--right-window", type=int, default=1, choices=[0, 1, 2],
                   help="input symbols to the right; 2 for processes triggered two "
                        "segments ahead (default: %(default)s)")
    c.add_argument("--output-window", type=int, default=1, choices=[0, 1],
                   help="output symbols to the left (default: %(default)s)")
    c.add_argument("--no-tier", action="store_true",
                   help="drop the nearest-preceding-output-vowel (harmony) context")
    c.add_argument("--right-classes", default="coarse",
                   choices=["coarse", "major", "natural", "exact"],
                   help="class scheme of the right context (default: %(default)s)")
    p.set_defaults(func=cmd_train)


def initial_model(args, alphabet):
    """The copy-biased starting phonology with the context options of ``args``."""
    from fst_factors.contextual_edit import ContextSpec
    from strgm.models.edit_model import PhonologyEditModel

    spec = ContextSpec(args.left_window, args.right_window, args.output_window,
                       not args.no_tier)
    return PhonologyEditModel.copy_biased(alphabet, spec, args.right_classes)


def load_phonology(path: str):
    """(alphabet, compiled FST) of a saved model, for ``strgm infer --model``."""
    from strgm.models.edit_model import PhonologyEditModel

    m = PhonologyEditModel.load(path)
    return m.alphabet, m.fst()


def cmd_train(args) -> int:
    from strgm.datasets.paradigm import read_paradigm
    from strgm.inference import Progress
    from strgm.models.em import predict, score, train_phonology
    from strgm.models.phonology import holdout_split

    warnings.simplefilter("ignore")
    para = read_paradigm(args.file)
    ho = set(holdout_split(para, args.holdout, args.seed)) if args.holdout else set()
    prog = Progress(not args.quiet and sys.stderr.isatty())
    model = None if args.resume else initial_model(args, para.alphabet())
    r = train_phonology(para, method=args.method, em_iters=args.em_iters, l2=args.l2,
                        heldout=ho, infer_opts={"max_iters": args.max_iters}, model=model,
                        checkpoint=args.checkpoint, resume=args.resume, progress=prog)
    prog.done()
    for e in r.trace:
        print(f"EM {e['iteration']}: objective {e['objective']:.3f}")
    out = {"trace": r.trace}
    if ho:
        words = [e for e in para.entries if e.key in ho]
        sc = score(predict(r.model.fst(), r.model.alphabet, r.result, r.graph_model, words),
                   {e.key: e.surface for e in words}, r.model.alphabet)
        print(f"held-out words: {sc['n']}   exact match: {100 * sc['exact_match']:.1f}%   "
              f"mean -log p(true form): {sc['mean_neg_logp']:.3f} nats")
        out["holdout"] = sc
    if args.save:
        r.model.save(args.save, {"method": args.method, "l2": args.l2})
        print(f"wrote {args.save}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(out, fh, ensure_ascii=False, indent=1, default=float)
        print(f"wrote {args.json}")
    return 0
