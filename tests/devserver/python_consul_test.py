#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Third-party client check: Debian's python3-consul (0.7.1) against consul-dev-server.

Usage: /usr/bin/python3 python_consul_test.py /path/to/consul-dev-server

Starts the binary on port 0, reads its listening line, runs the client's KV, session, txn and
status calls, then stops the server with SIGTERM and expects exit status 0. Fails (never
skips) when python3-consul is missing: this check must not pass silently.
"""

import json
import re
import signal
import subprocess
import sys
import time
import unittest

try:
    import consul
    import consul.base
except ImportError as error:  # fail loudly: a missing client is a broken test setup
    sys.stderr.write(
        "FATAL: python3-consul is not importable by %s (%s); install the Debian package "
        "python3-consul (scripts/install-deps.sh)\n" % (sys.executable, error))
    sys.exit(1)

SERVER = None
PORT = None


def setUpModule():
    global SERVER, PORT
    SERVER = subprocess.Popen(
        [sys.argv[1], "--http-addr=127.0.0.1:0", "--session-ttl-min=1s"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = SERVER.stdout.readline().strip()
    match = re.fullmatch(r"consul-dev-server listening on 127\.0\.0\.1:(\d+)", line)
    if not match:
        SERVER.kill()
        raise RuntimeError("unexpected first line from consul-dev-server: %r" % line)
    PORT = int(match.group(1))


def tearDownModule():
    SERVER.send_signal(signal.SIGTERM)
    code = SERVER.wait(timeout=10)
    if code != 0:
        raise RuntimeError("consul-dev-server exited with %d after SIGTERM" % code)


class PythonConsulTest(unittest.TestCase):
    def setUp(self):
        self.c = consul.Consul(host="127.0.0.1", port=PORT)

    def tearDown(self):
        self.c.http.session.close()  # the client's requests.Session (std backend)

    def test_status_leader_is_an_address(self):
        self.assertEqual(self.c.status.leader(), "127.0.0.1:8300")
        self.assertEqual(self.c.status.peers(), ["127.0.0.1:8300"])

    def test_kv_put_get_delete(self):
        self.assertTrue(self.c.kv.put("py/a", "value-a", flags=7))
        index, entry = self.c.kv.get("py/a")
        self.assertEqual(entry["Value"], b"value-a")
        self.assertEqual(entry["Flags"], 7)
        self.assertEqual(int(index), entry["ModifyIndex"])
        self.assertTrue(self.c.kv.delete("py/a"))
        index, entry = self.c.kv.get("py/a")
        self.assertIsNone(entry)
        self.assertGreaterEqual(int(index), 1)

    def test_kv_recurse_and_keys(self):
        for key in ("py/tree/x", "py/tree/y/z"):
            self.assertTrue(self.c.kv.put(key, "v"))
        _, entries = self.c.kv.get("py/tree/", recurse=True)
        self.assertEqual([e["Key"] for e in entries], ["py/tree/x", "py/tree/y/z"])
        _, keys = self.c.kv.get("py/tree/", keys=True, separator="/")
        self.assertEqual(keys, ["py/tree/x", "py/tree/y/"])
        self.assertTrue(self.c.kv.delete("py/tree/", recurse=True))
        _, entries = self.c.kv.get("py/tree/", recurse=True)
        self.assertIsNone(entries)

    def test_kv_cas(self):
        self.assertTrue(self.c.kv.put("py/cas", "1", cas=0))
        self.assertFalse(self.c.kv.put("py/cas", "2", cas=0))
        _, entry = self.c.kv.get("py/cas")
        self.assertFalse(self.c.kv.put("py/cas", "3", cas=entry["ModifyIndex"] + 100))
        self.assertTrue(self.c.kv.put("py/cas", "4", cas=entry["ModifyIndex"]))
        self.assertFalse(self.c.kv.delete("py/cas", cas=entry["ModifyIndex"]))
        _, entry = self.c.kv.get("py/cas")
        self.assertTrue(self.c.kv.delete("py/cas", cas=entry["ModifyIndex"]))

    def test_blocking_get_times_out_with_the_same_index(self):
        self.assertTrue(self.c.kv.put("py/block", "v"))
        index, _ = self.c.kv.get("py/block")
        start = time.monotonic()
        again, _ = self.c.kv.get("py/block", index=index, wait="200ms")
        self.assertEqual(again, index)
        self.assertGreaterEqual(time.monotonic() - start, 0.2)

    def test_sessions_and_locks(self):
        sid = self.c.session.create(name="py", ttl=10, behavior="delete", lock_delay=0)
        other = self.c.session.create()
        _, info = self.c.session.info(sid)
        self.assertEqual(info["Name"], "py")
        self.assertEqual(info["Behavior"], "delete")
        self.assertEqual(info["TTL"], "10s")
        self.assertEqual(info["LockDelay"], 0)
        self.assertEqual(self.c.session.renew(sid)["ID"], sid)
        _, sessions = self.c.session.list()
        self.assertIn(sid, [s["ID"] for s in sessions])
        self.assertTrue(self.c.kv.put("py/lock", "held", acquire=sid))
        self.assertFalse(self.c.kv.put("py/lock", "stolen", acquire=other))
        _, entry = self.c.kv.get("py/lock")
        self.assertEqual(entry["Session"], sid)
        self.assertEqual(entry["LockIndex"], 1)
        self.assertTrue(self.c.kv.put("py/lock", "free", release=sid))
        self.assertTrue(self.c.kv.put("py/lock", "mine", acquire=other))
        self.assertTrue(self.c.session.destroy(other))
        _, entry = self.c.kv.get("py/lock")
        self.assertNotIn("Session", entry)  # released on invalidation (behavior release)
        self.assertTrue(self.c.session.destroy(sid))
        _, info = self.c.session.info(sid)
        self.assertIsNone(info)

    def test_renew_of_unknown_session_raises_not_found(self):
        with self.assertRaises(consul.NotFound):
            self.c.session.renew("00000000-0000-0000-0000-000000000000")

    def test_txn(self):
        # 0.7.1 has no Txn API (added in later releases); use the client's own HTTP layer.
        ops = [{"KV": {"Verb": "set", "Key": "py/txn/a", "Value": "MQ=="}},
               {"KV": {"Verb": "set", "Key": "py/txn/b", "Value": "Mg=="}},
               {"KV": {"Verb": "get", "Key": "py/txn/a"}}]
        txn = getattr(self.c, "txn", None)
        if txn is not None:
            result = txn.put(ops)
        else:
            result = self.c.http.put(consul.base.CB.json(), "/v1/txn", data=json.dumps(ops))
        self.assertIsNone(result["Errors"])
        self.assertEqual(len(result["Results"]), 3)
        self.assertEqual(result["Results"][2]["KV"]["Value"], "MQ==")
        _, entries = self.c.kv.get("py/txn/", recurse=True)
        self.assertEqual(len(entries), 2)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.stderr.write(__doc__)
        sys.exit(2)
    result = unittest.main(argv=[sys.argv[0], "-v"], exit=False).result
    sys.exit(0 if result.wasSuccessful() else 1)
