"""The Codex host's parts that need no Codex: the chain command's words through the shared loop, and reading
`skills/list`."""

import pytest

from slashkit.adapters import __version__
from slashkit.adapters.codex.host import CLIENT, CodexSession, skill_paths
from slashkit.adapters.memory import DictStore
from slashkit.core import texts


def test_status_off_and_on_answer_as_the_chain_command_does_and_save_the_setting() -> None:
    store = DictStore()
    session = CodexSession("codex", store=store)
    assert session.status() == "on · no chain runs"
    assert session.off().startswith("off")
    assert store.get("enabled") is False
    assert session.on().startswith("on")
    assert store.get("enabled") is True
    assert session.stop() == "no chain runs"


def test_skill_paths_keep_the_first_enabled_skill_of_each_name_and_drop_what_is_malformed() -> None:
    listed: dict[str, object] = {
        "data": [
            {
                "skills": [
                    {"name": "greet", "path": "/p/greet/SKILL.md", "enabled": True},
                    {"name": "off", "path": "/p/off/SKILL.md", "enabled": False},
                    {"name": 5, "path": "/p/x"},
                    "garbage",
                ]
            },
            {"skills": [{"name": "greet", "path": "/home/greet/SKILL.md"}, {"name": "lint", "path": "/h/lint"}]},
            "garbage",
        ]
    }
    assert skill_paths(listed) == {"greet": "/p/greet/SKILL.md", "lint": "/h/lint"}
    assert skill_paths({"data": "nope"}) == {}


def test_the_model_gets_the_fail_tool_and_with_self_commands_slash_chain_builtin_as_pi_names_it() -> None:
    assert [tool["name"] for tool in CodexSession("codex")._tools()] == ["fail"]
    fail, builtin = CodexSession("codex", self_commands=True, language="es")._tools()
    assert (fail["name"], builtin["name"]) == ("fail", "slash-chain_builtin")
    assert builtin["inputSchema"] == texts.BUILTIN_SCHEMA
    assert builtin["description"] == texts.text("es", texts.Key.SELF_TOOL_NOTE)


def test_the_client_names_the_packages_version() -> None:
    assert CLIENT["version"] == __version__


def test_a_setting_no_harness_host_takes_is_refused_by_name_as_python_refuses_it() -> None:
    with pytest.raises(TypeError, match="CodexSession\\(\\) got an unexpected keyword argument 'self_command'"):
        CodexSession("codex", self_command=True)  # type: ignore[call-arg]
