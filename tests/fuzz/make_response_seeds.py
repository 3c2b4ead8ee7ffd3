#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the seed corpus of consul_response_fuzzer (tests/fuzz/corpus/consul_response_fuzzer).

The target reads its input with FuzzedDataProvider: the parser, the status and which query
headers are sent come from the last bytes, the header values from the front (each ended by a
backslash and one more byte), and the body is what is left in between. Bodies are the answers
Consul gives, as the client's unit tests use them.
"""
import os

PARSERS = ["kv-get", "kv-get-raw", "kv-list", "kv-keys", "kv-put", "kv-delete", "session-create",
           "session-renew", "session-destroy", "session-info", "session-list", "txn",
           "status-leader"]
STATUSES = [200, 404, 409, 400, 403, 413, 429, 500, 502, 503, 504, 301, 0, 599]
ENTRY = ('{"LockIndex":0,"Key":"ns/a","Flags":0,"Value":"dmFsdWU=","CreateIndex":12,'
         '"ModifyIndex":14}')
SESSION = ('{"ID":"adf4238a-882b-9ddc-4a9d-5b6758e4159e","Name":"instance","Node":"node1",'
           '"LockDelay":15000000000,"Behavior":"delete","TTL":"10s","NodeChecks":[],'
           '"ServiceChecks":[{"ID":"web","Namespace":""}],"CreateIndex":20,"ModifyIndex":20}')
SEEDS = {
    "kv-get-found": ("kv-get", 200, ["14", "true", "0"], "[" + ENTRY + "]"),
    "kv-get-absent": ("kv-get", 404, ["7"], ""),
    "kv-get-raw": ("kv-get-raw", 200, ["14"], "raw \x00 bytes"),
    "kv-list": ("kv-list", 200, ["14", "true", "3"],
                "[" + ENTRY + "," + ENTRY.replace("ns/a", "ns/b").replace(
                    '"dmFsdWU="', "null") + "]"),
    "kv-keys": ("kv-keys", 200, ["9"], '["ns/a","ns/b/"]'),
    "kv-put-true": ("kv-put", 200, [], "true"),
    "kv-delete-false": ("kv-delete", 200, [], "false"),
    "session-create": ("session-create", 200, [],
                       '{"ID":"adf4238a-882b-9ddc-4a9d-5b6758e4159e"}'),
    "session-renew": ("session-renew", 200, [], "[" + SESSION + "]"),
    "session-renew-gone": ("session-renew", 404, [], "Session id 's-1' not found"),
    "session-destroy": ("session-destroy", 200, [], "true"),
    "session-info": ("session-info", 200, ["20", "true", "0"], "[" + SESSION + "]"),
    "session-list": ("session-list", 200, ["20"], "[" + SESSION + "]"),
    "txn-committed": ("txn", 200, [], '{"Results":[{"KV":' + ENTRY + '}],"Errors":null}'),
    "txn-rolled-back": ("txn", 409, [],
                        '{"Results":null,"Errors":[{"OpIndex":0,'
                        '"What":"failed to lock key \\"ns/a\\": invalid session"}]}'),
    "status-leader": ("status-leader", 200, [], '"127.0.0.1:8300"'),
    "no-leader": ("kv-list", 500, [], "No cluster leader"),
    "permission-denied": ("kv-put", 403, [], "Permission denied"),
}


def seed(parser, status, headers, body):
    front = b"".join(h.encode() + b"\\;" for h in headers)
    header_bits = (1 << len(headers)) - 1  # X-Consul-Index, KnownLeader, LastContact in order
    tail = bytes([header_bits, STATUSES.index(status), PARSERS.index(parser)])
    return front + body.encode() + tail


out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "consul_response_fuzzer")
os.makedirs(out, exist_ok=True)
for name, spec in SEEDS.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(seed(*spec))
