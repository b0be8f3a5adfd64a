#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets from files already in the repository.

classify: an even sample of the policy's labelled corpus; eval_manifest: every eval
manifest; sse: every recorded provider stream, prefixed with the two control bytes the
`sse` target reads (wire format and JSON flag, chunk size). The commands are only written
as data files for the fuzzer; nothing here runs them.
"""
import pathlib
import sys
import tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fuzz" / "corpus"
MAX_COMMANDS = 400


def write(target: str, name: str, data: bytes) -> None:
    d = CORPUS / target
    d.mkdir(parents=True, exist_ok=True)
    (d / f"seed-{name}").write_bytes(data)


def commands(node):
    if isinstance(node, str):
        yield node
    elif isinstance(node, list):
        for item in node:
            yield from commands(item)
    elif isinstance(node, dict):
        for value in node.values():
            yield from commands(value)


def main() -> int:
    table = tomllib.loads((ROOT / "crates/policy/tests/corpus.toml").read_text())
    cmds = sorted(set(commands(table)))
    step = max(1, len(cmds) // MAX_COMMANDS)
    sample = cmds[::step]
    for i, cmd in enumerate(sample):
        write("classify", f"{i:04}", cmd.encode())

    manifests = sorted((ROOT / "evals").glob("*.yaml"))
    for path in manifests:
        write("eval_manifest", path.stem, path.read_bytes())

    streams = 0
    for path in sorted((ROOT / "crates/llm/tests/fixtures").iterdir()):
        anthropic = 1 if "anthropic" in path.name else 0
        if path.suffix == ".sse":
            flags = anthropic
        elif path.suffix == ".json":
            flags = anthropic | 2
        else:
            continue
        for chunk in (0, 7):
            write("sse", f"{path.stem}-{chunk}", bytes([flags, chunk]) + path.read_bytes())
            streams += 1

    print(
        f"seeds: classify {len(sample)}, eval_manifest {len(manifests)}, sse {streams}",
        file=sys.stderr,
    )
    return 0 if sample and manifests and streams else 1


if __name__ == "__main__":
    sys.exit(main())
