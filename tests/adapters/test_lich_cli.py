"""Tests for the lich CLI adapter, run against a fake lich executable in real processes."""

import json
import resource
import time
from pathlib import Path

import pytest
from returns.result import Failure, Success

from slashkit.adapters.lich_cli import (
    NO_BIN_WHY,
    NO_IDENTITY_WHY,
    NOT_JSON_WHY,
    OUTPUT_CAP,
    LichEnvironment,
    LichWhoami,
)
from slashkit.core.ports import Identity
from tests.support.fake_lich import WHOAMI, FakeLich, Mode, write_fake_lich

#: The most a run may take under the 2 s timeout: the kill, the reaping and a loaded machine's start-up of the
#: fake fit in the rest (measured on a 2-core Linux VM under load: 2.00-2.07 s for a run killed at the deadline).
WITHIN_TIMEOUT = 3.5


def ask(fake: FakeLich) -> object:
    return LichWhoami(LichEnvironment(session_id="lich-1", bin=str(fake.path), prompt_lang=None)).whoami()


def timed_ask(fake: FakeLich) -> tuple[object, float]:
    """Asks the fake and says how many seconds the answer took."""
    started = time.monotonic()
    outcome = ask(fake)
    return outcome, time.monotonic() - started


def peak_rss_mib() -> float:
    """The test process's peak resident memory so far, in MiB (Linux counts ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def is_gone(pid: int) -> bool:
    """Tells whether `pid` has ended (a zombie counts: it runs nothing), waiting a moment for the kill to land."""
    stat = Path(f"/proc/{pid}/stat")
    for _ in range(100):
        if not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] == "Z":
            return True
        time.sleep(0.01)
    return False


class TestLichWhoami:
    def test_whoami_returns_the_label_and_name_lich_prints(self, tmp_path: Path) -> None:
        assert ask(write_fake_lich(tmp_path)) == Success(Identity("fix/x", "lich-plugin-a1b2"))

    def test_whoami_runs_exactly_lich_bin_whoami_json(self, tmp_path: Path) -> None:
        fake = write_fake_lich(tmp_path)
        ask(fake)
        assert [run.argv for run in fake.invocations()] == [(str(fake.path), "whoami", "--json")]

    def test_a_lich_without_whoami_is_a_failure_naming_its_error_line(self, tmp_path: Path) -> None:
        assert ask(write_fake_lich(tmp_path, "unknown-command")) == Failure(
            'lich whoami exited 1: lich: unknown command "whoami"'
        )

    def test_a_hung_lich_is_killed_with_its_children_within_the_timeout(self, tmp_path: Path) -> None:
        fake = write_fake_lich(tmp_path, "hang")
        outcome, seconds = timed_ask(fake)
        assert seconds < WITHIN_TIMEOUT
        assert outcome == Failure("lich whoami did not answer within 2 s")
        [run] = fake.invocations()
        assert len(run.pids) == 2
        assert all(map(is_gone, run.pids))

    def test_a_lich_that_keeps_writing_below_the_cap_is_killed_at_the_timeout(self, tmp_path: Path) -> None:
        fake = write_fake_lich(tmp_path, "trickle")
        outcome, seconds = timed_ask(fake)
        assert seconds < WITHIN_TIMEOUT
        assert outcome == Failure("lich whoami did not answer within 2 s")
        [run] = fake.invocations()
        assert all(map(is_gone, run.pids))

    def test_a_grandchild_holding_the_pipes_after_lich_exited_is_killed_at_the_timeout(self, tmp_path: Path) -> None:
        fake = write_fake_lich(tmp_path, "orphan")
        outcome, seconds = timed_ask(fake)
        assert seconds < WITHIN_TIMEOUT
        assert outcome == Failure("lich whoami did not answer within 2 s")
        [run] = fake.invocations()
        assert len(run.pids) == 2
        assert all(map(is_gone, run.pids))

    @pytest.mark.parametrize(
        ("mode", "whoami", "why"),
        [
            ("garbage", WHOAMI, NOT_JSON_WHY),
            # Nesting past the recursion limit of json's parser, unclosed or well-formed, is bad output too.
            ("deep-array", WHOAMI, NOT_JSON_WHY),
            ("deep-object", WHOAMI, NOT_JSON_WHY),
            ("missing-fields", WHOAMI, NO_IDENTITY_WHY),
            ("answer", [{"label": "fix/x", "name": "lich-plugin-a1b2"}], NO_IDENTITY_WHY),
            ("answer", "fix/x", NO_IDENTITY_WHY),
            ("answer", None, NO_IDENTITY_WHY),
            ("answer", {"label": 1, "name": "lich-plugin-a1b2"}, NO_IDENTITY_WHY),
            ("answer", {"label": "fix/x", "name": None}, NO_IDENTITY_WHY),
        ],
    )
    def test_output_that_is_not_an_object_with_a_string_label_and_name_is_a_failure(
        self, tmp_path: Path, mode: Mode, whoami: object, why: str
    ) -> None:
        assert ask(write_fake_lich(tmp_path, mode, whoami)) == Failure(why)

    def test_a_missing_binary_is_a_failure(self, tmp_path: Path) -> None:
        missing = tmp_path / "lich"
        assert ask(FakeLich(missing, tmp_path / "log")) == Failure(
            f"lich could not be run: [Errno 2] No such file or directory: '{missing}'"
        )

    def test_a_binary_that_cannot_be_executed_is_a_failure(self, tmp_path: Path) -> None:
        fake = write_fake_lich(tmp_path)
        fake.path.chmod(0o644)
        assert ask(fake) == Failure(f"lich could not be run: [Errno 13] Permission denied: '{fake.path}'")
        assert fake.invocations() == []

    def test_without_lich_bin_it_runs_nothing_not_even_a_lich_on_path(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        fake = write_fake_lich(tmp_path)
        monkeypatch.setenv("PATH", str(tmp_path))
        env = LichEnvironment.from_environ({"LICH_SESSION_ID": "lich-1"})
        assert LichWhoami(env).whoami() == Failure(NO_BIN_WHY)
        assert fake.invocations() == []


class TestLichWhoamiBoundsWhatItReads:
    """Whoami answers in a few hundred bytes; past OUTPUT_CAP on either stream lich is stopped and ignored."""

    def test_endless_stdout_is_stopped_at_the_cap_long_before_the_timeout(self, tmp_path: Path) -> None:
        fake = write_fake_lich(tmp_path, "flood-stdout")
        peak_before = peak_rss_mib()
        outcome, seconds = timed_ask(fake)
        assert outcome == Failure("lich whoami wrote more than 64 KiB to stdout, so it was stopped and ignored")
        assert seconds < WITHIN_TIMEOUT
        assert peak_rss_mib() - peak_before < 32
        [run] = fake.invocations()
        assert all(map(is_gone, run.pids))

    def test_a_300_mb_json_answer_is_refused_unparsed(self, tmp_path: Path) -> None:
        fake = write_fake_lich(tmp_path, "huge-answer")
        peak_before = peak_rss_mib()
        outcome, seconds = timed_ask(fake)
        assert outcome == Failure("lich whoami wrote more than 64 KiB to stdout, so it was stopped and ignored")
        assert seconds < WITHIN_TIMEOUT
        assert peak_rss_mib() - peak_before < 32

    def test_200_mb_of_stderr_is_refused_and_never_becomes_the_reason(self, tmp_path: Path) -> None:
        fake = write_fake_lich(tmp_path, "flood-stderr")
        peak_before = peak_rss_mib()
        outcome, seconds = timed_ask(fake)
        assert outcome == Failure("lich whoami wrote more than 64 KiB to stderr, so it was stopped and ignored")
        assert seconds < WITHIN_TIMEOUT
        assert peak_rss_mib() - peak_before < 32

    @pytest.mark.parametrize(("extra", "answered"), [(0, True), (1, False)])
    def test_an_answer_of_exactly_the_cap_is_read_and_one_byte_more_is_not(
        self, tmp_path: Path, extra: int, answered: bool
    ) -> None:
        # print() adds a newline to the JSON: pad the object so that the line is the cap plus `extra` bytes.
        padless = len(json.dumps({**WHOAMI, "pad": ""})) + 1
        whoami = {**WHOAMI, "pad": "x" * (OUTPUT_CAP - padless + extra)}
        outcome = ask(write_fake_lich(tmp_path, "answer", whoami))
        if answered:
            assert outcome == Success(Identity("fix/x", "lich-plugin-a1b2"))
        else:
            assert outcome == Failure("lich whoami wrote more than 64 KiB to stdout, so it was stopped and ignored")

    def test_the_reason_taken_from_stderr_is_its_first_line_cut_short_with_escapes_shown(self, tmp_path: Path) -> None:
        outcome = ask(write_fake_lich(tmp_path, "long-error"))
        assert isinstance(outcome, Failure)
        why = outcome.failure()
        assert why.startswith("lich whoami exited 1: lich: \\x1b[31mno no no ")
        assert why.endswith("…")
        assert len(why) <= 250
        assert why.isprintable()


class TestLichBin:
    """LICH_BIN must be the absolute path lich exports; anything else is refused, and PATH is never searched."""

    @pytest.mark.parametrize("name", ["lich", "./lich", "bin/../lich"])
    def test_a_lich_bin_that_is_not_absolute_is_a_failure_and_runs_nothing(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
    ) -> None:
        fake = write_fake_lich(tmp_path)
        (tmp_path / "bin").mkdir()
        monkeypatch.setenv("PATH", str(tmp_path))
        monkeypatch.chdir(tmp_path)
        env = LichEnvironment(session_id="lich-1", bin=name, prompt_lang=None)
        assert LichWhoami(env).whoami() == Failure(
            f"LICH_BIN must be an absolute path, as lich exports it, and {name!r} is not: PATH is never searched"
        )
        assert fake.invocations() == []


class TestLichEnvironment:
    def test_reads_the_three_lich_variables(self) -> None:
        environ = {"LICH_SESSION_ID": "lich-1", "LICH_BIN": "/opt/lich", "LICH_PROMPT_LANG": "pt-BR", "HOME": "/"}
        assert LichEnvironment.from_environ(environ) == LichEnvironment("lich-1", "/opt/lich", "pt-BR")

    def test_an_empty_variable_counts_as_unset(self) -> None:
        environ = {"LICH_SESSION_ID": "", "LICH_BIN": "", "LICH_PROMPT_LANG": ""}
        assert LichEnvironment.from_environ(environ) == LichEnvironment(None, None, None)

    def test_a_missing_variable_is_none(self) -> None:
        assert LichEnvironment.from_environ({}) == LichEnvironment(None, None, None)
