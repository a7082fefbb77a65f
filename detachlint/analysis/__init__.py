"""Shared facts that rules ask for, computed once per module."""
