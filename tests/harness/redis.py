"""Harness fixture for redis (see tests/conftest.py)."""
