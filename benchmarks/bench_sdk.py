"""The SDK host's per-step overhead: a chain run by `SlashSession.run` against the same commands sent one by one
through the Claude Agent SDK without slashkit, on the pinned Claude Code CLI, offline against a scripted model.
Prints a Markdown section; docs/performance.md holds the last one and the method.

Run with `scripts/bench` (it sets everything up first). `SLASHKIT_BENCH_SDK_ROUNDS=N` sets the rounds (20).
"""

import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from claude_agent_sdk import ClaudeSDKClient  # noqa: E402
from claude_agent_sdk import __version__ as sdk_version  # noqa: E402
from tests.support.claude_cli import CLI_VERSION  # noqa: E402
from tests.support.model_server import ModelServer, text  # noqa: E402
from tests.support.sdk_session import options  # noqa: E402

from slashkit.adapters.sdk import ChainEnded, Message, SlashSession  # noqa: E402

LOCAL = ["/cost", "/usage", "/stats", "/cost", "/usage"]
PROMPTS = ["/greet Ann", "/greet Bob", "/greet Cy"]
TARGET_MS = 5.0


async def one_by_one(client: ClaudeSDKClient, commands: list[str]) -> float:
    """Seconds to send each command as its own query and read to its ResultMessage, without slashkit."""
    started = time.perf_counter()
    for command in commands:
        await client.query(command)
        async for _ in client.receive_response():
            pass
    return time.perf_counter() - started


async def chained(session: SlashSession, commands: list[str]) -> float:
    """Seconds for `SlashSession.run` to run the same commands as one chain, to its ChainEnded."""
    started = time.perf_counter()
    ended = [e async for e in session.run(" && ".join(commands)) if not isinstance(e, Message)][-1]
    elapsed = time.perf_counter() - started
    assert isinstance(ended, ChainEnded) and ended.outcome.tally.succeeded == len(commands), ended
    return elapsed


async def measure(rounds: int, base: Path) -> dict[str, tuple[list[float], list[float]]]:
    """Per-step seconds of each round, plain SDK and slashkit alternating, for local and for prompt steps."""
    answers = [text("Hello.") for _ in range(2 * rounds * len(PROMPTS) + 2 * len(PROMPTS))]
    with ModelServer(answers, idle_timeout=300) as model:
        plain = ClaudeSDKClient(options(base, model))
        async with SlashSession(options(base, model)) as session:
            await plain.connect()
            try:
                found: dict[str, tuple[list[float], list[float]]] = {}
                for name, commands in (("local", LOCAL), ("prompt", PROMPTS)):
                    await one_by_one(plain, commands)  # warm both sessions up
                    await chained(session, commands)
                    found[name] = await rounds_of(
                        rounds,
                        len(commands),
                        partial(one_by_one, plain, commands),
                        partial(chained, session, commands),
                    )
            finally:
                await plain.disconnect()
    return found


async def rounds_of(
    rounds: int, steps: int, plain: Callable[[], Awaitable[float]], ours: Callable[[], Awaitable[float]]
) -> tuple[list[float], list[float]]:
    without: list[float] = []
    with_us: list[float] = []
    for _ in range(rounds):
        without.append(await plain() / steps)
        with_us.append(await ours() / steps)
    return without, with_us


def report(found: dict[str, tuple[list[float], list[float]]], rounds: int) -> list[str]:
    out = [
        f"## SDK host: per-step overhead (claude-agent-sdk {sdk_version}, Claude Code {CLI_VERSION}, "
        f"median of {rounds})",
        "",
        "| steps | SDK alone, ms/step | SDK + slashkit chain, ms/step | overhead, ms/step | target |",
        "|---|---|---|---|---|",
    ]
    for name, (without, with_us) in found.items():
        a, b = statistics.median(without) * 1000, statistics.median(with_us) * 1000
        verdict = "met" if b - a <= TARGET_MS else "MISSED"
        steps = len(LOCAL if name == "local" else PROMPTS)
        out.append(f"| {name} ({steps}) | {a:.1f} | {b:.1f} | {b - a:+.1f} | <= {TARGET_MS:g} ({verdict}) |")
    return out


def main() -> None:
    rounds = int(os.environ.get("SLASHKIT_BENCH_SDK_ROUNDS", "20"))
    with tempfile.TemporaryDirectory(prefix="slashkit-bench-sdk-") as base:
        found = asyncio.run(measure(rounds, Path(base)))
    print("\n".join(report(found, rounds)))


if __name__ == "__main__":
    main()
