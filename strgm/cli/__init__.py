"""The ``strgm`` command line (a layer of docs/architecture.md §1): one module per command
group, on top of the use cases of :mod:`strgm.workflows`.

    app        the parser and ``main`` (exit statuses, one-line errors, ``--debug``)
    errors     one error prefix for every failure; argparse errors on one line
    common     output checks before any work, progress, option re-labelling
    paradigm   ``infer``, ``demo``, ``graph``      beliefs   ``beliefs``
    train      ``train`` (EM)                       pcfg      ``pcfg train|parse``
    report     tables and JSON summaries for users

``python -m strgm.cli`` and the ``strgm`` script (``strgm.cli:main``) run :func:`main`.
"""

from strgm.cli.app import build_parser, main

__all__ = ["build_parser", "main"]
