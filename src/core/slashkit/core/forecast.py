"""Forecasts: what a timer will do when it fires, and what a run will do when it resolves well, told to the host
with the effect that starts them, so the host need not wait a round trip for the step after.

Each is the pure move of `slashkit.core.session` run on the session as it is now: the core is deterministic, so
if the host sends no other event first, the forecast is what it will do. Nothing is changed to make one. A
forecast holds only lines, timers, runs and the status area's text, the effects a host carries out at once; a
move that does anything else (answers, saves, toasts) gets none, and neither does a run whose text a `|` hands
on (`hands_on`: the forecast cannot know the text).

A forecast looks a bounded number of moves ahead (MAX_AHEAD): each move ahead nests one level deeper, and the
moves, the converter and JSON all recurse once per level, so an unbounded one let a long enough chain (123
steps, ~1 KiB typed) exhaust the interpreter's recursion limit. A chain longer than that is foreseen as far as
the bound; the client asks the helper for each step past it as it comes.
"""

from collections.abc import Callable
from typing import Final

import attrs

from slashkit.core.chain_machine import Log, hands_on
from slashkit.core.session import (
    After,
    Effect,
    Moved,
    Progress,
    Report,
    Run,
    RunEnded,
    RunTyped,
    Session,
    TimerFired,
    on_event,
)

#: Called with each token a forecast was made for; the helper records the version it holds for.
Held = Callable[[int], None]
#: How many moves ahead a forecast looks: a chain's step is two (its timer fires, its run ends), so 32 steps. Plain
#: `claude -p` exits when its queue is empty after a command ended, so a run of local commands goes on only as far as
#: the forecast reaches: at 16 steps, a `while` of local commands stopped in its ninth iteration (measured on
#: Claude Code 2.1.328); 64 moves nest well within the recursion limit.
MAX_AHEAD: Final = 64


def foreseen(moved: Moved, held: Held) -> Moved:
    """A move with what each of its timers and runs will do added, where that can be foreseen: its effects', and
    the typed command's run its reply asks for (`RunTyped.then`)."""
    effects = tuple(foresee(moved.session, effect, held) for effect in moved.effects)
    reply = moved.reply
    if isinstance(reply, RunTyped):
        reply = attrs.evolve(reply, then=then(moved.session, reply.token, held))
    return attrs.evolve(moved, effects=effects, reply=reply)


def foresee(state: Session, effect: Effect, held: Held, ahead: int = MAX_AHEAD) -> Effect:
    """The effect, with what its timer or run will do added when that can be foreseen from `state` (the state
    the effect was made in) within `ahead` moves."""
    if ahead <= 0:
        return effect
    match effect:
        case After(token=token):
            fires = _fires(state, token, held, ahead)
            return effect if fires is None else attrs.evolve(effect, fires=fires)
        case Run(token=token):
            return attrs.evolve(effect, then=then(state, token, held, ahead))
    return effect


def then(state: Session, token: int, held: Held, ahead: int = MAX_AHEAD) -> tuple[Log | After | Progress, ...] | None:
    """What the run with this token does when it resolves well, when lines and timers are all it does."""
    if ahead <= 0 or hands_on(state.chains):
        return None
    moved = on_event(state, RunEnded(token))
    effects = _foreseen(moved, ahead - 1)
    if effects is None or not all(isinstance(e, Log | After | Progress) for e in effects):
        return None
    held(token)
    return effects  # type: ignore[return-value]  # checked just above


def _fires(state: Session, token: int, held: Held, ahead: int) -> tuple[Log | Run | Progress, ...] | None:
    effects = _foreseen(on_event(state, TimerFired(token)), ahead - 1)
    if effects is None or not all(isinstance(e, Log | Run | Progress) for e in effects):
        return None
    held(token)
    return effects  # type: ignore[return-value]  # checked just above


def _foreseen(moved: Moved, ahead: int) -> tuple[Effect, ...] | None:
    """A move's effects, each with its own forecast from the state the move left; None when the move answers
    something (no timer or run answers anything). A forecast inside a forecast is recorded only when its own
    effect comes for real, in the answer to the event that made it."""
    if moved.reply is not None:
        return None
    carried = (effect for effect in moved.effects if not isinstance(effect, Report))
    return tuple(foresee(moved.session, effect, _not_yet, ahead) for effect in carried)


def _not_yet(token: int) -> None:
    pass
