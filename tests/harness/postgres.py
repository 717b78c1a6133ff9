"""Harness fixture for postgres (see tests/conftest.py)."""
