"""What the model is told a failure of its step leads to, in a chain with operators besides `&&`: a `|` hands on
only what a step that ended well returned, so the step after it is passed over too."""

from slashkit.adapters.memory import Local, Prompt, host


def test_the_note_says_a_step_a_pipe_follows_does_not_run_after_a_failure() -> None:
    h = host(review=Prompt("review the change"), commit=Local(), notify=Local())

    h.type("/review | /commit ; /notify")

    assert h.prompts[0].endswith("after a failure /notify runs next, and /commit does not.")


def test_the_note_says_nothing_runs_after_a_failure_when_only_a_pipe_follows() -> None:
    h = host(review=Prompt("review the change"), commit=Local(), notify=Local())

    h.type("/review | /commit && /notify")

    assert h.prompts[0].endswith("after a failure none of them runs.")
