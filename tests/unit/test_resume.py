"""A program cut off when its session ended (issue 35), resumed only by the person (in-memory host): a continued
session says what was cut off and where; `/slash-chain resume` runs the interrupted step again, then the rest, with
its loop counters as they were; `forget` forgets it; anyone else's `resume` is refused."""

import hashlib

from slashkit.adapters.memory import Command, Local, MemoryHost, Prompt, failing_first
from slashkit.core.allowlist import CLAUDE_CODE
from slashkit.core.chain_machine import Continued, Cut, cut_of
from slashkit.core.policy import DEFAULT_RULE, Rule, rule_for
from slashkit.core.saved_chain import NO_SAVED, Library, SavedFile, library


def fresh(saved: Library = NO_SAVED, rule: Rule = DEFAULT_RULE) -> MemoryHost:
    commands = {"a": Command(Local()), "b": Command(Prompt("do b")), "c": Command(Local())}
    built_ins = {name: Command(Local(), builtin=True) for name in ("model", "doctor")}
    return MemoryHost(commands={**commands, **built_ins}, saved=saved, rule=rule)


def cut_where_it_waits(line: str, origin: str | None = None, saved: Library = NO_SAVED) -> Cut:
    """Where the chain `line` (typed by the person, or run from `origin`) stood once it first waited: on a step's
    turn, or in a `sleep`."""
    h = fresh(saved)
    if origin is None:
        h.type(line)
    else:
        command, args = line.removeprefix("/").split(" ", 1)
        h.run_command(command, args, origin)
    h.settle()
    running = h.session.chains.running
    assert running is not None
    return cut_of(running)


def cut_at_step_two() -> Cut:
    """Where `/a && /b x && /c` stood while `/b x` waited on its turn, as a journal kept it."""
    cut = cut_where_it_waits("/a && /b x && /c")
    assert cut.step.command == "b"
    return cut


def resuming(cut: Cut, saved: Library = NO_SAVED, rule: Rule = DEFAULT_RULE) -> MemoryHost:
    """A continued session whose person typed `/slash-chain resume` for `cut`, settled where the chain first waits."""
    h = fresh(saved, rule)
    h.handle(Continued(cut))
    h.type("/slash-chain resume")
    h.settle()
    return h


def resumed(cut: Cut, saved: Library = NO_SAVED, rule: Rule = DEFAULT_RULE) -> MemoryHost:
    """A continued session whose person resumed `cut`, its interrupted step's turn ended and its shell steps done."""
    h = resuming(cut, saved, rule)
    h.end_turn()
    h.settle()
    while h.shell.running:
        h.shell.finish()
        h.settle()
    return h


def test_a_continued_session_says_what_was_cut_off_and_runs_nothing_by_itself() -> None:
    h = fresh()

    h.handle(Continued(cut_at_step_two()))
    h.settle()

    assert h.ui.lines == [
        "the chain stopped at 2/3 /b x when the session ended; /slash-chain resume runs the rest, "
        "/slash-chain forget forgets it"
    ]
    assert h.runs == []


def test_resume_runs_the_interrupted_step_again_then_the_rest_never_the_step_before() -> None:
    h = fresh()
    h.handle(Continued(cut_at_step_two()))

    h.type("/slash-chain resume")
    h.settle()
    h.end_turn()

    assert [r for r in h.runs if r[0] != "slash-chain"] == [("b", "x"), ("c", "")]
    assert h.ui.lines[1:] == [
        "resumed: 2/3 /b x was interrupted and runs again, then the rest",
        "2/3: /b x",
        "3/3: /c",
        "all 3 command(s) ran",
    ]


def test_a_loop_cut_off_in_its_third_iteration_resumes_in_its_third_iteration() -> None:
    commands = {"check": Command(failing_first(5, "red")), "fix": Command(Prompt("fix it"))}
    first = MemoryHost(commands=dict(commands))
    first.type("until /check; do /fix; done")
    first.settle()
    for _ in range(2):
        first.end_turn()
    running = first.session.chains.running
    assert running is not None and running.where.loops[-1].iteration == 3 and running.step.command == "fix"

    h = MemoryHost(commands=dict(commands))
    h.handle(Continued(cut_of(running)))
    h.type("/slash-chain resume")
    h.settle()

    assert h.ui.lines[1:] == ["resumed: 2/2 /fix was interrupted and runs again, then the rest", "2/2: /fix"]
    assert h.ui.statuses[-1] == "until 3/10 · /fix · next /check"
    assert h.runs[1:] == [("fix", "")]  # the condition that failed in iteration 3 is not asked again


def test_forget_forgets_and_nothing_is_left_to_resume() -> None:
    h = fresh()
    h.handle(Continued(cut_at_step_two()))

    h.type("/slash-chain forget")
    h.type("/slash-chain resume")

    assert h.answers == [
        "forgot the chain cut off at 2/3 /b x",
        "no chain was cut off in this session: nothing to resume",
    ]
    assert [r for r in h.runs if r[0] != "slash-chain"] == []


def test_only_the_persons_typing_resumes() -> None:
    h = fresh()
    h.handle(Continued(cut_at_step_two()))

    h.run_command("slash-chain", "resume", "plugin")
    h.settle()

    assert [r for r in h.runs if r[0] != "slash-chain"] == []
    assert h.answers == ["/slash-chain was not run: only the person may run /slash-chain, and this came from plugin"]


def test_resume_while_another_chain_runs_cancels_that_one_first_as_stop_would() -> None:
    h = fresh()
    h.handle(Continued(cut_at_step_two()))
    h.type("/b now && /a")
    h.settle()

    h.type("/slash-chain resume")
    h.settle()
    h.end_turn()

    assert h.ui.lines[1:] == [
        "1/2: /b now",
        "cancelled; not run: /a",
        "resumed: 2/3 /b x was interrupted and runs again, then the rest",
        "2/3: /b x",
        "3/3: /c",
        "all 3 command(s) ran",
    ]
    assert [r for r in h.runs if r[0] != "slash-chain"] == [("b", "now"), ("b", "x"), ("c", "")]
    assert [(o.status, o.cancelled) for o in h.outcomes] == [("failure", True), ("success", False)]


def test_resume_answers_the_command_with_where_the_chain_goes_on() -> None:
    h = fresh()
    h.handle(Continued(cut_at_step_two()))

    h.type("/slash-chain resume")

    assert h.answers == ["resumed: 2/3 /b x was interrupted and runs again, then the rest"]


def test_forget_with_nothing_cut_off_says_so() -> None:
    h = fresh()

    h.type("/slash-chain forget")

    assert h.answers == ["no chain was cut off in this session: nothing to resume"]


def test_a_chain_the_person_typed_runs_its_shell_step_when_resumed() -> None:
    h = resumed(cut_where_it_waits("/b x && !touch typed.txt"))

    assert [text for _, text in h.shell.started] == ["touch typed.txt"]
    assert h.ui.lines[-2:] == ["2/2: !touch typed.txt", "all 2 command(s) ran"]


def test_a_resumed_project_chain_the_person_approved_still_runs_its_shell_step() -> None:
    ship = b"/b ship && !touch made.txt\n"
    project = SavedFile("ship.md", "/work/p/.slashkit/chains/ship.md", ship)
    saved = library([], [project], [(project.source, hashlib.sha256(ship).hexdigest())])

    h = resumed(cut_where_it_waits("/ship", saved=saved), saved)

    assert [text for _, text in h.shell.started] == ["touch made.txt"]
    assert h.ui.lines[-1] == "all 2 command(s) ran"


def test_resume_keeps_who_started_the_chain_so_the_persons_word_lifts_nothing() -> None:
    # Attack: a plugin's chain holding /model, cut off; the person's `resume` must not make it the person's.
    h = resumed(cut_where_it_waits("/b x && /model opus", origin="plugin"))

    assert ("model", "opus") not in h.runs
    assert h.ui.lines[-2:] == [
        "skipped 2/2: /model opus (only the person may run /model, and this came from plugin)",
        "ended: 1 succeeded, 0 failed, 1 skipped",
    ]


def test_a_resumed_chain_of_more_than_and_lists_its_steps_in_the_status() -> None:
    h = resuming(cut_where_it_waits("/b x ; /c"))

    h.type("/slash-chain")

    assert h.answers[-1] == "on · 1/2 /b x, waiting for its turn; next: ; /c\n1. /b x · running\n2. /c · pending"


def test_a_chain_cut_off_in_a_sleep_says_so_and_sleeps_again_when_resumed() -> None:
    h = fresh()
    h.handle(Continued(cut_where_it_waits("/a && sleep 1m && /c")))

    h.type("/slash-chain resume")
    h.type("/slash-chain steps")

    assert h.ui.lines == [
        "the chain stopped at sleep 1m after step 1/2 when the session ended; /slash-chain resume runs the rest, "
        "/slash-chain forget forgets it",
        "resumed: sleep 1m after step 1/2 was interrupted and runs again, then the rest",
    ]
    assert h.answers[-1] == "1. /a · done\n2. /c · pending"
    assert h.ui.statuses[-1] == "sleep 1m left · then /c"
    h.clock.advance(60_000)
    assert h.runs[-1] == ("c", "")
    assert h.ui.lines[-2:] == ["2/2: /c", "all 2 command(s) ran"]


def test_a_sleep_first_in_a_program_is_cut_off_before_its_first_step() -> None:
    h = fresh()
    h.handle(Continued(cut_where_it_waits("{ sleep 90; /c; }")))
    h.type("/slash-chain forget")

    assert h.answers == ["forgot the chain cut off at sleep 1m 30s before step 1/1"]


def test_a_hosts_own_sleep_command_is_a_step_like_any_other() -> None:
    h = MemoryHost(commands={"sleep": Command(Local()), "b": Command(Prompt("do b"))})
    h.type("/sleep 5 && /b x")
    h.settle()
    running = h.session.chains.running
    assert running is not None

    assert h.ui.lines == ["1/2: /sleep 5", "2/2: /b x"]
    assert cut_of(running).step.name == "/b x"


def test_a_resumed_chain_runs_under_the_sessions_rule_as_it_is_now() -> None:
    # The person has since let anyone run /doctor (SLASHKIT_ALLOW): the plugin's chain may run it now.
    cut = cut_where_it_waits("/b x && /doctor", origin="plugin")

    h = resumed(cut, rule=rule_for(CLAUDE_CODE, "doctor"))

    assert h.runs[-1] == ("doctor", "")
    assert h.ui.lines[-1] == "all 2 command(s) ran"


def test_once_resumed_nothing_is_left_to_resume_and_the_next_chain_runs() -> None:
    h = resumed(cut_at_step_two())

    h.type("/slash-chain resume")
    h.type("/a && /c")

    assert h.answers[-1] == "no chain was cut off in this session: nothing to resume"
    assert h.runs[-2:] == [("a", ""), ("c", "")]
    assert h.ui.lines[-1] == "all 2 command(s) ran"


def test_a_chain_typed_over_a_resumed_one_is_reported_started_as_a_chain_of_its_own() -> None:
    # A harness shows each step as it starts: the new chain's first step is the same place (1/2) as the resumed one's.
    h = resuming(cut_where_it_waits("/b x && /c"))

    h.type("/b y && /c")
    h.settle()

    assert h.started == ["1/2 /b x", "1/2 /b y"]


def test_a_continued_session_with_nothing_cut_off_says_nothing() -> None:
    h = fresh()

    h.handle(Continued(None))
    h.type("/slash-chain resume")

    assert h.ui.lines == []
    assert h.answers == ["no chain was cut off in this session: nothing to resume"]


def test_a_cut_off_chain_told_while_a_chain_runs_is_not_offered() -> None:
    h = fresh()
    h.type("/b now && /a")
    h.settle()

    h.handle(Continued(cut_at_step_two()))

    assert h.ui.lines == ["1/2: /b now"]
    assert h.session.chains.cut is None
