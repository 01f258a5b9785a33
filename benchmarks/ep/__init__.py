"""EP and BP on the phonology model: the PEP paper's Figures 3 and 4, EP's repairs, exact
against pruned BP; :mod:`benchmarks.ep.common` holds the methods, data and metrics the EP
and PEP benchmarks share."""
