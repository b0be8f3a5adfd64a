#!/usr/bin/env python3
"""Scans what the tests left behind (databases, logs, settings files, exports) for every
token, key and password the tests used, and fails naming the file and the secret's label.
The secret itself is never printed.

Secrets come from TSV files, one `label<TAB>value` per line (`#` starts a comment): the shared
canary fixture and the lists tests append to as they use a secret (`registerSecret` in
ui/e2e/harness.mjs writes `<artifacts>/secrets.tsv`). Each is looked for as it is and in the
forms a careless writer would leave it in: base64 (every alignment), percent-encoded, JSON- and
backslash-escaped, and UTF-16 (little and big endian).

Usage: scan_secrets.py --secrets FILE [--secrets FILE …] PATH [PATH …]
Exit: 0 no hit; 1 a hit (each named on stderr); 2 misuse (no secret, or no path to scan).
"""

import argparse
import base64
import json
import os
import sys
import urllib.parse

# A file larger than this is read in pieces with an overlap as long as the longest pattern.
CHUNK = 8 * 1024 * 1024


def load_secrets(files):
    secrets = []
    for path in files:
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                line = line.rstrip("\n")
                if not line.strip() or line.lstrip().startswith("#"):
                    continue
                label, sep, value = line.partition("\t")
                if not sep or not value:
                    raise SystemExit(f"{path}:{n}: expected `label<TAB>value`")
                if len(value) < 8:
                    raise SystemExit(f"{path}:{n}: secret '{label}' is shorter than 8 characters")
                secrets.append((label, value))
    return secrets


def b64_forms(raw):
    """Substrings every base64 encoding of a text containing `raw` must contain."""
    forms = []
    for pad in range(3):
        enc = base64.b64encode(b"\0" * pad + raw)
        # Drop the characters that depend on the neighbouring bytes.
        start = {0: 0, 1: 2, 2: 3}[pad]
        tail = (pad + len(raw)) % 3
        end = len(enc) - ({0: 0, 1: 3, 2: 2}[tail] if tail else 0)
        core = enc[start:end]
        if len(core) >= 8:
            forms.append(core)
            forms.append(core.replace(b"+", b"-").replace(b"/", b"_"))
    return forms


def patterns(value):
    raw = value.encode("utf-8")
    forms = {
        "plain": [raw],
        "base64": b64_forms(raw),
        "percent-encoded": [urllib.parse.quote(value, safe="").encode()],
        # As json.dumps writes it, and as writers that also escape `/` do.
        "json-escaped": [
            json.dumps(value)[1:-1].encode(),
            json.dumps(value)[1:-1].replace("/", "\\/").encode(),
        ],
        "utf-16": [value.encode("utf-16-le"), value.encode("utf-16-be")],
    }
    out = []
    seen = set()
    for kind, items in forms.items():
        for p in items:
            if p and p not in seen:
                seen.add(p)
                out.append((kind, p))
    return out


def files_under(paths):
    for p in paths:
        if os.path.isfile(p):
            yield p
        elif os.path.isdir(p):
            for root, dirs, names in os.walk(p):
                dirs.sort()
                for name in sorted(names):
                    full = os.path.join(root, name)
                    if os.path.isfile(full) and not os.path.islink(full):
                        yield full


def scan_file(path, compiled, longest):
    hits = set()
    try:
        with open(path, "rb") as f:
            prev = b""
            while True:
                chunk = f.read(CHUNK)
                if not chunk:
                    break
                window = prev + chunk
                for label, kind, pattern in compiled:
                    if (label, kind) not in hits and pattern in window:
                        hits.add((label, kind))
                prev = window[-longest:] if longest else b""
    except OSError as e:
        print(f"scan-secrets: cannot read {path}: {e}", file=sys.stderr)
    return hits


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--secrets", action="append", default=[], help="TSV of label<TAB>value")
    ap.add_argument("paths", nargs="*")
    args = ap.parse_args(argv)
    secrets = load_secrets(args.secrets)
    if not secrets:
        print("scan-secrets: no secret to look for (no list found)", file=sys.stderr)
        return 2
    paths = [p for p in args.paths if os.path.exists(p)]
    if not paths:
        print("scan-secrets: nothing to scan", file=sys.stderr)
        return 2
    compiled = [(label, kind, p) for label, value in secrets for kind, p in patterns(value)]
    longest = max(len(p) for _, _, p in compiled)
    n_files = 0
    found = []
    # The lists themselves (a registered list lives in the artifacts folder it scans).
    skip = {os.path.realpath(p) for p in args.secrets}
    for path in files_under(paths):
        if os.path.realpath(path) in skip:
            continue
        n_files += 1
        for label, kind in sorted(scan_file(path, compiled, longest)):
            found.append((path, label, kind))
    labels = sorted({label for label, _ in secrets})
    for path, label, kind in found:
        print(f"scan-secrets: secret '{label}' found ({kind}) in {path}", file=sys.stderr)
    print(
        f"scan-secrets: {n_files} files scanned for {len(labels)} secrets "
        f"({', '.join(labels)}): {len(found)} hits"
    )
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
