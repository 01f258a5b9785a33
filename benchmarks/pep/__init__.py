"""Penalized EP: speed against pruned BP, the schedule, a profile, the textbook problems,
and the timing of the kernels its thresholds were chosen by (dense LU, q moments)."""
