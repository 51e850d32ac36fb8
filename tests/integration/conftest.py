import pytest

from hearthtest import EXAMPLES, Daemon


@pytest.fixture
def daemon_factory():
    started = []

    def start(paths, **kw):
        d = Daemon(paths, **kw)
        started.append(d)
        return d

    yield start
    for d in started:
        try:
            d.stop()
        finally:
            d.cleanup()


@pytest.fixture
def examples(daemon_factory):
    """The daemon serving copies of the bundled examples."""
    return daemon_factory([EXAMPLES / "todo-manager", EXAMPLES / "todo-manager-js", EXAMPLES / "notes",
                           EXAMPLES / "contacts"])
