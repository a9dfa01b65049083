"""The self-command use case: gates on lich, amends tool descriptions and takes native refusals, applying
the decisions of `slashkit.core.self_command` through ports."""

from collections.abc import Callable, Collection
from typing import Final

from returns.result import Failure

from slashkit.core import self_command as sc
from slashkit.core import texts
from slashkit.core.policy import DEFAULT_RULE, Rule
from slashkit.core.ports import Clock, CommandRunner, Environment, Identity, RunOutcome, UiLog, Whoami
from slashkit.core.self_command import ToolReply

#: The host events an active session needs; an inactive one needs none.
ACTIVE_WANTS: Final = frozenset({"ToolDescribed", "SkillAnswered", "ControlAnswered"})


class SelfCommandSession:
    """One session's self-commands. Each method is one host event."""

    def __init__(
        self,
        env: Environment,
        whoami: Whoami,
        clock: Clock,
        runner: CommandRunner,
        ui: UiLog,
        rule: Rule = DEFAULT_RULE,
    ) -> None:
        self._env = env
        self._rule = rule
        self._whoami = whoami
        self._clock = clock
        self._runner = runner
        self._ui = ui
        self.lich: sc.Lich | None = None

    def session_started(self, interactive: bool) -> bool:
        """The session (re)started; True when the host should redraw tool descriptions."""
        self.lich = sc.activation(interactive, self._env.get("LICH_SESSION_ID"), self._env.get("LICH_PROMPT_LANG"))
        return self.lich is not None

    def wants(self) -> frozenset[str]:
        """Names the host events this session needs now."""
        return ACTIVE_WANTS if self.lich is not None else frozenset()

    def tool_described(self, tool: str, description: str) -> str | None:
        """A tool's description as the model is to see it; None keeps the host's."""
        return None if self.lich is None else sc.described(self.lich, tool, description)

    def skill_answered(self, skill: object, args: object, is_error: bool, builtins: Collection[str]) -> ToolReply:
        """The Skill tool answered first; only its refusal of a built-in is taken (`self_command.skill_answered`)."""
        return self._apply(sc.skill_answered(self.lich, skill, args, is_error, builtins, self._rule))

    def control_answered(
        self, target: object, action: object, value: object, args: object, is_error: bool, builtins: Collection[str]
    ) -> ToolReply:
        """lich's control_session answered first; only its refusal of a command aimed at this session is taken
        (`self_command.control_answered`)."""
        call = (target, action, value, args)
        return self._apply(sc.control_answered(self.lich, call, is_error, builtins, self._identity, self._rule))

    def _apply(self, taken: sc.Taken) -> ToolReply:
        if taken.queued is not None:
            self._queue(taken.queued)
        return taken.reply

    def _identity(self) -> Identity | None:
        # When whoami fails (no LICH_BIN, an old lich, a timeout), only the id counts.
        return self._whoami.whoami().value_or(None)

    def _queue(self, asked: sc.Request) -> None:
        # The host rejects a command run inside a hook the turn waits on: run it from a timer instead.
        self._clock.after(0, lambda: self._runner.run(asked.name, asked.args, self._toast_failure(asked)))

    def _toast_failure(self, asked: sc.Request) -> Callable[[RunOutcome], None]:
        def done(outcome: RunOutcome) -> None:
            # A queued command has no turn left to answer, so its failure is a toast.
            if isinstance(outcome, Failure):
                self._ui.toast(texts.queued_failed_toast(asked.name, outcome.failure()))

        return done
