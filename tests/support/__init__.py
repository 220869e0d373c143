"""Helpers shared by the test modules: imported as ``tests.support.<module>``, never from a test file or conftest.

conftest.py sets the test environment (database, topic prefix) before any of these import ``citestream``.
"""
