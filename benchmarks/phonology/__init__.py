"""Trained phonology: the textbook problems, synthetic acceptance, defaults chosen by
cross-validation, the diagnosis of misses, the rule family and its search, the harmony
tier, and the time and profile of ``strgm train``."""
