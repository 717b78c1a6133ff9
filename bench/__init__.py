"""Benchmarks run by `make bench`.

Each module prints its figures beside a baseline measured in the same run.
"""
