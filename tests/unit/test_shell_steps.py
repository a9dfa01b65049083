"""Shell steps (issue 34) on the in-memory host: `!cmd` runs on the person's word alone (their typing, their own saved
chains, a project's saved chain whose exact content they approved), its exit status is the step's, its output is
shown and handed on by `|`; the model, a pipe and an unapproved file never run one. The shell itself is a fake here
(`ScriptedShell`): tests/unit/test_shell_runner.py runs a real `/bin/sh`."""

import hashlib

from slashkit.adapters.memory import Command, Local, MemoryHost, Prompt
from slashkit.core.chain_machine import Outcome, Tally
from slashkit.core.saved_chain import SavedFile, library

COMMANDS: dict[str, Command] = {"tiny": Command(Local()), "ask": Command(Prompt("do it")), "fix": Command(Local())}
SHIP = b"/tiny a && !touch made.txt\n"


def host(
    person: list[SavedFile] | None = None,
    project: list[SavedFile] | None = None,
    approved: list[tuple[str, str]] | tuple[()] = (),
) -> MemoryHost:
    saved = library(person or [], project or [], approved)
    return MemoryHost(commands=dict(COMMANDS), saved=saved)


def project_file(data: bytes = SHIP, name: str = "ship") -> SavedFile:
    return SavedFile(f"{name}.md", f"/work/p/.slashkit/chains/{name}.md", data)


def test_the_persons_typed_until_is_decided_by_the_shells_exit_status() -> None:
    h = host()

    h.type("until !sh flaky.sh; do /tiny again; done")
    h.shell.finish("it exited with status 1", "not yet\n")
    h.settle()
    h.shell.finish("it exited with status 1", "")
    h.settle()
    h.shell.finish(None, "green\n")
    h.settle()

    assert [text for _, text in h.shell.started] == ["sh flaky.sh"] * 3
    assert h.runs == [("tiny", "again"), ("tiny", "again")]
    assert h.ui.lines == [
        "until 1/10",
        "1/2: !sh flaky.sh",
        "not yet",
        "!sh failed: it exited with status 1",
        "2/2: /tiny again",
        "until 2/10",
        "1/2: !sh flaky.sh",
        "!sh failed: it exited with status 1",
        "2/2: /tiny again",
        "until 3/10",
        "1/2: !sh flaky.sh",
        "green",
        "ended: 3 succeeded, 2 failed, 0 skipped",
    ]


def test_a_typed_chain_runs_its_shell_step_after_the_command_before_it() -> None:
    h = host()

    h.type("/tiny a && !touch made.txt")
    h.shell.finish()
    h.settle()

    assert h.runs == [("tiny", "a")]
    assert h.shell.started == [(h.shell.started[0][0], "touch made.txt")]
    assert h.ui.lines == ["1/2: /tiny a", "2/2: !touch made.txt", "all 2 command(s) ran"]


def test_a_failing_shell_step_stops_a_chain_of_and_as_a_failing_command_does() -> None:
    h = host()

    h.type("/tiny a && !false && /fix")
    h.shell.finish("it exited with status 1", "")
    h.settle()

    assert h.runs == [("tiny", "a")]
    assert h.ui.lines[-1] == "stopped after !false: it exited with status 1; not run: /fix"
    assert h.outcomes[-1] == Outcome("failure", False, Tally(1, 1, 1))


def test_a_shell_steps_output_is_what_a_pipe_hands_on() -> None:
    h = host()

    h.type("/tiny x && !git diff | /fix")
    h.shell.finish(None, "+ a line\n")
    h.settle()

    assert h.runs == [("tiny", "x"), ("fix", "+ a line\n")]


def test_the_model_or_another_plugin_never_runs_a_shell_step() -> None:
    h = host()

    h.type("/tiny a && !touch x", origin="plugin")
    h.settle()

    assert h.shell.started == []
    assert h.runs == [("tiny", "a")]
    why = "a shell step runs only on the person's word, and this came from plugin"
    assert f"skipped 2/2: !touch x ({why})" in h.ui.lines


def test_the_persons_own_saved_chain_run_by_a_plugin_runs_no_shell_step_and_names_the_plugin() -> None:
    h = host(person=[SavedFile("ship.md", "/home/me/.config/slashkit/chains/ship.md", SHIP)])

    h.type("/tiny x && /ship", origin="plugin")
    h.settle()

    assert h.shell.started == []
    why = "a shell step runs only on the person's word, and this came from plugin"
    assert h.ui.lines[-2] == f"skipped 3/3: !touch made.txt ({why})"


def test_a_shell_step_never_takes_text_a_pipe_hands_on() -> None:
    h = host()

    h.type("/tiny a | !sh")

    assert h.shell.started == []
    assert h.runs == []
    assert len(h.answers) == 1
    assert "a shell step takes no text from a pipe (|)" in h.answers[0]


def test_the_persons_own_saved_chain_runs_its_shell_steps() -> None:
    h = host(person=[SavedFile("ship.md", "/home/me/.config/slashkit/chains/ship.md", SHIP)])

    h.type("/ship")
    h.shell.finish()
    h.settle()

    assert [text for _, text in h.shell.started] == ["touch made.txt"]
    assert h.ui.lines[-1] == "all 2 command(s) ran"


def test_an_unapproved_project_chain_with_a_shell_step_runs_nothing_and_says_what_to_type() -> None:
    h = host(project=[project_file()])

    h.type("/ship")
    h.settle()

    assert h.shell.started == []
    assert h.runs == []
    assert h.answers == [
        "/ship was not run: /work/p/.slashkit/chains/ship.md comes with the project and holds shell steps, so nothing "
        "of it runs until you approve its content as it is now: type /slash-chain allow ship"
    ]


def test_the_person_approves_a_project_chain_and_a_changed_file_needs_approving_again() -> None:
    h = host(project=[project_file()])

    h.type("/slash-chain allow ship")

    digest = hashlib.sha256(SHIP).hexdigest()
    assert h.approvals.approved == [("/work/p/.slashkit/chains/ship.md", digest)]
    assert h.answers[-1].startswith(f"approved /ship (/work/p/.slashkit/chains/ship.md, sha256 {digest[:12]})")

    approved = host(project=[project_file()], approved=h.approvals.approved)
    approved.type("/ship")
    approved.shell.finish()
    approved.settle()
    assert [text for _, text in approved.shell.started] == ["touch made.txt"]

    changed = host(project=[project_file(SHIP + b"!rm -rf ~\n")], approved=h.approvals.approved)
    changed.type("/ship")
    changed.settle()
    assert changed.shell.started == []
    assert changed.runs == []
    assert "/slash-chain allow ship" in changed.answers[-1]


def test_only_the_persons_typing_approves() -> None:
    h = host(project=[project_file()])

    h.run_command("slash-chain", "allow ship", "plugin")
    h.type("/tiny a && /slash-chain allow ship", origin="plugin")
    h.settle()

    assert h.approvals.approved == []


def test_allow_names_one_saved_chain() -> None:
    h = host(person=[SavedFile("own.md", "/home/me/own.md", b"!true\n")], project=[project_file()])

    for args in ("allow", "allow ship ship", "allow nope", "allow own"):
        h.type(f"/slash-chain {args}")

    assert h.answers == [
        "allow takes the name of one saved chain: /slash-chain allow NAME",
        "allow takes the name of one saved chain: /slash-chain allow NAME",
        "no saved chain is named /nope; /slash-chain list names them",
        "/own is your own (/home/me/own.md): its shell steps run without approval",
    ]
    assert h.approvals.approved == []


def test_stopping_the_chain_ends_its_running_shell_step() -> None:
    h = host()

    h.type("/tiny a && !sleep 600 && /fix")
    h.settle()
    [(token, _)] = h.shell.started
    h.type("/slash-chain stop")

    assert h.shell.stopped == [token]
    assert ("fix", "") not in h.runs


def test_a_host_without_a_shell_fails_the_step_saying_so() -> None:
    h = MemoryHost(commands=dict(COMMANDS))
    h.driver._shell = None  # an embedding that gives the driver no shell port

    h.type("/tiny a ; !true ; /fix")
    h.settle()

    assert "!true failed: this host runs no shell steps" in h.ui.lines
    assert h.runs == [("tiny", "a"), ("fix", "")]


def test_a_project_chain_never_fills_the_persons_own_shell_step_with_its_arguments() -> None:
    # Attack: an unapproved project file holds no shell step, but calls the person's own chain whose step takes $1.
    own = SavedFile("push.md", "/home/me/.config/slashkit/chains/push.md", b"!git push $1\n")
    h = host(person=[own], project=[project_file(b"/push --force origin\n", "evil")])

    h.type("/evil")
    h.settle()

    assert h.shell.started == []
    why = "a shell step runs only on the person's word, and this came from saved chain evil"
    assert h.ui.lines == [f"skipped 1/1: !git push --force ({why})", "ended: 0 succeeded, 0 failed, 1 skipped"]

    h.type("/push --dry-run")  # the person's own typing fills it
    assert [text for _, text in h.shell.started] == ["git push --dry-run"]


def test_a_step_the_runner_ended_at_its_timeout_fails_and_the_program_goes_on_by_its_operators() -> None:
    h = host()

    h.type("/tiny a && !npm test || /fix")
    h.shell.finish("it ran past its timeout of 10m and was ended", "[slash-chain: only the last 200 lines ...]\nok 1")
    h.settle()

    assert h.runs == [("tiny", "a"), ("fix", "")]
    assert "!npm failed: it ran past its timeout of 10m and was ended" in h.ui.lines
    assert "ok 1" in "\n".join(h.ui.lines)


def test_the_persons_next_prompt_ends_the_running_shell_step() -> None:
    h = host()

    h.type("/tiny a && !sleep 600 && /fix")
    h.settle()
    [(token, _)] = h.shell.started
    h.type("never mind, do something else")

    assert h.shell.stopped == [token]
    assert h.ui.lines[-1] == "cancelled; not run: /fix"


def test_a_chain_from_elsewhere_is_still_from_elsewhere_after_a_sleep() -> None:
    # Attack: a plugin's chain waits out a sleep, hoping its shell step then passes for the person's.
    h = host()

    h.type("/tiny a && sleep 1m && !touch x", origin="plugin")
    h.clock.advance(60_000)
    h.settle()

    assert h.shell.started == []
    why = "a shell step runs only on the person's word, and this came from plugin"
    assert h.ui.lines[-2] == f"skipped 2/2: !touch x ({why})"


def test_the_persons_own_saved_chain_runs_its_shell_step_after_a_sleep() -> None:
    h = host(person=[SavedFile("nap.md", "/home/me/.config/slashkit/chains/nap.md", b"sleep 1m && !touch made.txt\n")])

    h.type("/tiny && /nap")
    h.clock.advance(60_000)
    h.shell.finish()
    h.settle()

    assert [text for _, text in h.shell.started] == ["touch made.txt"]
    assert h.ui.lines[-1] == "all 2 command(s) ran"
