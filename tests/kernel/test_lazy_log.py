"""LazyLogger and when_logging_loads: logging arrives with the first record, handlers with logging."""

from __future__ import annotations

import subprocess
import sys

from hermes.kernel.lazy_log import LazyLogger


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


def test_the_callback_waits_for_the_first_import_of_logging_then_runs_once() -> None:
    result = _run(
        "import sys\n"
        "from hermes.kernel.lazy_log import when_logging_loads\n"
        "calls = []\n"
        "when_logging_loads(lambda: calls.append(sys.modules['logging'].getLogger))\n"
        "assert calls == [] and 'logging' not in sys.modules\n"
        "import logging\n"
        "import logging\n"
        "assert len(calls) == 1 and calls[0] is logging.getLogger, calls\n"
        "when_logging_loads(lambda: calls.append(2))\n"  # already imported: runs at once
        "assert calls[-1] == 2\n"
        "print(sum(type(f).__name__ == '_Watch' for f in sys.meta_path))\n"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "0"  # the finder stepped aside


def test_a_lazy_loggers_record_reaches_a_handler_installed_when_logging_loaded() -> None:
    result = _run(
        "import sys\n"
        "from hermes.kernel.lazy_log import LazyLogger, when_logging_loads\n"
        "def setup():\n"
        "    import logging\n"
        "    h = logging.StreamHandler(sys.stdout)\n"
        "    h.setFormatter(logging.Formatter('%(name)s %(levelname)s %(message)s'))\n"
        "    logging.getLogger('hermes').addHandler(h)\n"
        "when_logging_loads(setup)\n"
        "log = LazyLogger('hermes.kernel.thing')\n"
        "assert 'logging' not in sys.modules\n"
        "log.warning('disk %s is full', 'sda')\n"
        "import logging\n"
        "logging.getLogger('hermes.plugins.other').warning('plain logger too')\n"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "hermes.kernel.thing WARNING disk sda is full",
        "hermes.plugins.other WARNING plain logger too",
    ]


def test_a_lazy_logger_is_the_named_logger() -> None:
    import logging

    log = LazyLogger("hermes.test.lazy")
    assert log.getEffectiveLevel() == logging.getLogger("hermes.test.lazy").getEffectiveLevel()
    assert log.name == "hermes.test.lazy"
    assert "hermes.test.lazy" in repr(log)
