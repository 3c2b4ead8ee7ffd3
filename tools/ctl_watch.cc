// SPDX-License-Identifier: Apache-2.0
// tools/ctl_watch.cc
//
// `registryctl watch KEY [--initial]`. Events are printed by the plugin's listener thread
// (calls for one watch never overlap), each line flushed at once. The "watching" line goes to
// stderr only after the plugin's watch call returned, i.e. once every later change of the
// subtree is sure to be reported: a test or script can start writing when it sees it.
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tools/ctl_commands.h"
#include "tools/event_json.h"
#include "tools/print_line.h"

namespace registry::tools {

int RunWatch(const CommandContext& context, const std::vector<std::string>& args) {
  const std::string& key = args[0];
  std::FILE* out = context.out;
  std::FILE* err = context.err;
  DataListenerOptions options;
  options.replay_existing = context.options.initial;
  absl::StatusOr<plugin::PluginWatch> watch = context.repository->AddWatch(
      key, [out](const DataChangedEvent& event) { PrintLine(out, EventJson(event)); }, options);
  if (!watch.ok()) return ReportError(err, absl::StrCat("watch ", key), watch.status());
  const int listener = context.repository->AddConnectionListener([err](ConnectionState state) {
    std::fprintf(err, "registryctl: connection %s\n", ConnectionStateName(state));
  });
  PrintLine(err, absl::StrCat("registryctl: watching ", key));

  context.signals->Wait();
  context.repository->RemoveConnectionListener(listener);
  watch->Remove();  // no event is printed after this
  if (absl::Status closed = context.repository->Close(); !closed.ok()) {
    return ReportError(err, absl::StrCat("close after watching ", key), closed);
  }
  return kExitOk;
}

}  // namespace registry::tools
