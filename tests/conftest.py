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


@pytest.fixture(autouse=True, scope="session")
def _private_observation_cache(tmp_path_factory):
    """``graphgrade grade`` caches observations in the user's cache folder by default; tests
    (and the graders they start) use a folder of their own."""
    import os

    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))
    yield
    if old is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = old
