// SPDX-License-Identifier: Apache-2.0
// integration/differential/scenarios.cc
#include "integration/differential/scenarios.h"

#include <string>

namespace registry::differential {
namespace {

constexpr Caller kAnonymous = Caller::kAnonymous;

// A txn body of one KV op.
std::string Txn1(const std::string& op) { return "[{\"KV\":" + op + "}]"; }

Scenario KvBasics() {
  return {"KvBasics",
          {{"PUT", "/v1/kv/d/a", "1"},
           {"GET", "/v1/kv/d/a"},
           {"GET", "/v1/kv/d/a?raw"},
           {"PUT", "/v1/kv/d/a?flags=42", "2"},
           {"GET", "/v1/kv/d/a"},
           {"PUT", "/v1/kv/d/a", "2"},  // identical write
           {"GET", "/v1/kv/d/a"},
           {"PUT", "/v1/kv/d/empty", ""},
           {"GET", "/v1/kv/d/empty"},
           {"GET", "/v1/kv/d/empty?raw"},
           {"GET", "/v1/kv/d/missing"},
           {"DELETE", "/v1/kv/d/a"},
           {"GET", "/v1/kv/d/a"},
           {"DELETE", "/v1/kv/d/never"},
           {"PUT", "/v1/kv/d/f?flags=abc", "x"},
           {"PUT", "/v1/kv/d/big", std::string(512 * 1024 + 1, 'x')},
           {"GET", "/v1/kv/d/big"}}};
}

Scenario KvCas() {
  return {"KvCas",
          {{"PUT", "/v1/kv/c?cas=0", "1"},
           {"PUT", "/v1/kv/c?cas=0", "2"},
           {"GET", "/v1/kv/c"},
           {"PUT", "/v1/kv/c?cas={index}", "3"},
           {"PUT", "/v1/kv/c?cas=1", "4"},
           {"GET", "/v1/kv/c?raw"},
           {"DELETE", "/v1/kv/c?cas=1"},
           {"GET", "/v1/kv/c"},
           {"DELETE", "/v1/kv/c?cas={index}"},
           {"GET", "/v1/kv/c"},
           {"PUT", "/v1/kv/c?cas=abc", "x"}}};
}

Scenario KvListing() {
  return {"KvListing",
          {{"PUT", "/v1/kv/d/a", "1"},
           {"PUT", "/v1/kv/d/b/c", "2"},
           {"PUT", "/v1/kv/d/b/d", "3"},
           {"PUT", "/v1/kv/dd", "4"},
           {"PUT", "/v1/kv/e/", ""},
           {"GET", "/v1/kv/d?recurse"},
           {"GET", "/v1/kv/d/?recurse"},
           {"GET", "/v1/kv/d?keys"},
           {"GET", "/v1/kv/d/?keys&separator=/"},
           {"GET", "/v1/kv/?keys&separator=/"},
           {"GET", "/v1/kv/?keys&seperator=/"},
           {"GET", "/v1/kv/?recurse"},
           {"GET", "/v1/kv/nothing?recurse"},
           {"GET", "/v1/kv/nothing?keys"},
           {"DELETE", "/v1/kv/d?recurse"},
           {"GET", "/v1/kv/d?recurse"},
           {"GET", "/v1/kv/?keys"}}};
}

Scenario KvOddKeys() {
  return {"KvOddKeys",
          {{"PUT", "/v1/kv/a//b", "x"},
           {"GET", "/v1/kv//a?recurse&x=%41"},
           {"PUT", "/v1/kv/a/./b/", "x"},
           {"DELETE", "/v1/kv/a/../b"},
           {"GET", "/v1/kv/a/b/.."},
           {"PUT", "/v1/kv/sp%20ace", "x"},
           {"PUT", "/v1/kv/%C3%A9t%C3%A9", "x"},
           {"PUT", "/v1/kv/a+b", "x"},
           {"GET", "/v1/kv/?keys"},
           {"GET", "/v1/kv/sp%20ace?raw"},
           {"GET", "/v1/kv/bad%zz"},
           {"PUT", "/v1/kv/", "x"},
           {"GET", "/v1/kv/"}}};
}

Scenario BlockingArguments() {
  return {"BlockingArguments",
          {{"PUT", "/v1/kv/k", "1"},
           {"GET", "/v1/kv/k"},
           {"GET", "/v1/kv/k?index={index}&wait=50ms"},
           {"GET", "/v1/kv/missing?index=1&wait=50ms"},
           {"GET", "/v1/kv/k?wait=abc"},
           {"GET", "/v1/kv/k?index=abc"},
           {"GET", "/v1/kv/k?stale&consistent"},
           {"GET", "/v1/kv/k?stale"},
           {"GET", "/v1/kv/k?dc=elsewhere"}}};
}

Scenario Sessions() {
  return {"Sessions",
          {{"PUT", "/v1/session/create", R"({"Name":"one","TTL":"10s","LockDelay":"1s"})"},
           {"GET", "/v1/session/info/{s1}"},
           {"GET", "/v1/session/list"},
           {"PUT", "/v1/session/renew/{s1}"},
           {"PUT", "/v1/session/create", R"({"Behavior":"delete","Checks":[]})"},
           {"GET", "/v1/session/info/{s2}"},
           {"PUT", "/v1/session/create", R"({"Name":"a\ud800b\udc00\ud83d\ude00\\ud800"})"},
           {"GET", "/v1/session/info/{s3}"},
           {"PUT", "/v1/session/create", R"({"TTL":"1ms"})"},
           {"PUT", "/v1/session/create", R"({"Behavior":"sideways"})"},
           {"PUT", "/v1/session/create", R"({"Checks":["nope"]})"},
           {"PUT", "/v1/session/create", "{"},
           {"PUT", "/v1/session/destroy/{s1}"},
           {"GET", "/v1/session/info/{s1}"},
           {"PUT", "/v1/session/renew/{s1}"},
           {"PUT", "/v1/session/destroy/00000000-0000-4000-8000-000000000000"},
           {"GET", "/v1/session/info/"},
           {"GET", "/v1/session/create"}}};
}

// The catalog node a session names: unknown until registered (repository/session_node.h).
Scenario SessionNodes() {
  return {"SessionNodes",
          {{"PUT", "/v1/session/create", R"({"Node":"n1","NodeChecks":[]})"},
           {"PUT", "/v1/catalog/register", R"({"Address":"n1"})"},
           {"PUT", "/v1/catalog/register", R"({"Node":"n1"})"},
           {"PUT", "/v1/catalog/register", "[1]"},
           {"PUT", "/v1/catalog/register", R"({"Node":"n1","Address":"n1","Bogus":1})"},
           {"GET", "/v1/catalog/register"},
           {"PUT", "/v1/catalog/register",
            R"({"Node":"n1","Address":"n1","NodeMeta":{"external-node":"true"}})"},
           {"PUT", "/v1/session/create", R"({"Node":"n1","NodeChecks":[]})"},
           {"GET", "/v1/session/info/{s1}"}}};
}

Scenario AcquireRelease() {
  return {"AcquireRelease",
          {{"PUT", "/v1/session/create", R"({"LockDelay":"0s"})"},
           {"PUT", "/v1/session/create", R"({"LockDelay":"0s"})"},
           {"PUT", "/v1/kv/lock?acquire={s1}", "a"},
           {"GET", "/v1/kv/lock"},
           {"PUT", "/v1/kv/lock?acquire={s1}", "b"},
           {"GET", "/v1/kv/lock"},
           {"PUT", "/v1/kv/lock?acquire={s2}", "c"},
           {"PUT", "/v1/kv/lock?release={s2}", ""},
           {"PUT", "/v1/kv/lock", "plain"},
           {"GET", "/v1/kv/lock"},
           {"PUT", "/v1/kv/lock?release={s1}", ""},
           {"GET", "/v1/kv/lock"},
           {"PUT", "/v1/kv/lock?acquire=00000000-0000-4000-8000-000000000000", ""},
           {"PUT", "/v1/kv/lock?acquire={s1}&release={s1}", ""}}};
}

Scenario LockDelayAndBehaviours() {
  return {"LockDelayAndBehaviours",
          {{"PUT", "/v1/session/create", R"({"LockDelay":"5s"})"},
           {"PUT", "/v1/session/create", R"({"LockDelay":"0s"})"},
           {"PUT", "/v1/session/create", R"({"Behavior":"delete","LockDelay":"0s"})"},
           {"PUT", "/v1/kv/held?acquire={s1}", "x"},
           {"PUT", "/v1/kv/gone?acquire={s3}", "y"},
           {"PUT", "/v1/session/destroy/{s1}"},
           {"GET", "/v1/kv/held"},
           {"PUT", "/v1/kv/held?acquire={s2}", "z"},
           {"PUT", "/v1/session/destroy/{s3}"},
           {"GET", "/v1/kv/gone"}}};
}

// Session IDs that are not UUIDs: Consul's state store refuses them while looking the session
// up (go-memdb's UUID index), before any permission check. Sent first, so that the sessions
// index each side reports (1: no session yet) is the first index either side names.
Scenario SessionIdsNotUuids() {
  return {"SessionIdsNotUuids",
          {{"GET", "/v1/session/info/abc"},
           {"GET", "/v1/session/info/zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz"},
           {"GET", "/v1/session/info/00000000x0000-4000-8000-000000000000"},
           {"GET", "/v1/session/info/0000000-0-000-4000-8000-000000000000"},
           {"GET", "/v1/session/info/00000000-0000-4000-8000-0000000000000"},
           {"GET",
            "/v1/session/info/%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9"
            "%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9"},
           {"PUT", "/v1/session/destroy/00000000-0000-4000-8000-00000000000A"},
           {"GET", "/v1/session/info/abc", "", kAnonymous},
           {"PUT", "/v1/session/destroy/abc"},
           {"PUT", "/v1/session/destroy/abc", "", kAnonymous},
           {"PUT", "/v1/session/renew/abc"},
           {"PUT", "/v1/session/renew/abc", "", kAnonymous},
           {"PUT", "/v1/kv/x?acquire=abc", "v"},
           {"PUT", "/v1/kv/x?acquire=", "v"},
           {"PUT", "/v1/kv/x?acquire=abc", "v", kAnonymous},
           {"PUT", "/v1/kv/x", "v"},
           {"PUT", "/v1/kv/x?release=abc", "v"},
           {"PUT", "/v1/txn", Txn1(R"({"Verb":"lock","Key":"t","Session":"abc"})")},
           {"PUT", "/v1/txn", Txn1(R"({"Verb":"lock","Key":"t","Session":""})")}}};
}

// Paths with characters Go's unicode.IsPrint refuses: a bare 400 before any routing.
Scenario NonPrintablePaths() {
  return {"NonPrintablePaths",
          {{"PUT", "/v1/kv/a%01b", "x"},
           {"GET", "/v1/kv/a%09b"},
           {"GET", "/v1/kv//a%01"},
           {"GET", "/v1/nothing%7F"},
           {"PUT", "/v1/session/renew/%01"},
           {"GET", "/v1/kv/a%C2%80b"},
           {"GET", "/v1/kv/a%C2%A0b"},
           {"GET", "/v1/kv/a%C2%ADb"},
           {"GET", "/v1/kv/a%E2%80%8Bb"},
           {"GET", "/v1/kv/a%E2%80%A8b"},
           {"GET", "/v1/kv/a%EF%BF%BF"},
           {"GET", "/v1/kv/a%EE%80%80"},
           {"PUT", "/v1/kv/a%20b", "x"},
           {"GET", "/v1/kv/a%FFb"},
           {"GET", "/v1/kv/a%ED%A0%80"},
           {"GET", "/v1/kv/a%F0%9F%98%80"}}};
}

// Go's encoding/json texts for bodies of the wrong shape.
Scenario BodyDecodeErrors() {
  return {"BodyDecodeErrors",
          {{"PUT", "/v1/session/create", R"({"TTL":10})"},
           {"PUT", "/v1/session/create", R"({"ttl":-1})"},
           {"PUT", "/v1/session/create", "[]"},
           {"PUT", "/v1/session/create", "true"},
           {"PUT", "/v1/session/create", "   "},
           {"PUT", "/v1/session/create", R"({"TTL":10,"Name":5})"},
           {"PUT", "/v1/session/create", R"({"LockDelay":"abc","Name":{}})"},
           {"PUT", "/v1/session/create", R"({"Node":[],"LockDelay":"abc"})"},
           {"PUT", "/v1/session/create", R"({"Behavior":false})"},
           {"PUT", "/v1/session/create", R"({"ID":1.5})"},
           {"PUT", "/v1/session/create", R"({"Checks":"x"})"},
           {"PUT", "/v1/session/create", R"({"Checks":[1]})"},
           {"PUT", "/v1/session/create", R"({"NodeChecks":{}})"},
           {"PUT", "/v1/session/create", R"({"ServiceChecks":"x"})"},
           {"PUT", "/v1/session/create", R"({"ServiceChecks":[1]})"},
           {"PUT", "/v1/session/create", R"({"ServiceChecks":[{"ID":1}]})"},
           {"PUT", "/v1/session/create", R"({"Name":"a",})"},
           {"PUT", "/v1/session/create", R"({"Name" "a"})"},
           {"PUT", "/v1/session/create", R"({"Name":tru})"},
           {"PUT", "/v1/session/create", R"({"Name":"a\q"})"},
           {"PUT", "/v1/session/create", R"({"Name":"a\u12x4"})"},
           {"PUT", "/v1/session/create", "{'a':1}"},
           {"PUT", "/v1/session/create", "{\"Name\":\"a\x01\"}"},
           {"PUT", "/v1/session/create", "\xC2\xA0{}"},
           {"PUT", "/v1/session/create", R"({"Name":01})"},
           {"PUT", "/v1/session/create", R"({"Name":-x})"},
           {"PUT", "/v1/session/create", R"({"Name":1.})"},
           {"PUT", "/v1/session/create", R"({"Name":1e+})"},
           {"PUT", "/v1/session/create", R"({"Name":[1 2]})"},
           {"PUT", "/v1/session/create", R"({"Name":"a")"},
           {"PUT", "/v1/session/create", R"({"Name":"a)"},
           {"PUT", "/v1/catalog/register", R"({"Node":5})"},
           {"PUT", "/v1/catalog/register", R"({"Node":"n","Address":"a","Service":5})"},
           {"PUT", "/v1/txn", "[] x"},
           {"PUT", "/v1/txn", R"([{"KV":null},{}])"},
           {"PUT", "/v1/txn", "[,]"},
           {"PUT", "/v1/txn", Txn1(R"({"Verb":5})")},
           {"PUT", "/v1/txn", Txn1(R"({"Verb":"get","Key":"k","Index":"5"})")},
           {"PUT", "/v1/txn", Txn1(R"({"Verb":"set","Key":"k","Flags":-1})")},
           {"PUT", "/v1/txn", Txn1(R"({"Key":5,"Bogus":1})")},
           {"PUT", "/v1/txn", Txn1("[]")},
           {"PUT", "/v1/txn", R"([{"Node":5}])"},
           {"PUT", "/v1/session/create", R"({"Name":"trailing"} garbage)"},
           {"PUT", "/v1/session/create", R"({"LockDelay":true,"TTL":"10s"})"},
           {"GET", "/v1/session/info/{s2}"},
           {"PUT", "/v1/txn", Txn1(R"({"Verb":"set","Key":"k","Value":"!!!"})")},
           {"PUT", "/v1/txn", Txn1(R"({"Verb":"set","Key":"k","Value":"eA"})")},
           {"PUT", "/v1/txn", Txn1(R"({"Verb":"set","Key":"k","Value":"eA==="})")},
           {"PUT", "/v1/txn", Txn1(R"({"Verb":"set","Key":"k","Value":"e-_A"})")},
           {"PUT", "/v1/txn", Txn1(R"({"Verb":"set","Key":"k","Value":"eA=\n="})")},
           {"PUT", "/v1/txn",
            R"([{"KV":{"Verb":"set","Key":"k","Value":"eA=="}},)"
            R"({"KV":{"Verb":"set","Key":"k2","Value":"eHh4eA=x"}}])"},
           {"PUT", "/v1/txn", std::string(512 * 1024, ' ')},
           {"PUT", "/v1/txn", std::string(512 * 1024 + 1, ' ')},
           {"PUT", "/v1/txn", std::string(2 * 1024 * 1024, ' ')},
           {"PUT", "/v1/kv/huge", std::string(2 * 1024 * 1024, 'x')}}};
}

Scenario TxnVerbs() {
  return {
      "TxnVerbs",
      {{"PUT", "/v1/session/create", R"({"LockDelay":"0s"})"},
       {"PUT", "/v1/txn",
        R"([{"KV":{"Verb":"set","Key":"t/a","Value":"MQ==","Flags":7}},
                {"KV":{"Verb":"cas","Key":"t/b","Value":"Mg==","Index":0}},
                {"KV":{"Verb":"check-not-exists","Key":"t/c"}},
                {"KV":{"Verb":"get","Key":"t/a"}},
                {"KV":{"Verb":"get-tree","Key":"t/"}}])"},
       {"GET", "/v1/kv/t/a"},
       {"PUT", "/v1/txn", Txn1(R"({"Verb":"check-index","Key":"t/a","Index":{index}})")},
       {"PUT", "/v1/txn", Txn1(R"({"Verb":"lock","Key":"t/l","Value":"eA==","Session":"{s1}"})")},
       {"PUT", "/v1/txn", Txn1(R"({"Verb":"check-session","Key":"t/l","Session":"{s1}"})")},
       {"PUT", "/v1/txn", Txn1(R"({"Verb":"unlock","Key":"t/l","Session":"{s1}"})")},
       {"PUT", "/v1/txn", Txn1(R"({"Verb":"delete-cas","Key":"t/b","Index":1})")},
       {"PUT", "/v1/txn",
        R"([{"KV":{"Verb":"delete","Key":"t/a"}},{"KV":{"Verb":"get","Key":"t/missing"}}])"},
       {"GET", "/v1/kv/t/a"},
       {"PUT", "/v1/txn", Txn1(R"({"Verb":"delete-tree","Key":"t/"})")},
       {"GET", "/v1/kv/t?recurse"},
       {"PUT", "/v1/txn", Txn1(R"({"Verb":"explode","Key":"k"})")},
       {"PUT", "/v1/txn", R"([{"Bogus":1,"KV":{"Verb":"get","Key":"k"}}])"},
       {"PUT", "/v1/txn", "[{"},
       {"PUT", "/v1/txn", "[]"},
       {"GET", "/v1/txn"}}};
}

Scenario TxnLimits() {
  std::string ops65 = "[";
  for (int i = 0; i < 65; ++i) {
    ops65 += std::string(i == 0 ? "" : ",") + R"({"KV":{"Verb":"set","Key":"n/)" +
             std::to_string(i) + R"(","Value":"eA=="}})";
  }
  ops65 += "]";
  return {"TxnLimits",
          {{"PUT", "/v1/txn", ops65, Caller::kMaster,
            "Consul 1.8.7 allows 64 operations per txn; 1.9 and later (and the dev server) 128"}}};
}

Scenario StatusAndMethods() {
  return {"StatusAndMethods",
          {{"GET", "/v1/status/leader", "", Caller::kMaster,
            "the server RPC address: a free port on Consul, :8300 on the dev server"},
           {"POST", "/v1/kv/k", "x"},
           {"OPTIONS", "/v1/kv/k"},
           {"PUT", "/v1/status/leader"},
           {"GET", "/v1/nothing/here"},
           {"GET", "/v1/kv?recurse"},
           {"PUT", "/v1/session/destroy?x=1"},
           {"GET", "/v1/session/node"},
           {"GET", "/v1/session/list/extra"},
           {"GET", "/v1/session/"},
           {"GET", "/v1/session/nodex/y"}}};
}

Scenario Acls() {
  const Caller unknown = Caller::kUnknownToken;
  return {"Acls",
          {{"PUT", "/v1/kv/z/k", "x"},
           {"PUT", "/v1/session/create"},
           {"GET", "/v1/kv/z/k", "", kAnonymous},
           {"PUT", "/v1/kv/z/k", "y", kAnonymous},
           {"DELETE", "/v1/kv/z?recurse", "", kAnonymous},
           {"GET", "/v1/kv/z?recurse", "", kAnonymous},
           {"GET", "/v1/kv/z?keys", "", kAnonymous},
           {"GET", "/v1/kv/?keys", "", kAnonymous},
           {"GET", "/v1/session/list", "", kAnonymous},
           {"GET", "/v1/session/info/{s1}", "", kAnonymous},
           {"PUT", "/v1/session/create", "", kAnonymous},
           {"PUT", "/v1/txn", Txn1(R"({"Verb":"set","Key":"z/t","Value":"eA=="})"), kAnonymous},
           {"PUT", "/v1/txn", Txn1(R"({"Verb":"get","Key":"z/k"})"), kAnonymous},
           {"GET", "/v1/kv/z/k", "", unknown},
           {"GET", "/v1/kv/z?recurse", "", unknown},
           {"GET", "/v1/kv/z?keys", "", unknown},
           {"GET", "/v1/session/list", "", unknown},
           {"GET", "/v1/session/info/{s1}", "", unknown},
           {"GET", "/v1/session/node/n1", "", unknown},
           {"GET", "/v1/session/list?dc=elsewhere"},
           {"GET", "/v1/kv/z?keys&dc=elsewhere"},
           {"PUT", "/v1/txn", Txn1(R"({"Verb":"get","Key":"z/k"})"), unknown},
           {"GET", "/v1/status/leader?x=1", "", kAnonymous,
            "the server RPC address: a free port on Consul, :8300 on the dev server"},
           {"GET", "/v1/kv/z/k"}}};
}

}  // namespace

std::vector<Scenario> Scenarios() {
  return {KvBasics(),
          KvCas(),
          KvListing(),
          KvOddKeys(),
          BlockingArguments(),
          Sessions(),
          SessionNodes(),
          AcquireRelease(),
          LockDelayAndBehaviours(),
          TxnVerbs(),
          SessionIdsNotUuids(),
          NonPrintablePaths(),
          BodyDecodeErrors(),
          TxnLimits(),
          StatusAndMethods(),
          Acls()};
}

}  // namespace registry::differential
