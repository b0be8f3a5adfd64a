#!/usr/bin/env python3
"""The secrets scanner finds a planted canary in every form and file kind it claims to cover,
reports only the label, and passes a clean tree. Run: python3 scripts/scan_secrets_test.py"""

import base64
import gzip
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import unittest
import urllib.parse

SCANNER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scan_secrets.py")
# Made up here, so no real key is ever in this file.
CANARY = "nomos-canary-" + "q7Zk" * 6 + "/+x=="


def run(secrets_file, *paths):
    p = subprocess.run(
        [sys.executable, SCANNER, "--secrets", secrets_file, *paths],
        capture_output=True,
        text=True,
    )
    return p.returncode, p.stdout + p.stderr


class ScanSecrets(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name
        self.list = os.path.join(self.root, "secrets.tsv")
        with open(self.list, "w") as f:
            f.write("# the tests' canaries\n")
            f.write(f"api key\t{CANARY}\n")
        self.tree = os.path.join(self.root, "tree")
        os.makedirs(self.tree)
        with open(os.path.join(self.tree, "clean.log"), "w") as f:
            f.write("INFO nothing to see; key [secret masked by Nomos: api key]\n")

    def tearDown(self):
        self.tmp.cleanup()

    def assert_found(self, name, kind):
        code, out = run(self.list, self.tree)
        self.assertEqual(code, 1, out)
        self.assertIn(f"secret 'api key' found ({kind}) in ", out)
        self.assertIn(name, out)
        self.assertNotIn(CANARY, out)
        for fragment in (CANARY[:12], CANARY[-12:]):
            self.assertNotIn(fragment, out.replace("nomos-canary", ""))

    def plant(self, name, data):
        path = os.path.join(self.tree, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)

    def test_a_clean_tree_passes(self):
        code, out = run(self.list, self.tree)
        self.assertEqual(code, 0, out)
        self.assertIn("0 hits", out)

    def test_the_list_itself_is_not_a_hit(self):
        # A registered list sits in the artifacts folder that is scanned.
        inside = os.path.join(self.tree, "secrets.tsv")
        with open(inside, "w") as f:
            f.write(f"api key\t{CANARY}\n")
        code, out = run(inside, self.tree)
        self.assertEqual(code, 0, out)

    def test_plain_in_a_log(self):
        self.plant("logs/nomos.log.2026-12-01", f"DEBUG sending key={CANARY} to host\n".encode())
        self.assert_found("nomos.log.2026-12-01", "plain")

    def test_in_a_sqlite_database_and_its_wal(self):
        db = os.path.join(self.tree, "data", "nomos.db")
        os.makedirs(os.path.dirname(db))
        c = sqlite3.connect(db)
        c.execute("PRAGMA journal_mode=WAL")
        c.execute("CREATE TABLE m (t TEXT)")
        c.execute("INSERT INTO m VALUES (?)", (f"token {CANARY}",))
        c.commit()
        # Left open: the row is in the -wal file, not yet in the database.
        self.assert_found("nomos.db", "plain")
        c.close()

    def test_base64_at_every_alignment(self):
        for prefix in ("", "u", "us", "use", "user:"):
            with self.subTest(prefix=prefix):
                header = base64.b64encode(f"{prefix}{CANARY}".encode()).decode()
                self.plant("export.json", json.dumps({"authorization": f"Basic {header}"}).encode())
                self.assert_found("export.json", "base64")
                os.remove(os.path.join(self.tree, "export.json"))

    def test_percent_encoded_in_a_url(self):
        url = "https://x/?key=" + urllib.parse.quote(CANARY, safe="")
        self.plant("settings.json", json.dumps({"url": url}).encode())
        self.assert_found("settings.json", "percent-encoded")

    def test_json_escaped(self):
        # Writers that escape `/` (as `\/`) change the text of a key with a slash in it.
        self.plant("export.json", ('{"k": "' + CANARY.replace("/", "\\/") + '"}').encode())
        self.assert_found("export.json", "json-escaped")

    def test_utf16(self):
        self.plant("win.txt", f"key {CANARY}".encode("utf-16-le"))
        self.assert_found("win.txt", "utf-16")

    def test_large_file_across_chunks(self):
        head = b"x" * (8 * 1024 * 1024 - 10)
        self.plant("big.bin", head + CANARY.encode() + b"tail")
        self.assert_found("big.bin", "plain")

    def test_no_list_or_nothing_to_scan_is_misuse(self):
        code, out = run(os.path.join(self.root, "missing.tsv"), self.tree)
        self.assertEqual(code, 2, out)
        code, out = run(self.list, os.path.join(self.root, "no-such-dir"))
        self.assertEqual(code, 2, out)

    def test_compressed_files_are_not_claimed(self):
        # A gzip'd log hides the canary from a byte scan: nothing here writes one, and the
        # scanner says nothing false about it (no crash, no hit).
        self.plant("old.log.gz", gzip.compress(f"key={CANARY}".encode()))
        code, out = run(self.list, self.tree)
        self.assertEqual(code, 0, out)


if __name__ == "__main__":
    unittest.main(verbosity=2)
