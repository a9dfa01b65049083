"""The committed message types of `codex app-server` are what scripts/codex_protocol.py writes from the pinned
Codex CLI's own schema."""

import importlib.util
from types import ModuleType

from slashkit.adapters.codex import protocol
from tests.support.codex_cli import ROOT, codex_binary


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("codex_protocol", ROOT / "scripts" / "codex_protocol.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_protocol_module_is_what_the_generator_writes_from_the_pinned_codex() -> None:
    script = generator()
    wanted = script.generated(codex_binary())
    assert script.TARGET.read_text() == wanted, "out of date: run python scripts/codex_protocol.py, then commit"


def test_the_methods_the_host_uses_are_in_the_pinned_version() -> None:
    assert (ROOT / "scripts" / "setup.sh").read_text().split('CODEX_VERSION="')[1][:7] == protocol.CODEX_VERSION
    used = {"initialize", "skills/list", "thread/start", "turn/start", "turn/interrupt", "thread/compact/start"}
    assert used | {"review/start"} <= protocol.CLIENT_REQUESTS
    assert "item/tool/call" in protocol.SERVER_REQUESTS
    assert {"turn/started", "turn/completed", "item/completed", "error"} <= protocol.SERVER_NOTIFICATIONS
