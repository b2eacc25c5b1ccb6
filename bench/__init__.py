"""Benchmarks of the book's build and of its instruments (not tests: timings are noisy)."""
