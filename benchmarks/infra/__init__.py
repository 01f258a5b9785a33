"""Infrastructure: two revisions side by side, the distributed speed-up, the memory
guard, and the README's commands run from a wheel."""
