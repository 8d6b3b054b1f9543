"""Benchmarks behind `ponte bench`."""
