"""Harness fixture for kafka (see tests/conftest.py)."""
