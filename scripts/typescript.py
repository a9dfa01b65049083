"""The TypeScript held to the Python's standard, as `scripts/test` runs it: the bridge's client and every shim
type-checked, and the client tested on its own.

    python scripts/typescript.py check   # tsc --strict --noEmit over every plugin as laid out, and tests/kit
    python scripts/typescript.py test    # tests/node/*.test.ts with the client and the opencode plugin, compiled,
                                         # then `node --test`

Both lay their files out in a temporary folder with the installers' own functions
(`slashkit.adapters.claude_code.plugins.lay_out`, `slashkit.adapters.opencode.install.install`,
`slashkit.adapters.bridge.shim.client_files`), so what is checked is what users run, generated `host.ts` and
`wire.ts` included; a Claude Code plugin's hooks module as the TypeScript it is bundled from
(`plugins.module_sources`). The tools are the clone's pinned ones (`.tools/typescript`, installed by scripts/setup.sh):
TypeScript, Node's types, opencode's plugin API, and the declarations of Claude Code's mod API that its CLI writes
out. Exits 1 when a check or a test fails, with tsc's or Node's report on stdout.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Final

from slashkit.adapters.bridge.shim import client_files
from slashkit.adapters.claude_code import plugins
from slashkit.adapters.opencode import install
from slashkit.adapters.pi import install as pi_install

REPO_ROOT: Final = Path(__file__).resolve().parent.parent
# The kit's tests are laid out by the tests' own function (tests/support/kit.py), from the clone's root.
sys.path.insert(0, str(REPO_ROOT))
from tests.support.kit import lay_out_kit_tests  # noqa: E402

TOOLS: Final = REPO_ROOT / ".tools" / "typescript"
TSC: Final = TOOLS / "node_modules" / ".bin" / "tsc"
CLAUDE_CODE_TYPES: Final = TOOLS / "claude-code" / "claude-code.d.ts"
#: pi's extension API: the pinned pi coding agent's own declarations (scripts/setup.sh installs it in .tools/pi).
PI_MODULES: Final = REPO_ROOT / ".tools" / "pi" / "node_modules"
#: omp's extension API: the pinned omp's own declarations (scripts/setup.sh installs it in .tools/omp).
OMP_PACKAGE: Final = REPO_ROOT / ".tools" / "omp" / "node_modules" / "@oh-my-pi" / "pi-coding-agent"
OMP_NAME: Final = "@oh-my-pi/pi-coding-agent"
NODE_TESTS: Final = REPO_ROOT / "tests" / "node"

#: The compiler options Claude Code's declarations give for a hooks module (its header, measured on 2.1.328): no
#: DOM and no Node, strict, an index read may be undefined. The opencode plugin and the tests add Node's types.
#: `noUnusedLocals` and `noUnusedParameters` are slashkit's: no dead code.
OPTIONS: Final[dict[str, object]] = {
    "target": "es2023",
    "lib": ["es2023"],
    "types": [],
    "module": "esnext",
    "moduleResolution": "bundler",
    "strict": True,
    "noUncheckedIndexedAccess": True,
    "noUnusedLocals": True,
    "noUnusedParameters": True,
    "noEmit": True,
    "skipLibCheck": True,
}


def check(work: Path) -> bool:
    """tsc over each Claude Code plugin with its kit tests and the opencode plugin, laid out under `work`; True
    when all are sound."""
    marketplace = plugins.lay_out(work / "claude-code")
    configs = []
    for name in plugins.PLUGINS:
        folder = marketplace / "plugins" / name
        # The TypeScript its bundled hooks module is made of, checked with the kit's tests, which read the wire's and
        # the plugin's facts from copies of their own (the bundle holds them, and exports none).
        sources = plugins.module_sources(name)
        for file, text in sources.items():
            (folder / "hooks" / file).write_text(text)
        # The kit's tests, where the kit runs them (tests/engine/test_kit.py lays them out the same way).
        lay_out_kit_tests(folder, name, sources)
        configs.append(_tsconfig(folder, {}, ["hooks", "tests"], files=(str(CLAUDE_CODE_TYPES),)))
    # opencode puts @opencode-ai/plugin into a config dir's node_modules; here the pinned one stands there.
    config_dir = work / "opencode"
    install.install(config_dir)
    (config_dir / "node_modules").symlink_to(TOOLS / "node_modules", target_is_directory=True)
    configs.append(_tsconfig(config_dir, {"types": ["node"]}, ["plugins"]))
    # pi resolves its own package for an extension; here the pinned one stands beside it, with Node's types.
    pi_dir = work / "pi"
    pi_install.install(pi_dir / "extensions")
    (pi_dir / "node_modules").symlink_to(PI_MODULES, target_is_directory=True)
    node_types = str(TOOLS / "node_modules" / "@types")
    configs.append(_tsconfig(pi_dir, {"types": ["node"], "typeRoots": [node_types]}, ["extensions"]))
    # omp's entry, against omp's declarations, over pi's extension, against pi's (omp maps pi's scope onto its own).
    omp_dir = work / "omp"
    pi_install.install(omp_dir / "extensions", omp=True)
    (omp_dir / "node_modules").symlink_to(PI_MODULES, target_is_directory=True)
    omp_paths = {OMP_NAME: [str(OMP_PACKAGE)]}
    configs.append(
        _tsconfig(omp_dir, {"types": ["node"], "typeRoots": [node_types], "paths": omp_paths}, ["extensions"])
    )
    return all([_run([str(TSC), "-p", str(config)]) for config in configs])


def test(work: Path) -> bool:
    """Compiles the client, its generated wire facts, the opencode plugin as its installer lays it out (under
    `opencode/`) and tests/node's modules into `work`, then runs the tests (`*.test.ts`) with Node's own test runner
    (Node 20 runs no TypeScript); True when they pass."""
    source = work / "src"
    source.mkdir()
    for name, content in client_files().items():
        (source / name).write_text(content)
    install.install(source / "opencode")
    pi_install.install(source / "pi" / "extensions")
    pi_install.install(source / "omp" / "extensions", omp=True)
    for found in NODE_TESTS.glob("*.ts"):
        shutil.copy(found, source / found.name)
    tests = sorted(NODE_TESTS.glob("*.test.ts"))
    (work / "node_modules").symlink_to(TOOLS / "node_modules", target_is_directory=True)
    out = work / "out"
    # pi's extension and omp's entry are compiled against the pinned pi's and omp's types; nothing of either is
    # compiled or loaded.
    pi_types = {
        "@earendil-works/pi-coding-agent": [str(PI_MODULES / "@earendil-works" / "pi-coding-agent")],
        OMP_NAME: [str(OMP_PACKAGE)],
    }
    emit = {"types": ["node"], "noEmit": False, "rootDir": str(source), "outDir": str(out), "paths": pi_types}
    config = _tsconfig(work, emit, ["src"])
    if not _run([str(TSC), "-p", str(config)]):
        return False
    (out / "package.json").write_text(json.dumps({"type": "module"}))
    # pi resolves its own package for an extension, which imports its `CustomEditor`: here tests/node's stand-in.
    pi_package = out / "node_modules" / "@earendil-works" / "pi-coding-agent"
    pi_package.mkdir(parents=True)
    (pi_package / "package.json").write_text(json.dumps({"type": "module", "main": "index.js"}))
    (pi_package / "index.js").write_text("export * from '../../../pi-editor.js'\n")
    # omp resolves its own package for an extension, which calls its template functions: tests/node's stand-in.
    omp_package = out / "node_modules" / OMP_NAME
    omp_package.mkdir(parents=True)
    (omp_package / "package.json").write_text(json.dumps({"type": "module", "main": "index.js"}))
    (omp_package / "index.js").write_text("export * from '../../../omp-package.js'\n")
    compiled = [str(out / found.with_suffix(".js").name) for found in tests]
    # A test (or a test file: Node counts each as one) that hangs fails after 30 s instead of holding the test command.
    return _run(["node", "--test", "--test-reporter=spec", "--test-timeout=30000", *compiled])


def _tsconfig(folder: Path, options: dict[str, object], include: list[str], files: tuple[str, ...] = ()) -> Path:
    path = folder / "tsconfig.json"
    body = {"compilerOptions": {**OPTIONS, **options}, "include": include, **({"files": files} if files else {})}
    path.write_text(json.dumps(body, indent=2))
    return path


def _run(argv: list[str]) -> bool:
    print("$", " ".join(argv), flush=True)
    return subprocess.run(argv, check=False).returncode == 0


def main(args: list[str]) -> int:
    steps = {"check": check, "test": test}
    if len(args) != 1 or args[0] not in steps:
        print(f"usage: {sys.argv[0]} {' | '.join(steps)}", file=sys.stderr)
        return 2
    if not TSC.exists() or not CLAUDE_CODE_TYPES.exists():
        print(f"no pinned TypeScript at {TOOLS}: run `source scripts/setup.sh` first", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="slashkit-ts-") as work:
        return 0 if steps[args[0]](Path(os.path.realpath(work))) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
