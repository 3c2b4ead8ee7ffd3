// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the key and value inputs of the plugin C ABI (plugin/registry_plugin.h), through
// the Consul plugin's own table (linked in, as libregistry_consul.so builds it) against a dev
// server in this process. Each input is a few operations (persist, update, get, exists,
// get_children, delete_key, persist_ephemeral, persist_exclusive_ephemeral, a watch added and
// removed) with keys and values from the input: embedded NULs (a key ends at its first NUL),
// bytes that are not UTF-8, NULL pointers, values at and past the size limit. It checks what the
// header promises: a key registry::ValidateRepositoryKey accepts works and any other fails with
// REGISTRY_INVALID_ARGUMENT, a failure fills the error with that code and a message, a
// persisted value reads back byte for byte, a deleted key is gone.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/escaping.h"
#include "consul/kv.h"
#include "devserver/dev_server.h"
#include "plugin/registry_plugin.h"
#include "repository/key_space.h"

extern "C" int RegistryPluginInit(uint32_t host_abi_version, RegistryPluginApi* api,
                                  RegistryError* error);

namespace registry::plugin {
namespace {

void Check(bool condition) {
  if (!condition) __builtin_trap();
}

// The server, the table and one repository, made once for the whole run and never destroyed:
// the repository's threads must not outlive the server at exit.
struct World {
  devserver::DevServer* server = nullptr;
  RegistryPluginApi api{};
  RegistryRepository* repository = nullptr;
};

World* MakeWorld() {
  devserver::ServerOptions options;
  options.session_ttl_min = absl::Seconds(1);
  auto server = devserver::DevServer::Start(options);
  Check(server.ok());
  auto* world = new World;
  world->server = server->release();
  const std::string address = world->server->address();
  world->api.struct_size = sizeof(RegistryPluginApi);
  RegistryError error{};
  Check(RegistryPluginInit(REGISTRY_PLUGIN_ABI_VERSION_CURRENT, &world->api, &error) == 0);
  const char* keys[] = {"namespace", "server-lists", "timeToLiveSeconds",
                        "blockQueryTimeMilliseconds"};
  const char* values[] = {"fuzz", address.c_str(), "10", "1000"};
  Check(world->api.create_from_props(keys, values, 4, &world->repository, &error) == 0);
  return world;
}

// Whether a call may store a value. Writes that go through a transaction (the ephemeral ones)
// carry the value base64-encoded in a body of at most consul::kMaxTxnBodyBytes, so a value
// between about 380 KiB and consul::kMaxValueBytes fits some writes and not others.
enum class ValueFit { kFits, kMayFit, kRefused };

// Checks the outcome of a call on `key`: OK iff the key is valid (the root where `root` allows
// it) and the value fits, else REGISTRY_INVALID_ARGUMENT with the error filled.
bool Outcome(World& world, int code, RegistryError& error, const char* key, RootKey root,
             ValueFit fit = ValueFit::kFits) {
  const bool key_ok = key != nullptr && ValidateRepositoryKey(key, root).ok();
  const bool valid = key_ok && fit == ValueFit::kFits;
  // Replaying a reproducer with ABI_FUZZ_VERBOSE=1 shows every call's key and outcome.
  if (std::getenv("ABI_FUZZ_VERBOSE") != nullptr) {
    std::fprintf(stderr, "key '%s' (%s) -> %d %s\n",
                 key == nullptr ? "<NULL>" : absl::CHexEscape(key).c_str(),
                 valid ? "valid" : "invalid", code, code != 0 ? error.message : "");
  }
  if (key_ok && fit == ValueFit::kMayFit) {
    Check(code == REGISTRY_OK || code == REGISTRY_INVALID_ARGUMENT);
    if (code != REGISTRY_OK) world.api.release_error(&error);
    return code == REGISTRY_OK;
  }
  if (code != REGISTRY_OK) {
    Check(code == REGISTRY_INVALID_ARGUMENT && !valid);
    Check(error.code == code && error.message != nullptr && error.message[0] != '\0');
    world.api.release_error(&error);
    Check(error.message == nullptr);
    return false;
  }
  Check(valid && error.message == nullptr);
  return true;
}

void ExpectValue(World& world, const char* key, const std::string& value) {
  RegistryError error{};
  char* got = nullptr;
  size_t got_len = 0;
  bool found = false;
  Check(world.api.get(world.repository, key, &got, &got_len, &found, &error) == REGISTRY_OK);
  Check(found && got != nullptr && std::string(got, got_len) == value && got[got_len] == '\0');
  world.api.release_value(got);
}

void ExpectAbsent(World& world, const char* key) {
  RegistryError error{};
  bool exists = true;
  Check(world.api.exists(world.repository, key, &exists, &error) == REGISTRY_OK && !exists);
}

void OnEvent(const RegistryDataEvent* event, void* user_data) {
  Check(event != nullptr && event->key != nullptr);
}

// A key from the input: mostly "/"-rooted names, sometimes anything (NULs end it early).
std::string KeyFrom(FuzzedDataProvider& input) {
  std::string key = input.ConsumeRandomLengthString(48);
  if (input.ConsumeBool()) key = "/" + key;
  return key;
}

// A value from the input, or one at or just past the limit.
std::string ValueFrom(FuzzedDataProvider& input) {
  switch (input.ConsumeIntegralInRange(0, 63)) {
    case 0:
      return std::string(consul::kMaxValueBytes, 'v');
    case 1:
      return std::string(consul::kMaxValueBytes + 1, 'v');
    default:
      return input.ConsumeRandomLengthString(256);
  }
}

void RunOne(World& world, FuzzedDataProvider& input) {
  const int op = input.ConsumeIntegralInRange(0, 8);
  const std::string key_text = KeyFrom(input);
  const char* key = input.ConsumeIntegralInRange(0, 31) == 0 ? nullptr : key_text.c_str();
  const std::string value = ValueFrom(input);
  const bool null_value = input.ConsumeIntegralInRange(0, 31) == 0;
  const char* bytes = null_value ? nullptr : value.data();
  // A NULL value with a length is refused; with length 0 it is the empty value.
  ValueFit fit = ValueFit::kFits;
  if (value.size() > consul::kMaxValueBytes || (null_value && !value.empty())) {
    fit = ValueFit::kRefused;
  } else if (value.size() > 64 * 1024) {
    fit = ValueFit::kMayFit;
  }
  const std::string stored = null_value ? "" : value;
  RegistryRepository* repo = world.repository;
  RegistryError error{};
  switch (op) {
    case 0:
    case 1: {  // persist, persist_ephemeral
      auto call = op == 0 ? world.api.persist : world.api.persist_ephemeral;
      const int code = call(repo, key, bytes, value.size(), &error);
      if (Outcome(world, code, error, key, RootKey::kRejected, fit))
        ExpectValue(world, key, stored);
      break;
    }
    case 2: {  // update: NOT_FOUND is the answer for a valid key that is absent, checked
               // before the size of the value (the repository reads the key first)
      const int code = world.api.update(repo, key, bytes, value.size(), &error);
      if (code == REGISTRY_NOT_FOUND) {
        Check(key != nullptr && ValidateRepositoryKey(key).ok() && !(null_value && !value.empty()));
        world.api.release_error(&error);
      } else if (Outcome(world, code, error, key, RootKey::kRejected, fit)) {
        ExpectValue(world, key, stored);
      }
      break;
    }
    case 3: {
      bool created = false;
      const int code =
          world.api.persist_exclusive_ephemeral(repo, key, bytes, value.size(), &created, &error);
      if (Outcome(world, code, error, key, RootKey::kRejected, fit) && created) {
        ExpectValue(world, key, stored);
      }
      break;
    }
    case 4: {
      const int code = world.api.delete_key(repo, key, &error);
      if (Outcome(world, code, error, key, RootKey::kAllowed) && std::string(key) != "/") {
        ExpectAbsent(world, key);
      }
      break;
    }
    case 5: {
      char* got = nullptr;
      size_t got_len = 0;
      bool found = false;
      const int code = world.api.get(repo, key, &got, &got_len, &found, &error);
      Outcome(world, code, error, key, RootKey::kRejected);
      Check(found == (got != nullptr));
      world.api.release_value(got);
      break;
    }
    case 6: {
      char** children = nullptr;
      size_t count = 0;
      const int code = world.api.get_children(repo, key, &children, &count, &error);
      if (Outcome(world, code, error, key, RootKey::kAllowed)) {
        for (size_t i = 0; i < count; ++i) Check(children[i] != nullptr);
      }
      world.api.release_children(children, count);
      break;
    }
    case 7: {
      bool exists = false;
      Outcome(world, world.api.exists(repo, key, &exists, &error), error, key, RootKey::kRejected);
      break;
    }
    default: {
      int64_t id = 0;
      const int code = world.api.add_data_listener(repo, key, REGISTRY_WATCH_REPLAY_EXISTING,
                                                   OnEvent, nullptr, &id, &error);
      if (Outcome(world, code, error, key, RootKey::kAllowed)) {
        Check(world.api.remove_data_listener(repo, id, &error) == REGISTRY_OK);
      }
      break;
    }
  }
}

}  // namespace
}  // namespace registry::plugin

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static registry::plugin::World* const world = registry::plugin::MakeWorld();
  FuzzedDataProvider input(data, size);
  for (int i = 0; i < 6 && input.remaining_bytes() > 0; ++i) {
    registry::plugin::RunOne(*world, input);
  }
  return 0;
}
