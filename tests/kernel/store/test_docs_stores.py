"""docs/session-stores.md covers the whole contract and its example runs."""

from __future__ import annotations

import re
from pathlib import Path

from hermes.kernel.store import SessionStore

DOC = Path(__file__).resolve().parents[3] / "docs" / "session-stores.md"


def test_every_contract_method_is_documented() -> None:
    text = DOC.read_text(encoding="utf-8")
    abstract = sorted(SessionStore.__abstractmethods__)
    assert abstract, "the contract declares abstract methods"
    missing = [name for name in abstract if f"`{name}" not in text]
    assert missing == [], f"docs/session-stores.md does not mention: {missing}"


def test_the_conformance_example_is_importable_code() -> None:
    text = DOC.read_text(encoding="utf-8")
    [example] = [b for b in re.findall(r"```python\n(.*?)```", text, re.S) if "SessionStoreConformance" in b]
    compile(example, "docs/session-stores.md", "exec")
    from hermes.kernel.testing import store_suite

    assert "SessionStoreConformance" in store_suite.__all__


def test_every_config_key_is_documented() -> None:
    from hermes.kernel.config import DEFAULTS

    text = DOC.read_text(encoding="utf-8")
    for key in DEFAULTS["store"]:
        assert f"{key}:" in text, f"store.{key} is not in the config example"
