"""``strgm train --blocks N`` (with ``--scheduler``: on a Dask cluster): EM's E-steps split
over blocks of words (:mod:`strgm.models.em_blocks`)."""

from __future__ import annotations

import contextlib
import sys

from strgm.errors import OptionError


def check_blocks(args, spec) -> None:
    """``--blocks`` needs a method whose messages are automata; refused before any
    work."""
    from strgm.inference.blocks import BLOCK_METHODS

    if args.blocks and args.method not in BLOCK_METHODS:
        raise OptionError("--method", args.method, "an E-step split over blocks of words "
                          "(--blocks) runs " + " or ".join(BLOCK_METHODS))


@contextlib.contextmanager
def e_steps_in_blocks(args, spec, progress):
    """Within the body, E-steps run in ``--blocks`` blocks of words, on the
    ``--scheduler`` cluster when one is given; without ``--blocks`` nothing changes (one
    FILE then runs here: a split E-step was slower than the unsplit one on every
    paradigm measured, docs/architecture.md §1)."""
    if not args.blocks:
        if spec is not None:
            print("strgm: note: --scheduler runs one task per file; a single file runs "
                  "here unless --blocks N splits its E-steps", file=sys.stderr)
        yield
        return
    from strgm.distributed.cluster import open_pool
    from strgm.models.em_blocks import block_e_step

    with open_pool(spec) as pool:
        with block_e_step(args.blocks, pool if pool.distributed else None):
            if spec is not None and progress is not None:
                progress(f"E-steps split over {args.blocks} blocks of words on "
                         f"{pool.n_workers} workers")
            yield
