"""Shared test fixtures."""

import pytest

import reference.cudagraph as reference_module


@pytest.fixture(autouse=True)
def _leave_the_reference_launch_counter_as_found():
    """Some tests run the reference in this process; its class-level LaunchCounter.n must not
    leak from one test into another (test_template_contract checks a fresh counter)."""
    before = reference_module.LaunchCounter.n
    yield
    reference_module.LaunchCounter.n = before
