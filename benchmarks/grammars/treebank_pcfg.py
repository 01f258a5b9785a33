"""Treebank PCFG parsing on the WSJ sample: F1, failures and speed per Markovisation.

Train on wsj_0001-wsj_0159, parse the held-out wsj_0160-wsj_0179 sentences of at most
``--max-length`` (40) words (the cleaned gold trees' words: no -NONE- elements,
punctuation included), score with :mod:`strgm.grammars.bracket_score` (evalb's
COLLINS.prm conventions).  For each horizontal Markovisation order (none, 2, 1, 0) and
both decoders (viterbi, maxrule): F1, precision, recall, exact match, tagging accuracy,
``(no parse)`` count, seconds per sentence (the whole held-out set in length batches, as
``strgm pcfg parse`` does) and seconds for the longest sentence alone.  Also the
held-out sentences of at most 10 words without a parse under a grammar of word
terminals only (``--unk-threshold 0``: no signatures, raw words) and under the default
grammar with unknown words mapped through the signature back-off.

    python -m benchmarks.grammars.treebank_pcfg [--markov none 2 1 0] [--max-length 40]
        [--split test|dev] [--unk-thresholds 1 2 3]

``--split dev`` (for choosing defaults) trains on wsj_0001-0139 and parses wsj_0140-0159
instead, and writes treebank_pcfg_dev.{json,md}; the test split writes
benchmarks/results/treebank_pcfg.{json,md}, both with the commit hash.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from benchmarks import harness
from strgm.grammars.bracket_score import score_corpus
from strgm.grammars.cfg import compile_grammar
from strgm.grammars.chart import batches_by_length, chart_limit, inside
from strgm.grammars.ptb import clean_tree, read_mrg, tree_leaves
from strgm.grammars.unknown_words import grammar_known_words, is_signature, \
    map_sentence, restore_tree, treebank_pcfg

DATA = harness.TREEBANK


def load(lo: int, hi: int, collapse: bool = True) -> list:
    """Cleaned trees of wsj_<lo>..wsj_<hi> (the files present); gold trees for scoring
    keep X → X (``collapse=False``), as evalb does."""
    out = []
    for f in sorted(DATA.glob("wsj_*.mrg")):
        if lo <= int(f.stem.split("_")[1]) <= hi:
            out.extend(t for t in (clean_tree(x, collapse) for x in read_mrg(f))
                       if t is not None)
    return out


def parse_all(g, sents, decode: str) -> list:
    """Trees (restored, as ``strgm pcfg parse`` prints them) or None, per sentence."""
    cg = compile_grammar(g)
    mapped = sents
    if any(is_signature(t) for t in g.terminals):
        known, terms = grammar_known_words(g), frozenset(g.terminals)
        mapped = [map_sentence(s, known, terms) for s in sents]
    out = [None] * len(sents)
    for idx in batches_by_length(mapped, n_nts=cg.n_nts, max_chart_bytes=chart_limit(cg)):
        ch = inside(cg, [mapped[i] for i in idx])
        res = ch.viterbi() if decode == "viterbi" else ch.maxrule()
        for i, r in zip(idx, res):
            out[i] = None if r is None else restore_tree(r[0], sents[i], g)
    return out


def measure(train, gold, sents, h, decode, unk: int = 1) -> dict:
    """One grammar (Markov order ``h``, unknown-word threshold ``unk``) and decoder:
    scores and timings."""
    g, info = treebank_pcfg(train, threshold=unk, horizontal=h)
    t0 = time.perf_counter()
    parses = parse_all(g, sents, decode)
    secs = time.perf_counter() - t0
    longest = max(range(len(sents)), key=lambda i: len(sents[i]))
    t0 = time.perf_counter()
    parse_all(g, [sents[longest]], decode)
    t_long = time.perf_counter() - t0
    s = score_corpus(gold, parses).summary()
    return {"markov": "none" if h is None else h, "unk_threshold": unk, "decode": decode,
            **info,
            "compiled_nonterminals": compile_grammar(g).n_nts,
            "f1": s["f1"], "precision": s["precision"], "recall": s["recall"],
            "exact_match": s["exact_match"], "tagging_accuracy": s["tagging_accuracy"],
            "no_parse": s["failed"], "sentences": s["sentences"],
            "seconds_per_sentence": secs / len(sents),
            "longest_words": len(sents[longest]), "longest_seconds": t_long}


def no_parse_short(train, sents, h, max_words=10) -> dict:
    """Held-out sentences of ≤ max_words words without a parse: word terminals only
    (threshold 0, raw words) and with the signature back-off (threshold 1)."""
    short = [s for s in sents if len(s) <= max_words]
    out = {"short_sentences": len(short)}
    for name, k in (("words_only", 0), ("signatures", 1)):
        g, _ = treebank_pcfg(train, threshold=k, horizontal=h)
        out[name] = sum(p is None for p in parse_all(g, short, "viterbi"))
    return out


def markdown(rows, short, meta) -> str:
    """The results as a Markdown table."""
    head = ("| markov | unk | decode | rules | NTs | F1 | P | R | exact | tags | no parse | "
            "s/sentence | longest (words, s) |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
    body = "".join(
        f"| {r['markov']} | {r.get('unk_threshold', 1)} | {r['decode']} | {r['rules']} | "
        f"{r['compiled_nonterminals']} | "
        f"{100 * r['f1']:.2f} | {100 * r['precision']:.2f} | {100 * r['recall']:.2f} | "
        f"{100 * r['exact_match']:.1f} | {100 * r['tagging_accuracy']:.1f} | "
        f"{r['no_parse']} | {r['seconds_per_sentence']:.3f} | "
        f"{r['longest_words']}, {r['longest_seconds']:.2f} |\n" for r in rows)
    return (f"# Treebank PCFG on the WSJ sample (commit {meta['commit']})\n\n"
            f"Train wsj_{meta['train_files']} ({meta['train_trees']} trees), evaluate "
            f"wsj_{meta['test_files']}: "
            f"{meta['test_sentences']} sentences of at most {meta['max_length']} words "
            f"(of {meta['test_trees']}). Unknown words: threshold 1, signatures. "
            "Scores: evalb COLLINS.prm conventions.\n\n" + head + body +
            f"\nSentences of at most 10 words ({short['short_sentences']}) without a parse "
            f"(markov {short['markov']}): word terminals only {short['words_only']}, with "
            f"the signature back-off {short['signatures']}.\n\n"
            f"Command: `{meta['command']}` ({meta['total_seconds']:.0f} s in all).\n")


#: (train files, evaluated files): the test split of the results table, and the
#: development split on which defaults are chosen
SPLITS = {"test": ((1, 159), (160, 179)), "dev": ((1, 139), (140, 159))}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--markov", nargs="+", default=["none", "2", "1", "0"])
    ap.add_argument("--max-length", type=int, default=40)
    ap.add_argument("--default-markov", default="1")
    ap.add_argument("--split", choices=("test", "dev"), default="test")
    ap.add_argument("--unk-thresholds", type=int, nargs="+", default=[1],
                    help="unknown-word thresholds (words seen at most K times become "
                         "signatures) to measure with every Markov order")
    a = ap.parse_args(argv)
    (tr, te), name = SPLITS[a.split], "treebank_pcfg" + ("_dev" if a.split == "dev" else "")
    t_all = time.perf_counter()
    commit = harness.git_revision()
    train, test = load(*tr), load(*te, collapse=False)
    gold = [t for t in test if len(tree_leaves(t)) <= a.max_length]
    sents = [tree_leaves(t) for t in gold]
    rows = []
    for m in a.markov:
        h = None if m == "none" else int(m)
        for unk in a.unk_thresholds:
            for decode in ("viterbi", "maxrule"):
                rows.append(measure(train, gold, sents, h, decode, unk))
                print(json.dumps(rows[-1]), flush=True)
    hd = None if a.default_markov == "none" else int(a.default_markov)
    short = {"markov": a.default_markov, **no_parse_short(train, sents, hd)}
    meta = {"commit": commit, "train_trees": len(train), "test_trees": len(test),
            "train_files": f"{tr[0]:04d}-{tr[1]:04d}", "test_files": f"{te[0]:04d}-{te[1]:04d}",
            "test_sentences": len(sents), "max_length": a.max_length,
            "command": harness.command(__name__, argv),
            "total_seconds": time.perf_counter() - t_all}
    if a.unk_thresholds != [1]:
        name += "_unk"
    harness.write_json(name, {"meta": meta, "rows": rows, "no_parse_short": short})
    harness.write_markdown(name, markdown(rows, short, meta))
    print(markdown(rows, short, meta))
    return 0


if __name__ == "__main__":
    sys.exit(main())
