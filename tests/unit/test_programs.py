"""Programs (issue 33) on the in-memory host: loops, groups, `break`, `continue` and `sleep` as the person sees them
(the lines, the status area, `/slash-chain`), bounded by the person and never by the model, and refused whole,
saying where, when they do not parse."""

import pytest

from slashkit.adapters.memory import Command, Local, MemoryHost, Prompt, Throws, Turns, failing_first
from slashkit.core.allowlist import CLAUDE_CODE
from slashkit.core.chain_machine import Outcome, Tally
from slashkit.core.interpreter import MAX_STEPS
from slashkit.core.policy import DEFAULT_RULE, MAX_LOOP_CAP, Rule, rule_for
from slashkit.core.saved_chain import SavedFile, library

COMMANDS: dict[str, Command] = {
    "check": Command(failing_first(2, "still red")),
    "fix": Command(Local()),
    "ok": Command(Local()),
    "x": Command(Local()),
    "bad": Command(Throws("it broke")),
    "ask": Command(Prompt("do it")),
    "config": Command(builtin=True),
    "compact": Command(builtin=True),
}


def loop_host(rule: Rule = DEFAULT_RULE, **commands: Command) -> MemoryHost:
    """A host with the commands above, some replaced (`commands`), under `rule`."""
    return MemoryHost(commands={**COMMANDS, **commands}, rule=rule)


def test_an_until_runs_its_body_until_its_condition_passes_with_a_line_per_iteration() -> None:
    h = loop_host()

    h.type("until /check; do /fix; done")

    assert h.runs == [("check", ""), ("fix", ""), ("check", ""), ("fix", ""), ("check", "")]
    assert h.answers == ["a program of 2 command(s) runs"]
    assert h.ui.lines == [
        "until 1/10",
        "1/2: /check",
        "/check failed: it failed: still red",
        "2/2: /fix",
        "until 2/10",
        "1/2: /check",
        "/check failed: it failed: still red",
        "2/2: /fix",
        "until 3/10",
        "1/2: /check",
        "ended: 3 succeeded, 2 failed, 0 skipped",
    ]
    assert h.outcomes == [Outcome("success", False, Tally(3, 2, 0))]


def test_the_status_area_shows_the_loop_the_step_and_what_comes_next() -> None:
    h = loop_host()

    h.type("until /check; do /fix; done")

    assert h.ui.statuses[:2] == ["until 1/10 · /check", "until 1/10 · /fix · next /check"]
    assert h.ui.statuses[-1] is None


def test_slash_chain_says_where_the_loop_is_as_the_status_area_does() -> None:
    h = loop_host(check=Command(Prompt("check it")))

    h.type("while /check; do /fix; done")
    h.type("/slash-chain")

    assert h.answers[-1] == "on · while 1/10 · /check · next /fix\n1. /check · running\n2. /fix · pending"


def test_a_while_whose_condition_always_passes_stops_at_its_cap_with_a_line_and_fails() -> None:
    h = loop_host()

    h.type("while /ok; do /x; done")

    assert h.runs.count(("ok", "")) == 10
    assert h.runs.count(("x", "")) == 10
    assert h.ui.lines[-2:] == [
        "while stopped: its body ran 10 times, its cap (SLASHKIT_LOOP_CAP raises it)",
        "ended: 20 succeeded, 0 failed, 0 skipped",
    ]
    assert h.outcomes == [Outcome("failure", False, Tally(20, 0, 0))]


def test_the_person_sets_the_cap_and_it_has_an_upper_bound() -> None:
    h = loop_host(rule=rule_for(CLAUDE_CODE, loop_cap="3"))

    h.type("while /ok; do /x; done")

    assert h.runs.count(("x", "")) == 3
    assert rule_for(CLAUDE_CODE, loop_cap=str(MAX_LOOP_CAP + 1)).loop_cap == DEFAULT_RULE.loop_cap
    assert rule_for(CLAUDE_CODE, loop_cap="0").loop_cap == DEFAULT_RULE.loop_cap
    assert rule_for(CLAUDE_CODE, loop_cap=str(MAX_LOOP_CAP)).loop_cap == MAX_LOOP_CAP


def test_a_cap_of_one_lets_a_loop_run_its_body_once() -> None:
    h = loop_host(rule=rule_for(CLAUDE_CODE, loop_cap="1"))

    h.type("while /ok; do /x; done")

    assert h.runs.count(("x", "")) == 1


def test_a_program_runs_a_bounded_number_of_steps_in_all() -> None:
    h = loop_host(rule=rule_for(CLAUDE_CODE, loop_cap=str(MAX_LOOP_CAP)))

    h.type("while /ok; do /x; done")

    assert len(h.runs) == MAX_STEPS
    assert h.ui.lines[-2:] == [
        f"stopped: the program ran {MAX_STEPS} steps, as many as one program may",
        f"ended: {MAX_STEPS} succeeded, 0 failed, 0 skipped",
    ]


def test_for_gives_each_word_to_its_name_and_break_leaves_the_loop() -> None:
    h = loop_host(x=Command(Turns((Local(), Throws("no"), Local()))))

    h.type("for w in a b c; do /x $w ${w}2 || break; done")

    assert h.runs == [("x", "a a2"), ("x", "b b2")]
    assert h.ui.lines == [
        "for 1/3: a",
        "1/1: /x a a2",
        "for 2/3: b",
        "1/1: /x b b2",
        "/x failed: it failed: no",
        "ended: 1 succeeded, 1 failed, 0 skipped",
    ]
    assert h.outcomes[-1].status == "success"


def test_continue_starts_the_next_iteration() -> None:
    h = loop_host()

    h.type("for w in a b; do /ok $w && continue; /x $w; done")

    assert h.runs == [("ok", "a"), ("ok", "b")]


def test_a_group_is_one_command_to_the_operators_around_it() -> None:
    h = loop_host()

    h.type("{ /ok && /bad; } || /fix now")

    assert h.runs == [("ok", ""), ("bad", ""), ("fix", "now")]
    assert h.ui.lines[-1] == "ended: 2 succeeded, 1 failed, 0 skipped"


def test_a_program_after_a_typed_command_runs_from_it() -> None:
    h = loop_host()

    h.type("/ok && until /check; do /fix; done")

    assert h.runs[:2] == [("ok", ""), ("check", "")]
    assert h.ui.lines[:3] == ["1/3: /ok", "until 1/10", "2/3: /check"]


def test_sleep_waits_without_a_turn_shows_the_time_left_then_goes_on() -> None:
    h = loop_host()

    h.type("/ok && sleep 2m && /x")

    assert h.runs == [("ok", "")]
    assert h.ui.statuses[-1] == "sleep 2m left · then /x"
    h.clock.advance(60_000)
    assert h.ui.statuses[-1] == "sleep 1m left · then /x"
    assert h.runs == [("ok", "")]
    h.clock.advance(60_000)
    assert h.runs == [("ok", ""), ("x", "")]
    assert h.ui.lines[-1] == "all 2 command(s) ran"


@pytest.mark.parametrize("ends_it", ["a prompt", "/slash-chain stop"])
def test_the_persons_prompt_or_stop_ends_a_sleep_and_the_program(ends_it: str) -> None:
    h = loop_host()
    h.type("/ok && sleep 1h && /x")

    h.type("please stop" if ends_it == "a prompt" else "/slash-chain stop")
    h.clock.advance(3_600_000)

    assert h.runs[-1] != ("x", "")
    assert "cancelled; not run: /x" in h.ui.lines + h.answers
    assert h.outcomes[-1].cancelled


def test_a_saved_chain_over_several_lines_is_a_function_with_its_loop() -> None:
    h = loop_host()
    body = b"---\ndescription: Each part\n---\n# a fresh context per part\n"
    body += b"for p in $ARGUMENTS\ndo\n  /x $p\n  /compact\ndone\n"
    h.saved = library([SavedFile("each.md", ".slashkit/chains/each.md", body)])

    h.type("/each api ui && /ok")

    assert h.runs == [("x", "api"), ("compact", ""), ("x", "ui"), ("compact", ""), ("ok", "")]
    assert h.answers == ["/each api ui runs 3 command(s)"]


def test_a_saved_chain_cannot_raise_a_built_in_past_the_rule_inside_a_loop() -> None:
    h = loop_host()
    h.saved = library(
        [SavedFile("sneak.md", ".slashkit/chains/sneak.md", b"for w in a b\ndo\n  /config set x\ndone\n")]
    )

    h.type("/sneak")

    assert ("config", "set x") not in h.runs
    assert h.ui.lines[1].startswith("skipped 1/1: /config set x (only the person may run /config")


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("until /check; do /fix", "not run: done was expected, not the end (column 22)"),
        ("/ok && until /check; do /fix", "not run: done was expected, not the end (column 29)"),
        ("/ok && /x || break", "not run: break is not inside a loop (column 14)"),
        ("for w in a; do /x; done; }", "not run: a command was expected, not '}' (column 26)"),
        ("{ " * 17 + "/ok" + "; }" * 17, "not run: it nests more than 16 deep (column 33)"),
    ],
)
def test_a_program_that_does_not_parse_runs_nothing_and_says_where(line: str, why: str) -> None:
    h = loop_host()

    h.type(line)

    assert h.runs == []
    assert h.answers == [why]


def test_a_prompt_that_only_starts_with_a_loop_word_is_the_persons_prompt() -> None:
    h = loop_host()

    h.type("while you are at it, fix the typo; do not touch the tests; done means green")
    h.type("for the record, this is fine")

    assert h.runs == []
    assert h.answers == []
    assert h.ui.lines == []


def test_a_loop_typed_while_a_chain_runs_replaces_it() -> None:
    h = loop_host()
    h.type("/ask && /x")

    h.type("for w in a; do /ok $w; done")

    assert h.ui.lines[1] == "cancelled; not run: /x"
    assert h.runs[-1] == ("ok", "a")


def test_with_chains_off_a_loop_line_is_a_prompt() -> None:
    h = loop_host()
    h.type("/slash-chain off")

    h.type("until /check; do /fix; done")

    assert h.runs == [("slash-chain", "off")]


def test_a_prompt_step_inside_a_loop_tells_the_model_what_runs_next_either_way() -> None:
    h = loop_host(fix=Command(Prompt("fix it")))

    h.type("for w in a b; do /fix $w; done")

    assert h.prompts[0].endswith(
        "[slash-chain] This is step 1/1 of a chain; after it: /fix. If you could not do what this step asks, call "
        "the mcp__slash-chain__fail tool with the reason before you end your turn: after a failure /fix runs next."
    )


# A typed program reads the host's command list as a typed chain does.


def test_a_program_from_elsewhere_runs_the_hosts_commands_and_skips_a_name_the_host_does_not_list() -> None:
    h = loop_host()

    h.type("{ /ok; /unknown; }", origin="plugin")

    assert h.runs == [("ok", "")]
    assert h.ui.lines == [
        "1/2: /ok",
        "skipped 2/2: /unknown (only the person may run /unknown, and this came from plugin)",
        "ended: 1 succeeded, 0 failed, 1 skipped",
    ]


@pytest.mark.parametrize("name", ["x", "loop"])  # a command the host listed; a built-in it did not
def test_a_program_runs_the_hosts_command_not_a_saved_chain_of_that_name(name: str) -> None:
    h = loop_host()
    h.saved = library([SavedFile(f"{name}.md", f".slashkit/chains/{name}.md", b"/ok planted")])

    h.type(f"{{ /{name}; }}")

    assert h.runs == [(name, "")]


def test_a_sleep_waits_its_last_second_too() -> None:
    h = loop_host()

    h.type("/ok && sleep 61 && /x")
    h.clock.advance(60_000)

    assert h.ui.statuses[-1] == "sleep 1s left · then /x"
    assert h.runs == [("ok", "")]
    h.clock.advance(1_000)
    assert h.runs == [("ok", ""), ("x", "")]


ASK = "is it green?"
NOTE = (
    "\n\n[slash-chain] This is step {number} of a chain; after it: {after}. If you could not do what this step "
    "asks, call the mcp__slash-chain__fail tool with the reason before you end your turn: after a failure {failure}."
)


@pytest.mark.parametrize(
    ("line", "number", "after", "failure"),
    [
        ("until /ask; do /fix; done; /after", "1/3", "/after", "/fix runs next"),
        ("until /ask; do /fix; done", "1/2", "none", "/fix runs next"),
        ("while /fix; do /ask; done || /after", "2/3", "/fix", "/fix runs next"),
        ("/bad ; while /ask; do /fix; done", "2/3", "/fix", "none of them runs"),  # a failure before does not count
    ],
)
def test_a_step_in_a_loop_tells_the_model_what_runs_after_it_either_way(
    line: str, number: str, after: str, failure: str
) -> None:
    commands = {"ask": Command(Prompt(ASK)), "fix": Command(Local()), "after": Command(Local())}
    h = MemoryHost(commands={**commands, "bad": Command(Throws("broke"))})

    h.type(line)
    h.settle()

    assert h.prompts == [ASK + NOTE.format(number=number, after=after, failure=failure)]


def test_a_shell_step_after_a_sleep_still_runs_on_the_persons_word() -> None:
    h = loop_host()

    h.type("/ok && sleep 1m && !touch made.txt")
    h.clock.advance(60_000)

    assert [text for _, text in h.shell.started] == ["touch made.txt"]


def test_a_sleep_that_ends_the_program_shows_only_the_time_left() -> None:
    h = loop_host()

    h.type("/ok && sleep 1m")
    h.type("/slash-chain")

    assert h.ui.statuses[-1] == "sleep 1m left"
    assert h.answers[-1] == "on · sleep 1m left\n1. /ok · done"


def test_a_loops_condition_after_a_failure_still_shows_the_body_as_next() -> None:
    h = MemoryHost(commands={"bad": Command(Throws("broke")), "check": Command(Prompt("check")), "x": Command(Local())})

    h.type("/bad ; while /check; do /x; done")
    h.settle()

    assert h.ui.statuses[-1] == "while 1/10 · /check · next /x"


def test_steps_during_a_sleep_that_starts_the_program_lists_every_step_pending() -> None:
    h = loop_host()

    h.type("{ sleep 1m; /x; }")
    h.type("/slash-chain steps")

    assert h.answers[-1] == "1. /x · pending"


@pytest.mark.parametrize("line", ["/ok && /x && /doctor", "/ok && sleep 1m && /doctor"])
def test_a_chain_from_elsewhere_runs_a_built_in_the_person_allowed_at_any_step(line: str) -> None:
    commands = {"doctor": Command(Local(), builtin=True)}
    h = loop_host(rule=rule_for(CLAUDE_CODE, "doctor"), **commands)

    h.type(line, origin="plugin")
    h.clock.advance(60_000)
    h.settle()

    assert h.runs[-1] == ("doctor", "")


def test_a_program_lists_its_steps_in_the_status_after_a_sleep_too() -> None:
    h = loop_host(ask=Command(Prompt("do it")))

    h.type("/ok && sleep 1m && /ask && /x")
    h.clock.advance(60_000)
    h.settle()
    h.type("/slash-chain")

    assert h.answers[-1] == (
        "on · 2/3 /ask, waiting for its turn; next: && /x\n1. /ok · done\n2. /ask · running\n3. /x · pending"
    )
