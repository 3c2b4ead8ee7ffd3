// SPDX-License-Identifier: Apache-2.0
// tools/ctl_backup.cc
//
// `registryctl export PREFIX` and `registryctl import FILE`: a backup of the namespace's
// persistent keys, and its restore, in `consul kv export`'s format (tools/ctl_backup_file.h),
// through the plugin's ABI 1.8 entries (list_entries, store_key_prefix, check_batch) and 1.7's
// persist_batch.
//
// Export leaves out the ephemeral keys: they belong to live instances, and a restore must not
// bring back those of instances that are gone. Import reads the whole file and checks every entry
// (the file's own shape, the namespace, then the plugin's checks of persist_batch) before it
// writes anything, and writes only the file's keys, txnMaxOperations per transaction, each all or
// nothing.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tools/ctl_backup_file.h"
#include "tools/ctl_commands.h"
#include "tools/print_line.h"

namespace registry::tools {
namespace {

using Args = std::vector<std::string>;

// The whole of `path` ("-": standard input) into `*text`; false with `*error` set.
bool ReadWholeFile(const std::string& path, std::string* text, std::string* error) {
  std::FILE* file = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    *error = absl::StrCat("cannot open it: ", std::strerror(errno));
    return false;
  }
  char buffer[1 << 16];
  size_t got = 0;
  while ((got = std::fread(buffer, 1, sizeof(buffer), file)) > 0) text->append(buffer, got);
  const bool failed = std::ferror(file) != 0;
  const int read_errno = errno;
  if (file != stdin) std::fclose(file);
  if (failed) *error = absl::StrCat("cannot read it: ", std::strerror(read_errno));
  return !failed;
}

// The plugin's name of the namespace root ("<namespace>/"), or the exit code of the error
// reported under `what`.
int StorePrefix(const CommandContext& context, const std::string& what, std::string* prefix) {
  absl::StatusOr<std::string> got = context.repository->StoreKeyPrefix();
  if (!got.ok()) return ReportError(context.err, what, got.status());
  *prefix = *std::move(got);
  return kExitOk;
}

}  // namespace

int RunExport(const CommandContext& context, const Args& args) {
  const std::string what = absl::StrCat("export ", args[0]);
  std::string prefix;
  if (int rc = StorePrefix(context, what, &prefix); rc != kExitOk) return rc;
  absl::StatusOr<std::vector<Repository::StoredEntry>> listed =
      context.repository->ListEntries(args[0]);
  if (!listed.ok()) return ReportError(context.err, what, listed.status());

  std::vector<KvFileEntry> file;
  file.reserve(listed->size());
  size_t ephemeral = 0;
  size_t flagged = 0;
  std::string first_flagged;
  for (Repository::StoredEntry& entry : *listed) {
    if (entry.ephemeral) {  // an instance's: it must die with it, not live on in a backup
      ++ephemeral;
      continue;
    }
    KvFileEntry out{absl::StrCat(prefix, absl::string_view(entry.key).substr(1)), entry.flags,
                    std::move(entry.value)};
    if (out.flags != 0 && flagged++ == 0) first_flagged = out.key;
    file.push_back(std::move(out));
  }
  const std::string text = FormatKvFile(file);
  const bool written = std::fwrite(text.data(), 1, text.size(), context.out) == text.size() &&
                       std::fflush(context.out) == 0;
  if (!written) {
    return ReportError(
        context.err, what,
        absl::DataLossError(absl::StrCat("cannot write the export: ", std::strerror(errno))));
  }
  if (ephemeral > 0) {
    std::fprintf(context.err,
                 "registryctl: %s: left out %zu ephemeral key%s (they belong to live instances)\n",
                 what.c_str(), ephemeral, ephemeral == 1 ? "" : "s");
  }
  if (flagged > 0) {
    std::fprintf(context.err,
                 "registryctl: %s: warning: %zu key%s flags other than 0 (the first: '%s'); "
                 "`registryctl import` refuses them, `consul kv import` restores them\n",
                 what.c_str(), flagged, flagged == 1 ? " has" : "s have", first_flagged.c_str());
  }
  return kExitOk;
}

int RunImport(const CommandContext& context, const Args& args) {
  const std::string what = absl::StrCat("import ", args[0]);
  const auto refuse = [&](const absl::Status& status) {
    return ReportError(
        context.err, what,
        absl::Status(status.code(), absl::StrCat(status.message(), "; nothing was written")));
  };
  std::string text;
  std::string read_error;
  if (!ReadWholeFile(args[0], &text, &read_error)) {
    return refuse(absl::InvalidArgumentError(read_error));
  }
  absl::StatusOr<std::vector<KvFileEntry>> parsed = ParseKvFile(text);
  if (!parsed.ok()) return refuse(parsed.status());
  text.clear();
  text.shrink_to_fit();

  std::string prefix;
  if (int rc = StorePrefix(context, what, &prefix); rc != kExitOk) return rc;
  // Store keys of the file, to name an entry the plugin refuses as the file names it.
  std::vector<std::string> file_keys;
  file_keys.reserve(parsed->size());
  for (const KvFileEntry& entry : *parsed) file_keys.push_back(entry.key);
  absl::StatusOr<std::vector<Repository::KeyValue>> entries =
      ToRepositoryEntries(*std::move(parsed), prefix);
  if (!entries.ok()) return refuse(entries.status());

  // The plugin's own checks of persist_batch (keys, value sizes), nothing written.
  size_t bad = entries->size();
  if (absl::Status checked = context.repository->CheckBatch(*entries, &bad); !checked.ok()) {
    if (bad < file_keys.size()) {
      return refuse(absl::Status(
          checked.code(), absl::StrCat(EntryName(bad, file_keys[bad]), ": ", checked.message())));
    }
    return refuse(checked);
  }
  if (context.options.dry_run) {
    PrintLine(context.out,
              absl::StrCat("dry run: ", entries->size(), " key", entries->size() == 1 ? "" : "s",
                           " under '", prefix, "' checked, nothing written"));
    return kExitOk;
  }
  size_t written = 0;
  if (absl::Status status = context.repository->PersistBatch(*entries, &written); !status.ok()) {
    // persist_batch writes a prefix of the file: say which, and what failed after it.
    std::string done;
    if (written == 0) {
      done = absl::StrCat("none of the ", entries->size(), " keys of the file is written");
    } else if (written == 1) {
      done = absl::StrCat("the first of the ", entries->size(),
                          " keys of the file (entry .[0]) is written, the others are not");
    } else {
      done = absl::StrCat("the first ", written, " of the ", entries->size(),
                          " keys of the file (entries .[0] to .[", written - 1,
                          "]) are written, the others are not");
    }
    const char* unknown = absl::IsUnavailable(status)
                              ? " (some may be: the last transaction's outcome is unknown)"
                              : "";
    return ReportError(
        context.err, what,
        absl::Status(status.code(), absl::StrCat(done, unknown, ": ", status.message())));
  }
  PrintLine(context.out, absl::StrCat("imported ", written, " key", written == 1 ? "" : "s",
                                      " under '", prefix, "'"));
  return kExitOk;
}

}  // namespace registry::tools
