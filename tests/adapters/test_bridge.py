"""The bridge's Python end: the wire format it reads and writes, and the session it carries."""

import json
from pathlib import Path
from typing import Any

import pytest
from returns.result import Success

from slashkit.adapters.bridge import protocol as p
from slashkit.adapters.bridge.bridge import Bridge
from slashkit.adapters.memory import DictEnvironment
from slashkit.core import chain_machine as m
from slashkit.core import texts
from slashkit.core.chain import Step
from slashkit.core.forecast import MAX_AHEAD
from slashkit.core.saved_chain import SavedFile, library
from slashkit.core.texts import FAIL_TOOL_ID, HANDED_CUT, MAX_HANDED, Key, fail_note


def message(event: str, **e: Any) -> bytes:
    return json.dumps({"v": 3, "event": event, "e": e}).encode()


def send(bridge: Bridge, event: str, **e: Any) -> dict[str, Any]:
    decoded = p.decode(message(event, **e))
    assert isinstance(decoded, Success), decoded
    written: dict[str, Any] = json.loads(p.encode(bridge.handle(decoded.unwrap().event)))
    return written


def logs(answer: dict[str, Any]) -> list[str]:
    return [fx["text"] for fx in answer["effects"] if fx["kind"] == "log"]


def doing(effects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The effects but the status area's text."""
    return [fx for fx in effects if fx["kind"] != "progress"]


@pytest.fixture
def bridge() -> Bridge:
    return Bridge(DictEnvironment())


class TestDecode:
    @pytest.mark.parametrize(
        ("body", "why"),
        [
            (b"not json", "request is not JSON"),
            (b"[1]", "request is not a version 3 bridge message"),
            (json.dumps({"v": 1, "event": "TimerFired", "e": {"token": 1}}).encode(), "not a version 3"),
            (message("no.such.event"), "unknown event 'no.such.event'"),
            (
                message("TimerFired", token="one"),
                "bad TimerFired event: invalid value for type, expected int @ $.token",
            ),
            (message("TimerFired", token=1, extra=True), "extra fields found (extra)"),
            (message("ChainTyped", command="a"), "bad ChainTyped event"),
            (b" " * (p.MAX_BODY + 1), "over the 1048576 byte limit"),
            (b"[" * 65 + b"]" * 65, "request nests deeper than 64 levels"),
            (b'"' + b"[" * 100 + b'"', "not a version 3"),
            (b"\xff{}", "request is not JSON"),
            (b"[" + b"1" * 4301 + b"]", "a number of more than 32 characters"),
            (b"[1e400]", "the number 1e400, which is not finite"),
            (b"[NaN]", "the number NaN, which JSON does not have"),
            (json.dumps({"v": True, "event": "TimerFired", "e": {"token": 1}}).encode(), "not a version 3"),
            (json.dumps({"v": 3, "seq": True, "event": "TimerFired", "e": {"token": 1}}).encode(), "seq is True"),
            # A key the request does not have, beside the four it does: the client is out of step.
            (
                json.dumps({"v": 3, "seq": 1, "event": "TimerFired", "e": {"token": 1}, "session": "x"}).encode(),
                "unknown request key(s) 'session'",
            ),
            (
                json.dumps({"v": 3, "event": "TimerFired"}).encode(),
                "bad TimerFired event: e is NoneType, not an object",
            ),
            (json.dumps({"v": 3, "event": "TimerFired", "e": [["token", 1]]}).encode(), "e is list, not an object"),
        ],
    )
    def test_a_request_it_cannot_read_is_refused_with_one_line_saying_why(self, body: bytes, why: str) -> None:
        decoded = p.decode(body)
        assert not isinstance(decoded, Success)
        assert why in decoded.failure()
        assert "\n" not in decoded.failure()

    @pytest.mark.parametrize("builtins", ["model", {"model": 1}, None, 5, ["model", 1]], ids=repr)
    @pytest.mark.parametrize(
        ("event", "e"),
        [("SkillAnswered", {"skill": "model", "is_error": True}), ("ControlAnswered", {"is_error": True})],
    )
    def test_builtins_is_read_only_from_an_array_of_strings(self, event: str, e: dict[str, Any], builtins: Any) -> None:
        # cattrs reads any iterable into a tuple: the string "model" would be the five built-ins m, o, d, e, l.
        decoded = p.decode(message(event, **e, builtins=builtins))
        assert not isinstance(decoded, Success), decoded
        assert f"bad {event} event: invalid value for type, expected" in decoded.failure()
        assert "@ $.builtins" in decoded.failure()

    def test_a_refused_request_still_names_its_seq_when_it_holds_one(self) -> None:
        assert p.seq_of(json.dumps({"v": 3, "seq": 7, "event": "TimerFired", "e": {"token": "x"}}).encode()) == 7
        assert p.seq_of(b'{"seq": true}') is None
        assert p.seq_of(b"{not json") is None

    def test_an_answer_is_ascii_and_reads_back_to_the_same_strings(self) -> None:
        text = "\udcff \U0001f600 \u2028"
        written = p.encode(p.Answer(1, frozenset(), m.CommandAnswer(text), (m.Log(text),)))
        assert written.isascii()
        assert json.loads(written)["reply"]["text"] == json.loads(written)["effects"][0]["text"] == text

    def test_every_event_the_mod_sends_is_read(self) -> None:
        assert isinstance(p.decode(message("PromptSubmitted", text="hi", origin="")), Success)
        answered = message("SkillAnswered", skill="compact", is_error=True, builtins=["compact"])
        assert isinstance(p.decode(answered), Success)

    def test_the_core_events_are_read_into_the_cores_own_classes(self) -> None:
        read = p.decode(message("FailCalled", reason={"why": [1, "x"]}, agent=None)).unwrap()
        assert read.event == m.FailCalled({"why": [1, "x"]}, None)
        read = p.decode(message("PaneOpened", pane="board", focus=True, placed=False)).unwrap()
        assert read.event == m.PaneOpened("board", focus=True, placed=False)


class TestChains:
    def test_a_chain_runs_through_its_events_with_the_reference_lines(self, bridge: Bridge) -> None:
        typed = send(bridge, "ChainTyped", command="cost", args="&& /context", origin="sdk", enabled=True)
        head = {k: typed["reply"][k] for k in ("kind", "args", "token")}
        assert head == {"kind": "run.typed", "args": "", "token": 1}
        assert logs(typed) == ["1/2: /cost"]
        ran = send(bridge, "RunEnded", token=1)
        assert logs(ran) == ["2/2: /context"]
        timer = send(bridge, "TimerFired", token=ran["effects"][1]["token"])
        run = timer["effects"][0]
        assert (run["kind"], run["command"]) == ("run", "context")
        assert doing(run["then"]) == [{"kind": "log", "text": "all 2 command(s) ran"}]
        done = send(bridge, "RunEnded", token=run["token"])
        assert logs(done) == ["all 2 command(s) ran"]
        assert done["wants"] == []

    @pytest.mark.parametrize("state", ["a file", "a corrupt database"])
    def test_a_journal_that_cannot_be_used_is_one_line_and_the_chain_runs_in_memory(
        self, tmp_path: Path, state: str
    ) -> None:
        home = tmp_path / "state"
        if state == "a file":
            home.write_text("not a folder")
        else:
            (home / "slashkit").mkdir(parents=True)
            (home / "slashkit" / "runs.sqlite3").write_bytes(b"not a database" * 100)
        bridge = Bridge(DictEnvironment({"CLAUDE_CODE_SESSION_ID": "s1", "XDG_STATE_HOME": str(home)}))

        typed = send(bridge, "ChainTyped", command="cost", args="&& /context", origin="sdk", enabled=True)
        ran = send(bridge, "RunEnded", token=1)

        assert len(logs(typed)) == 2 and logs(typed)[0] == "1/2: /cost"
        assert logs(typed)[1].startswith("slashkit: the journal of running chains is unavailable (")
        assert logs(typed)[1].endswith("); chains still run, kept in memory")
        assert logs(ran) == ["2/2: /context"]

    def test_the_stored_setting_the_mod_read_decides_and_a_change_goes_back_as_an_effect(self, bridge: Bridge) -> None:
        assert send(bridge, "ChainTyped", command="a", args="&& /b", origin="composer", enabled=False)["reply"] is None
        off = send(bridge, "ChainCommandTyped", args="on", enabled=False)
        assert off["reply"] == {"kind": "command.answer", "text": "on: /a && /b runs /b once /a ended well"}
        assert {"kind": "save.enabled", "enabled": True} in off["effects"]

    def test_the_typed_command_carries_what_its_end_does_all_the_way_to_the_last_line(self, bridge: Bridge) -> None:
        typed = send(bridge, "ChainTyped", command="a", args="&& /b && /c", origin="composer", enabled=True)
        step_two, after = doing(typed["reply"]["then"])
        assert step_two == {"kind": "log", "text": "2/3: /b"}
        [run_b] = after["fires"]
        assert run_b["command"] == "b"
        step_three, after_b = doing(run_b["then"])
        assert step_three == {"kind": "log", "text": "3/3: /c"}
        [run_c] = after_b["fires"]
        assert doing(run_c["then"]) == [{"kind": "log", "text": "all 3 command(s) ran"}]
        # The mod carries all of it out as it comes, and says so each time; the helper adds nothing.
        assert send(bridge, "RunEnded", token=1, applied=True)["effects"] == []
        assert send(bridge, "TimerFired", token=after["token"], applied=True)["effects"] == []
        assert send(bridge, "RunEnded", token=run_b["token"], applied=True)["effects"] == []
        assert send(bridge, "TimerFired", token=after_b["token"], applied=True)["effects"] == []
        assert send(bridge, "RunEnded", token=run_c["token"], applied=True)["effects"] == []
        assert bridge.state.chains.running is None

    def test_events_are_handled_in_the_order_the_mod_sent_them(self, bridge: Bridge) -> None:
        import threading

        typed = (
            p.decode(message("ChainTyped", command="a", args="&& /b", origin="composer", enabled=True)).unwrap().event
        )
        status = p.decode(message("ChainCommandTyped", args="", enabled=True)).unwrap().event
        answers: dict[int, p.Answer] = {}
        later = threading.Thread(target=lambda: answers.__setitem__(2, bridge.handle(status, seq=2)))
        later.start()
        answers[1] = bridge.handle(typed, seq=1)
        later.join(timeout=5)
        assert answers[2].reply == m.CommandAnswer("on · 1/2 /a, running")
        assert (answers[1].version, answers[2].version) == (1, 2)

    def test_a_timer_carries_what_it_will_do_and_an_applied_one_is_not_done_twice(self, bridge: Bridge) -> None:
        send(bridge, "ChainTyped", command="a", args="&& /b", origin="composer", enabled=True)
        after = send(bridge, "RunEnded", token=1)["effects"][1]
        assert after["kind"] == "after"
        assert [fx["command"] for fx in after["fires"]] == ["b"]
        fired = send(bridge, "TimerFired", token=after["token"], applied=True)
        assert fired["effects"] == []
        done = send(bridge, "RunEnded", token=after["fires"][0]["token"], applied=True)
        assert done["effects"] == []
        assert bridge.state.chains.running is None

    def test_an_applied_forecast_that_went_stale_is_not_trusted(self, bridge: Bridge) -> None:
        send(bridge, "ChainTyped", command="a", args="&& /b", origin="composer", enabled=True)
        after = send(bridge, "RunEnded", token=1)["effects"][1]
        cancelled = send(bridge, "PromptSubmitted", text="something else", origin="composer")
        assert logs(cancelled) == ["cancelled"]  # /b was already the running step
        assert send(bridge, "TimerFired", token=after["token"], applied=True)["effects"] == []
        assert bridge.state.chains.running is None

    def test_a_chain_past_what_a_forecast_reaches_runs_to_its_end_asking_for_the_rest(self, bridge: Bridge) -> None:
        # Plays the client (client.ts): a forecast is carried out and reported `applied`; without one, the helper
        # is asked. An unbounded forecast once nested a level per step, past the recursion limit at 123 steps.
        total = 300
        args = "&& " + " && ".join(f"/s{i}" for i in range(2, total + 1))
        typed = send(bridge, "ChainTyped", command="s1", args=args, origin="composer", enabled=True)
        lines = logs(typed)
        work: list[tuple[str, int, list[dict[str, Any]] | None]] = [
            ("RunEnded", typed["reply"]["token"], typed["reply"]["then"])
        ]
        asked = 0
        while work:
            event, token, foreseen = work.pop(0)
            if foreseen is None:
                asked += 1
                effects = send(bridge, event, token=token)["effects"]
            else:
                assert send(bridge, event, token=token, applied=True)["effects"] == []
                effects = foreseen
            for fx in effects:
                match fx["kind"]:
                    case "log":
                        lines.append(fx["text"])
                    case "after":
                        work.append(("TimerFired", fx["token"], fx.get("fires")))
                    case "run":
                        work.append(("RunEnded", fx["token"], fx.get("then")))
        assert lines == [*(f"{i}/{total}: /s{i}" for i in range(1, total + 1)), f"all {total} command(s) ran"]
        assert 0 < asked < total  # forecasts carried most of it, and asking carried the rest
        assert bridge.state.chains.running is None
        assert bridge.state.pending == {}

    def test_the_longest_text_the_client_sends_is_read_and_a_pipe_says_it_was_cut(self, bridge: Bridge) -> None:
        # The client cuts a run's text to MAX_TEXT (`bounded`, wire.ts): written as JSON at its longest, 6 bytes a
        # character, it is still a request the helper reads, and longer than a `|` hands on, so the next step is
        # told the text was cut.
        send(bridge, "ChainTyped", command="a", args="| /b", origin="composer", enabled=True)
        ended = json.dumps({"v": 3, "event": "RunEnded", "e": {"token": 1, "error": None, "output": "\0" * p.MAX_TEXT}})
        assert len(ended) > 6 * p.MAX_TEXT
        decoded = p.decode(ended.encode())
        assert isinstance(decoded, Success), decoded
        after = doing(json.loads(p.encode(bridge.handle(decoded.unwrap().event)))["effects"])[-1]
        run = send(bridge, "TimerFired", token=after["token"])["effects"][-1]
        assert run["args"].endswith(HANDED_CUT.format(limit=MAX_HANDED))

    def test_the_deepest_forecast_is_as_deep_as_the_client_takes(self, bridge: Bridge) -> None:
        # The client takes an answer nested MAX_AHEAD deep and refuses a deeper one as garbage: its bound is this one,
        # generated into wire.ts (shim.client_files), and tests/node/client.test.ts holds it to both sides of it.
        typed = send(
            bridge, "ChainTyped", command="a", args="&& " + " && ".join(["/b"] * 100), origin="sdk", enabled=True
        )

        def levels(fx: dict[str, Any]) -> int:
            inner = fx.get("then") or fx.get("fires") or []
            return 1 + max(map(levels, inner), default=0) if inner else 0

        assert levels(typed["reply"]) == MAX_AHEAD

    def test_chains_that_replace_one_another_leave_only_the_running_steps_tokens(self, bridge: Bridge) -> None:
        # A host that never reports the typed runs of replaced chains once made the state grow by one token each,
        # and every event copy all of them.
        for n in range(200):
            send(bridge, "ChainTyped", command="a", args=f"{n} && /b", origin="plugin", enabled=True)
        assert list(bridge.state.pending) == [200]
        send(bridge, "RunEnded", token=200)
        assert [type(what).__name__ for what in bridge.state.pending.values()] == ["StartTimer"]

    def test_a_prompt_step_amends_its_prompt_and_the_fail_tool_answers(self, bridge: Bridge) -> None:
        send(bridge, "ChainTyped", command="review", args="x && /b", origin="composer", enabled=True)
        prompt = send(bridge, "PromptHanded", text="review x\n")
        assert prompt["reply"]["kind"] == "prompt"
        assert prompt["reply"]["text"].startswith("review x\n\n[slash-chain] This is step 1/2 of a chain")
        assert send(bridge, "FailCalled", reason=" ", agent=None)["reply"]["kind"] == "deny"
        stopped = send(bridge, "FailCalled", reason="no diff", agent=None)
        answered = {"kind": "tool.answer", "text": "The chain stopped; the steps after this one do not run."}
        assert stopped["reply"] == answered
        assert logs(stopped) == ["stopped after /review: the model reported it failed: no diff; not run: /b"]

    @pytest.mark.parametrize("named", ["slash-chain_fail", None])
    def test_the_fail_note_names_the_tool_as_the_host_named_it(self, named: str | None) -> None:
        # A host that gives the model the fail tool under its own name starts the helper saying so.
        bridge = Bridge(DictEnvironment({}), named)
        note_names = named or FAIL_TOOL_ID
        send(bridge, "ChainTyped", command="review", args="x && /b", origin="composer", enabled=True)
        note = send(bridge, "PromptHanded", text="review x")["reply"]["text"].split("\n\n", 1)[1]
        assert note == fail_note(1, 2, [Step("b", "")], note_names)
        send(bridge, "ChainTyped", command="review", args="x || /b", origin="composer", enabled=True)
        mixed = send(bridge, "PromptHanded", text="review x")["reply"]["text"]
        assert f"call the {note_names} tool" in mixed


class TestSelfCommands:
    @pytest.fixture
    def lich(self) -> Bridge:
        return Bridge(DictEnvironment({"LICH_SESSION_ID": "lich-1"}))

    def test_an_interactive_session_inside_lich_redraws_the_descriptions(self, lich: Bridge) -> None:
        started = send(lich, "SessionStarted", interactive=True)
        assert started["effects"] == [{"kind": "invalidate"}]
        assert set(started["wants"]) == {"ToolDescribed", "SkillAnswered", "ControlAnswered"}
        described = send(lich, "ToolDescribed", tool="Skill", description="Execute a skill")
        assert described["reply"]["text"].startswith("Execute a skill\n\n[lich] Built-in slash commands")

    def test_a_refused_builtin_is_answered_as_a_loaded_skill_and_queued(self, lich: Bridge) -> None:
        send(lich, "SessionStarted", interactive=True)
        builtins = ["compact"]
        queued = send(lich, "SkillAnswered", skill="/compact", args=" now ", is_error=True, builtins=builtins)
        assert queued["reply"]["kind"] == "skill"
        assert queued["reply"]["command"] == "compact"
        assert "/compact now is queued" in queued["reply"]["note"]
        line, after = queued["effects"]
        assert line == {"kind": "log", "text": texts.text("en", Key.LOG_QUEUED, queued="/compact now")}
        runs = [(fx["command"], fx["args"]) for fx in after["fires"] if fx["kind"] == "run"]
        assert runs == [("compact", "now")]
        assert send(lich, "SkillAnswered", skill="deploy", is_error=True, builtins=builtins)["reply"] is None

    def test_model_is_denied_on_the_control_path_by_label_once_lich_says_who_this_is(self, lich: Bridge) -> None:
        send(lich, "SessionStarted", interactive=True)
        call = {"action": "command", "value": "model", "args": "opus", "is_error": True, "builtins": ["model"]}
        asked = send(lich, "ControlAnswered", target="FIX/X", **call)
        assert (asked["reply"]["kind"], asked["effects"]) == ("whoami", [])
        denied = send(lich, "WhoamiAnswered", token=asked["reply"]["token"], label="fix/x", name="proj-a1b2")
        assert denied["reply"]["kind"] == "deny"
        assert denied["effects"] == []

    def test_a_control_call_by_name_is_left_alone_when_lich_could_not_say(self, lich: Bridge) -> None:
        send(lich, "SessionStarted", interactive=True)
        call = {"action": "command", "value": "compact", "is_error": True, "builtins": ["compact"]}
        asked = send(lich, "ControlAnswered", target="proj-a1b2", **call)
        answered = send(lich, "WhoamiAnswered", token=asked["reply"]["token"], label=None, name=None)
        assert (answered["reply"], answered["effects"]) == (None, [])
        # An answer for a question this helper never asked (a restarted one's) leaves the native answer too.
        assert send(lich, "WhoamiAnswered", token=99, label="x", name="y")["reply"] is None

    def test_a_control_call_by_id_needs_no_question(self, lich: Bridge) -> None:
        send(lich, "SessionStarted", interactive=True)
        call = {"action": "command", "value": "compact", "is_error": True, "builtins": ["compact"]}
        queued = send(lich, "ControlAnswered", target="lich-1", **call)
        assert queued["reply"]["kind"] == "control"
        assert [fx["kind"] for fx in queued["effects"]] == ["log", "after"]

    def test_a_session_that_is_not_interactive_changes_nothing(self, lich: Bridge) -> None:
        started = send(lich, "SessionStarted", interactive=False)
        assert (started["effects"], started["wants"]) == ([], [])
        assert send(lich, "ToolDescribed", tool="Skill", description="Execute a skill")["reply"] is None


class TestBuiltinAsked:
    """A host's own self-command tool (pi's `slash-chain_builtin`) on the wire: the core queues or refuses."""

    @pytest.fixture
    def pi(self) -> Bridge:
        return Bridge(DictEnvironment(), "slash-chain_fail", "pi")

    def test_compact_is_queued_to_run_from_a_timer(self, pi: Bridge) -> None:
        queued = send(pi, "BuiltinAsked", command="compact", args=None, builtins=["compact"])
        assert queued["reply"] == {
            "kind": "tool.answer",
            "text": "/compact is queued and runs once this turn ends. End the turn now.",
        }
        _, after = queued["effects"]
        assert after["kind"] == "after"
        fired = send(pi, "TimerFired", token=after["token"])
        assert [fx["kind"] for fx in fired["effects"]] == ["log", "run"]
        assert fired["effects"][1]["command"] == "compact"

    def test_the_persons_switch_comes_with_the_call_and_is_saved_by_its_own_effect(self, pi: Bridge) -> None:
        # The host reads the switch from its store (BUILTIN_KEY) with each call, as it reads the on/off setting.
        off = send(pi, "BuiltinAsked", command="compact", args=None, builtins=["compact"], switched_on=False)
        assert (off["reply"]["kind"], off["effects"]) == ("deny", [])
        saved = send(pi, "ChainCommandTyped", args="builtin on", enabled=True)
        assert saved["effects"] == [{"kind": "save.builtin", "enabled": True}]
        assert saved["reply"] == {"kind": "command.answer", "text": texts.BUILTIN_ON_TEXT}

    def test_model_is_the_person_s_alone(self, pi: Bridge) -> None:
        denied = send(pi, "BuiltinAsked", command="model", args="x", builtins=["compact"])
        assert denied["reply"]["kind"] == "deny"
        assert denied["reply"]["text"].startswith("/model was not run: only the user sets")
        assert denied["effects"] == []

    def test_a_call_cut_to_the_wires_bound_is_refused_whole_not_queued_cut(self, pi: Bridge) -> None:
        # Attack of issue 34: pi's and omp's extension cut a 1 MiB call to the wire's MAX_TEXT; queued, the cut text
        # became /compact's instructions, and omp 18.2.3 was left spinning with the chain at its first step.
        cut = send(pi, "BuiltinAsked", command="compact", args="z" * p.MAX_TEXT, builtins=["compact"])
        assert cut["reply"] == {
            "kind": "deny",
            "text": "/compact was not run: its arguments are 65,536 characters, over the 4,000 a queued command may "
            "hold. Give shorter ones.",
        }
        assert cut["effects"] == []

    def test_a_lone_surrogate_on_the_wire_is_refused_not_run_as_u_fffd(self, pi: Bridge) -> None:
        lone = send(pi, "BuiltinAsked", command="compact", args="\ud800", builtins=["compact"])
        assert lone["reply"]["kind"] == "deny"
        assert lone["reply"]["text"].startswith("/compact was not run: its name or arguments hold a lone surrogate")
        assert lone["effects"] == []


class TestSavedChains:
    @pytest.fixture
    def bridge(self) -> Bridge:
        files = [
            SavedFile("ship.md", "/p/ship.md", b"---\ndescription: Ships\nargument-hint: <who>\n---\n/cost && /ctx"),
            SavedFile("cost.md", "/p/cost.md", b"/usage"),
            SavedFile("bad.md", "/p/bad.md", b"\xff"),
        ]
        return Bridge(DictEnvironment(), saved=lambda: library(files))

    def test_the_shim_is_told_which_saved_chains_to_offer_and_which_the_host_has(self, bridge: Bridge) -> None:
        asked = send(bridge, "SavedAsked", commands=["cost", "context"])

        assert asked["reply"] == {
            "kind": "saved",
            "chains": [{"name": "ship", "description": "Ships", "argument_hint": "<who>"}],
            "shadowed": ["cost"],
        }
        assert logs(asked) == ["saved chain /p/bad.md: it is not UTF-8 (byte 0)"]

    def test_a_saved_chain_typed_by_name_answers_and_runs_its_steps_showing_where_it_is(self, bridge: Bridge) -> None:
        typed = send(
            bridge, "ChainTyped", command="ship", args="", origin="composer", enabled=True, commands=["cost", "ctx"]
        )

        assert typed["reply"] == {"kind": "command.answer", "text": "/ship runs 2 command(s)"}
        line, after, progress = typed["effects"]
        assert (line, progress) == (
            {"kind": "log", "text": "1/2: /cost"},
            {"kind": "progress", "text": "chain 1/2: /cost · next /ctx"},
        )
        assert [fx["command"] for fx in after["fires"]] == ["cost"]
        run = after["fires"][0]
        assert run["then"][-1] == {"kind": "progress", "text": "chain 2/2: /ctx"}

    def test_the_saved_chains_are_never_taken_from_the_wire(self) -> None:
        decoded = p.decode(message("ChainTyped", command="x", args="", origin="composer", enabled=True, saved={}))

        assert decoded.failure() == "bad ChainTyped event: invalid value for type, expected Library @ $.saved"
