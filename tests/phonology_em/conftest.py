# Make ``helpers_pem`` (and the synthetic generator loader below) importable however pytest
# is invoked: from the repository root, from this directory, or with --import-mode=importlib.
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
