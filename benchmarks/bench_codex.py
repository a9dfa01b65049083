"""The Codex host's per-step overhead: a chain of skill steps run by `CodexSession.run` against the same turns sent
one by one to a bare `codex app-server` (turn/start with the skill item, read to turn/completed), on the pinned
Codex CLI, offline against the scripted Responses API. Prints a Markdown section; docs/performance.md holds the
method. Run with `scripts/bench`; `SLASHKIT_BENCH_CODEX_ROUNDS=N` sets the rounds (10).
"""

import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.codex_cli import CodexHome, codex_binary, codex_home  # noqa: E402
from tests.support.openai_server import OpenAIServer, text  # noqa: E402

from slashkit.adapters.codex.host import CLIENT, CodexSession, Raw  # noqa: E402
from slashkit.adapters.codex.protocol import CODEX_VERSION  # noqa: E402
from slashkit.adapters.codex.rpc import AppServer, Notification  # noqa: E402
from slashkit.adapters.harness.events import ChainEnded  # noqa: E402

STEPS = ["/greet Ann", "/greet Bob", "/greet Cy"]
TARGET_MS = 5.0


async def bare(server: AppServer, thread: str, skill: str) -> float:
    """Seconds to run each step as a bare turn (its text and the skill item), to turn/completed."""
    started = time.perf_counter()
    for step in STEPS:
        args = step.partition(" ")[2]
        items = [{"type": "text", "text": args, "text_elements": []}, {"type": "skill", "name": "greet", "path": skill}]
        await server.request("turn/start", {"threadId": thread, "input": items})
        while True:
            message = await server.next_message(60)
            if isinstance(message, Notification) and message.method == "turn/completed":
                break
    return time.perf_counter() - started


async def chained(session: CodexSession) -> float:
    started = time.perf_counter()
    ended = [e async for e in session.run(" && ".join(STEPS)) if not isinstance(e, Raw)][-1]
    elapsed = time.perf_counter() - started
    assert isinstance(ended, ChainEnded) and ended.outcome.tally.succeeded == len(STEPS), ended
    return elapsed


async def measure(rounds: int, home: CodexHome, binary: str) -> tuple[list[float], list[float]]:
    server = await AppServer.start([binary, "app-server"], env=home.env, cwd=str(home.project))
    try:
        await server.request("initialize", {"clientInfo": CLIENT, "capabilities": {"experimentalApi": True}})
        await server.notify("initialized")
        thread = (await server.request("thread/start", {"cwd": str(home.project)}))["thread"]
        assert isinstance(thread, dict)
        skill = str(home.project / ".agents" / "skills" / "greet" / "SKILL.md")
        async with CodexSession(binary, cwd=str(home.project), env=home.env) as session:
            await bare(server, str(thread["id"]), skill)  # warm both up
            await chained(session)
            without: list[float] = []
            with_us: list[float] = []
            for _ in range(rounds):
                without.append(await bare(server, str(thread["id"]), skill) / len(STEPS))
                with_us.append(await chained(session) / len(STEPS))
    finally:
        await server.close()
    return without, with_us


def main() -> None:
    rounds = int(os.environ.get("SLASHKIT_BENCH_CODEX_ROUNDS", "10"))
    binary = codex_binary()
    turns = [text("Hello.") for _ in range(2 * (rounds + 1) * len(STEPS))]
    with OpenAIServer(turns, idle_timeout=600) as model, codex_home(model) as home:
        home.skill("greet", "Greet the person named in the arguments.")
        without, with_us = asyncio.run(measure(rounds, home, binary))
    a, b = statistics.median(without) * 1000, statistics.median(with_us) * 1000
    verdict = "met" if b - a <= TARGET_MS else "MISSED"
    print(f"## Codex host: per-step overhead (Codex {CODEX_VERSION}, median of {rounds})\n")
    print("| steps | bare app-server turn, ms/step | slashkit chain, ms/step | overhead, ms/step | target |")
    print("|---|---|---|---|---|")
    print(f"| skill ({len(STEPS)}) | {a:.1f} | {b:.1f} | {b - a:+.1f} | <= {TARGET_MS:g} ({verdict}) |")


if __name__ == "__main__":
    main()
