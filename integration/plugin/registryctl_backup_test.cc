// SPDX-License-Identifier: Apache-2.0
// integration/plugin/registryctl_backup_test.cc
//
// `registryctl export` and `registryctl import` as real processes, on every server kind (the dev
// server, Consul, Consul with ACLs, Consul on https with client certificates), and against the
// fetched Consul binary's own `consul kv export` and `consul kv import`, both ways: a round trip
// restores every persistent key byte for byte and no ephemeral one; registryctl's export is
// `consul kv export`'s, byte for byte; each tool reads the other's file; a bad, truncated or
// foreign file writes nothing and says why; --dry-run writes nothing; keys outside the file are
// never touched. Each test works in namespaces of its own, on the suite's one server.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/testing/server_process_test.h"
#include "integration/testing/subprocess.h"
#include "nlohmann/json.hpp"

namespace registry::integration {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// A value no command line can carry: a NUL, bytes that are not UTF-8, JSON's own characters.
const std::string kBinary("\0\xff\xfe\"<&>\x80z", 9);

class RegistryctlBackupTest : public ServerProcessTest {
 protected:
  void SetUp() override {
    ServerProcessTest::SetUp();
    if (HasFatalFailure()) return;
    test_ = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    namespace_ = "bk_" + test_;
  }

  // A path in this process's temp dir, unique to the test.
  std::string TempPath(const std::string& name) const {
    return absl::StrCat(ProcessTempDir(), "/", test_, "_", name);
  }

  // Writes `bytes` to a new file of the test's and returns its path.
  std::string WriteFile(const std::string& name, const std::string& bytes) const {
    const std::string path = TempPath(name);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    return path;
  }

  static std::string ReadFile(const std::string& path) {
    std::ifstream file(path, std::ios::binary);
    std::stringstream bytes;
    bytes << file.rdbuf();
    return bytes.str();
  }

  // The registry YAML of namespace `ns` for this server: the token and the TLS files live in the
  // file, never on a command line.
  std::string Config(const std::string& ns, const std::string& more_props = "") const {
    const TestPki* pki = tls_pki();
    std::string yaml = absl::StrCat(
        "mode:\n  type: Cluster\n  repository:\n    type: Consul\n    props:\n      namespace: ",
        ns, "\n      server-lists: ",
        pki != nullptr ? absl::StrCat("https://", server_address()) : server_address(),
        "\n      requestTimeoutMilliseconds: 10000\n", more_props);
    if (!token().empty()) absl::StrAppend(&yaml, "      token: ", token(), "\n");
    if (pki != nullptr) {
      absl::StrAppend(&yaml, "      tlsCaFile: ", pki->ca_file,
                      "\n      tlsCertFile: ", pki->client_cert,
                      "\n      tlsKeyFile: ", pki->client_key, "\n");
    }
    return WriteFile(ns + ".yaml", yaml);
  }

  // registryctl on namespace `ns` (the test's by default).
  std::vector<std::string> Ctl(std::vector<std::string> args, const std::string& ns = "") const {
    args.insert(args.begin(),
                {REGISTRYCTL_BIN, "--config=" + Config(ns.empty() ? namespace_ : ns)});
    return args;
  }
  RunResult RunCtl(std::vector<std::string> args, const std::string& ns = "") const {
    return RunProcess(Ctl(std::move(args), ns), absl::Seconds(60));
  }

  // The fetched Consul binary's `consul kv SUBCOMMAND` against this server, then `args`: the
  // token from a file, the certificates of consul-tls.
  RunResult RunConsulKv(const std::string& subcommand, const std::vector<std::string>& args) const {
    const TestPki* pki = tls_pki();
    std::vector<std::string> argv = {
        ConsulBinary(CONSUL_BIN), "kv", subcommand,
        absl::StrCat("-http-addr=", pki != nullptr ? "https://" : "http://", server_address())};
    if (!token().empty()) {
      const std::string token_file = TempPath("consul.token");
      std::ofstream(token_file, std::ios::trunc) << token();
      chmod(token_file.c_str(), 0600);
      argv.push_back("-token-file=" + token_file);
    }
    if (pki != nullptr) {
      argv.insert(argv.end(), {"-ca-file=" + pki->ca_file, "-client-cert=" + pki->client_cert,
                               "-client-key=" + pki->client_key});
    }
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv, absl::Seconds(60));
  }

  // Skips the test when the Consul binary is not there (a dev-server-only machine).
  bool HaveConsulBinary() const { return access(ConsulBinary(CONSUL_BIN).c_str(), X_OK) == 0; }

  // `registryctl export PREFIX`'s output; fails the test unless it exits 0.
  std::string Export(const std::string& prefix = "/", const std::string& ns = "") const {
    RunResult run = RunCtl({"export", prefix}, ns);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    return run.out;
  }

  // The keys of an export file, in its order.
  static std::vector<std::string> KeysOf(const std::string& file) {
    std::vector<std::string> keys;
    nlohmann::json document = nlohmann::json::parse(file, nullptr, /*allow_exceptions=*/false);
    if (!document.is_array()) return {"<not an array: " + file + ">"};
    for (const nlohmann::json& entry : document) keys.push_back(entry.value("key", "?"));
    return keys;
  }

  // Puts `bytes` at store key `consul_key` with the Consul binary (a value from a file: any
  // bytes).
  void ConsulPut(const std::string& consul_key, const std::string& bytes,
                 const std::vector<std::string>& options = {}) const {
    std::vector<std::string> args = options;
    args.insert(args.end(), {consul_key, "@" + WriteFile("value", bytes)});
    RunResult put = RunConsulKv("put", args);
    ASSERT_EQ(put.exit_code, 0) << put.err;
  }

  // Starts `registryctl ephemeral KEY VALUE` and waits for its "ready".
  std::unique_ptr<Subprocess> HoldEphemeral(const std::string& key, const std::string& value) {
    absl::StatusOr<std::unique_ptr<Subprocess>> process =
        Subprocess::Start(Ctl({"ephemeral", key, value}));
    EXPECT_TRUE(process.ok()) << process.status();
    if (!process.ok()) return nullptr;
    EXPECT_EQ((*process)->ReadLine(absl::Now() + absl::Seconds(20)), "ready") << (*process)->err();
    return std::move(*process);
  }

  // Stops a holder with SIGTERM: its session, and its ephemeral keys, go at once.
  static void Release(std::unique_ptr<Subprocess> holder) {
    holder->Signal(SIGTERM);
    EXPECT_EQ(holder->Wait(absl::Now() + absl::Seconds(20)), 0) << holder->err();
  }

  // Puts the keys most tests start from: nested keys, a binary value, a value with a newline,
  // a key with characters JSON and HTML escape, and `many` more (more than one transaction's
  // worth of 64 when `many` is over 64).
  void PutTree(int many = 0) const {
    for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
             {"/metadata/sharding_db", "{\"name\":\"sharding_db\"}"},
             {"/metadata/sharding_db/tables/t_order", "columns:\n  - id\n"},
             {"/props/<a&b>", "\"quoted\""},
             {"/empty", ""}}) {
      RunResult put = RunCtl({"put", key, value});
      ASSERT_EQ(put.exit_code, 0) << key << ": " << put.err;
    }
    // registryctl import of a file of `many` keys and the binary one (argv cannot carry a NUL).
    std::string file = "[";
    for (int i = 0; i < many; ++i) {
      absl::StrAppend(&file, "{\"key\":\"", namespace_, "/rules/r", i, "\",\"value\":\"",
                      absl::Base64Escape(absl::StrCat("rule ", i)), "\"},");
    }
    absl::StrAppend(&file, "{\"key\":\"", namespace_, "/bin\",\"value\":\"",
                    absl::Base64Escape(kBinary), "\"}]");
    RunResult import = RunCtl({"import", WriteFile("tree.json", file)});
    ASSERT_EQ(import.exit_code, 0) << import.err;
  }

  std::string test_;
  std::string namespace_;
};

TEST_F(RegistryctlBackupTest, ARoundTripRestoresEveryPersistentKeyExactlyAndNoEphemeralOne) {
  ASSERT_NO_FATAL_FAILURE(PutTree(/*many=*/150));
  std::unique_ptr<Subprocess> instance = HoldEphemeral("/nodes/compute_nodes/online/i1", "up");
  ASSERT_NE(instance, nullptr);

  const std::string backup = Export();
  EXPECT_EQ(KeysOf(backup).size(), 155u);
  EXPECT_THAT(backup, Not(HasSubstr("/nodes/"))) << "an ephemeral key belongs to its live instance";
  EXPECT_THAT(backup, HasSubstr(absl::StrCat("\"key\": \"", namespace_, "/bin\"")))
      << "keys are Consul's, namespace included";
  EXPECT_THAT(backup, HasSubstr(absl::StrCat("\"value\": \"", absl::Base64Escape(kBinary), "\"")));
  const std::string file = WriteFile("backup.json", backup);

  // The instance goes, the namespace is wiped; the restore brings back the data, not the instance.
  Release(std::move(instance));
  ASSERT_EQ(RunCtl({"rm", "/"}).exit_code, 0);
  ASSERT_EQ(Export(), "[]\n");
  RunResult import = RunCtl({"import", file});
  ASSERT_EQ(import.exit_code, 0) << import.err;
  EXPECT_EQ(import.out, absl::StrCat("imported 155 keys under '", namespace_, "/'\n"));
  EXPECT_EQ(Export(), backup);
  EXPECT_EQ(RunCtl({"exists", "/nodes/compute_nodes/online/i1"}).exit_code, 1);
  EXPECT_EQ(RunCtl({"get", "/metadata/sharding_db/tables/t_order"}).out, "columns:\n  - id\n\n");
}

TEST_F(RegistryctlBackupTest, ExportIsConsulKvExportByteForByteWithoutTheEphemeralKeys) {
  if (!HaveConsulBinary()) GTEST_SKIP() << "no consul binary at " << ConsulBinary(CONSUL_BIN);
  ASSERT_NO_FATAL_FAILURE(PutTree());
  RunResult consul = RunConsulKv("export", {namespace_ + "/"});
  ASSERT_EQ(consul.exit_code, 0) << consul.err;
  EXPECT_EQ(Export(), consul.out);

  // An ephemeral key: Consul's CLI cannot tell it from the others, registryctl leaves it out.
  std::unique_ptr<Subprocess> instance = HoldEphemeral("/nodes/i1", "up");
  ASSERT_NE(instance, nullptr);
  RunResult with_instance = RunConsulKv("export", {namespace_ + "/"});
  EXPECT_THAT(KeysOf(with_instance.out), ::testing::Contains(namespace_ + "/nodes/i1"));
  RunResult ours = RunCtl({"export", "/"});
  EXPECT_EQ(ours.out, consul.out);
  EXPECT_THAT(ours.err, HasSubstr("left out 1 ephemeral key"));
  Release(std::move(instance));
}

TEST_F(RegistryctlBackupTest, ConsulKvImportRestoresRegistryctlsExport) {
  if (!HaveConsulBinary()) GTEST_SKIP() << "no consul binary at " << ConsulBinary(CONSUL_BIN);
  ASSERT_NO_FATAL_FAILURE(PutTree(/*many=*/70));
  const std::string backup = Export();
  const std::string file = WriteFile("backup.json", backup);
  ASSERT_EQ(RunCtl({"rm", "/"}).exit_code, 0);
  RunResult import = RunConsulKv("import", {"@" + file});
  ASSERT_EQ(import.exit_code, 0) << import.err;
  EXPECT_EQ(Export(), backup);
  EXPECT_EQ(RunCtl({"get", "/props/<a&b>"}).out, "\"quoted\"\n");
}

TEST_F(RegistryctlBackupTest, RegistryctlImportRestoresConsulKvExport) {
  if (!HaveConsulBinary()) GTEST_SKIP() << "no consul binary at " << ConsulBinary(CONSUL_BIN);
  ASSERT_NO_FATAL_FAILURE(ConsulPut(namespace_ + "/metadata/db", "v1"));
  ASSERT_NO_FATAL_FAILURE(ConsulPut(namespace_ + "/metadata/db/bin", kBinary));
  ASSERT_NO_FATAL_FAILURE(ConsulPut(namespace_ + "/uni/\xc3\xa9t\xc3\xa9", "\xe2\x80\xa8"));
  RunResult dump = RunConsulKv("export", {namespace_ + "/"});
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  const std::string file = WriteFile("consul.json", dump.out);
  ASSERT_EQ(RunConsulKv("delete", {"-recurse", namespace_ + "/"}).exit_code, 0);

  RunResult import = RunCtl({"import", file});
  ASSERT_EQ(import.exit_code, 0) << import.err;
  EXPECT_EQ(import.out, absl::StrCat("imported 3 keys under '", namespace_, "/'\n"));
  RunResult again = RunConsulKv("export", {namespace_ + "/"});
  EXPECT_EQ(again.out, dump.out);
  EXPECT_EQ(RunCtl({"get", "/metadata/db"}).out, "v1\n");
}

TEST_F(RegistryctlBackupTest, ExportOfAPrefixHoldsItsSubtreeOnly) {
  for (const char* key : {"/a", "/a/b", "/a/b/c", "/ab", "/b"}) {
    ASSERT_EQ(RunCtl({"put", key, key}).exit_code, 0) << key;
  }
  EXPECT_THAT(KeysOf(Export("/a")), ::testing::ElementsAre(namespace_ + "/a", namespace_ + "/a/b",
                                                           namespace_ + "/a/b/c"));
  EXPECT_THAT(KeysOf(Export("/a/b/c")), ::testing::ElementsAre(namespace_ + "/a/b/c"));
  EXPECT_EQ(Export("/none"), "[]\n");
  RunResult bad = RunCtl({"export", "a"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("'a'"));
}

// Each file: exit 2, a message saying what is wrong (and which entry), and not one key written:
// the file's first entry would overwrite /keep.
TEST_F(RegistryctlBackupTest, ABadTruncatedOrForeignFileWritesNothingAndSaysWhy) {
  ASSERT_EQ(RunCtl({"put", "/keep", "old"}).exit_code, 0);
  const std::string ns = namespace_;
  auto entry = [&](const std::string& key, const std::string& value) {
    return absl::StrCat("{\"key\":\"", key, "\",\"flags\":0,\"value\":\"",
                        absl::Base64Escape(value), "\"}");
  };
  const std::string good =
      absl::StrCat("[", entry(ns + "/keep", "new"), ",", entry(ns + "/added", "x"), "]");
  const std::vector<std::pair<std::string, std::string>> files = {
      {"this is not JSON", "not JSON"},
      {good.substr(0, good.size() - 9), "looks truncated"},
      {absl::StrCat("[", entry(ns + "/keep", "new"), ",", entry("other_ns/x", "y"), "]"),
       "entry .[1] 'other_ns/x': is outside this namespace"},
      {absl::StrCat("[", entry(ns + "/keep", "new"), ",", entry(ns + "x/y", "y"), "]"),
       absl::StrCat("entry .[1] '", ns, "x/y': is outside this namespace")},
      {absl::StrCat("[", entry(ns + "/keep", "new"), ",", entry(ns + "/lock/l/", ""), "]"),
       "is a folder key"},
      {absl::StrCat("[", entry(ns + "/keep", "new"), ",{\"key\":\"", ns,
                    "/f\",\"flags\":3,\"value\":\"\"}]"),
       "has flags 3"},
      {absl::StrCat("[", entry(ns + "/keep", "new"), ",{\"key\":\"", ns,
                    "/b\",\"value\":\"not base64!\"}]"),
       "is not standard base64"},
      // Only the plugin's checks (persist_batch's) see these two.
      {absl::StrCat("[", entry(ns + "/keep", "new"), ",", entry(ns + "/a//b", "y"), "]"),
       absl::StrCat("entry .[1] '", ns, "/a//b'")},
      {absl::StrCat("[", entry(ns + "/keep", "new"), ",",
                    entry(ns + "/big", std::string(524289, 'x')), "]"),
       "524289 bytes"},
      {"{}", "not an array"},
      // A NUL would cut the key short at the plugin's C interface: refused, never written as
      // another key (here ".../nul/a"), and two keys equal up to a NUL are not one.
      {absl::StrCat("[", entry(ns + "/nul/a\\u0000../../other", "x"), "]"),
       absl::StrCat("entry .[0] '", ns,
                    "/nul/a\\x00../../other': key \"/nul/a\\x00../../other\" "
                    "holds a NUL character")},
      {absl::StrCat("[", entry(ns + "/x", "1"), ",", entry(ns + "/x\\u0000y", "2"), "]"),
       "entry .[1]"},
  };
  for (size_t i = 0; i < files.size(); ++i) {
    const auto& [text, why] = files[i];
    for (const bool dry_run : {false, true}) {
      std::vector<std::string> args = {"import", WriteFile(absl::StrCat("bad", i, ".json"), text)};
      if (dry_run) args.push_back("--dry-run");
      RunResult import = RunCtl(args);
      EXPECT_EQ(import.exit_code, 2) << why << "\n" << import.err;
      EXPECT_THAT(import.err, AllOf(HasSubstr(why), HasSubstr("nothing was written")));
      EXPECT_THAT(import.out, IsEmpty());
    }
  }
  EXPECT_EQ(RunCtl({"get", "/keep"}).out, "old\n");
  EXPECT_EQ(RunCtl({"exists", "/added"}).exit_code, 1);
  EXPECT_THAT(KeysOf(Export()), ::testing::ElementsAre(ns + "/keep"));
  RunResult missing = RunCtl({"import", TempPath("no-such-file.json")});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("No such file"));
}

TEST_F(RegistryctlBackupTest, ADryRunChecksEveryEntryAndWritesNothing) {
  ASSERT_NO_FATAL_FAILURE(PutTree(/*many=*/3));
  const std::string backup = Export();
  const std::string file = WriteFile("backup.json", backup);
  ASSERT_EQ(RunCtl({"rm", "/"}).exit_code, 0);
  RunResult dry = RunCtl({"import", "--dry-run", file});
  EXPECT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_EQ(dry.out,
            absl::StrCat("dry run: 8 keys under '", namespace_, "/' checked, nothing written\n"));
  EXPECT_EQ(Export(), "[]\n");
  // --dry-run belongs to import alone.
  RunResult misplaced = RunCtl({"export", "--dry-run", "/"});
  EXPECT_EQ(misplaced.exit_code, 2);
  EXPECT_THAT(misplaced.err, HasSubstr("'--dry-run' is only for 'import'"));
}

TEST_F(RegistryctlBackupTest, ImportWritesTheFilesKeysAndTouchesNoOther) {
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, std::string>>{{"/a", "1"}, {"/b", "2"}, {"/c/d", "3"}}) {
    ASSERT_EQ(RunCtl({"put", key, value}).exit_code, 0);
  }
  std::unique_ptr<Subprocess> instance = HoldEphemeral("/live", "instance");
  ASSERT_NE(instance, nullptr);
  const std::string file = WriteFile(
      "partial.json", absl::StrCat("[{\"key\":\"", namespace_, "/b\",\"flags\":0,\"value\":\"",
                                   absl::Base64Escape("20"), "\"},{\"key\":\"", namespace_,
                                   "/e\",\"value\":\"", absl::Base64Escape("5"), "\"}]"));
  RunResult import = RunCtl({"import", file});
  ASSERT_EQ(import.exit_code, 0) << import.err;
  EXPECT_EQ(RunCtl({"get", "/a"}).out, "1\n");
  EXPECT_EQ(RunCtl({"get", "/b"}).out, "20\n");
  EXPECT_EQ(RunCtl({"get", "/c/d"}).out, "3\n");
  EXPECT_EQ(RunCtl({"get", "/e"}).out, "5\n");
  EXPECT_EQ(RunCtl({"get", "/live"}).out, "instance\n");
  RunResult listed = RunCtl({"export", "/live"});
  EXPECT_EQ(listed.out, "[]\n") << "still the instance's ephemeral key";
  Release(std::move(instance));
  EXPECT_EQ(RunCtl({"exists", "/live"}).exit_code, 1);
}

TEST_F(RegistryctlBackupTest, AnotherNamespacesExportIsRefusedAndAStdinImportWorks) {
  ASSERT_EQ(RunCtl({"put", "/x", "1"}).exit_code, 0);
  const std::string file = WriteFile("backup.json", Export());
  const std::string other = namespace_ + "_other";
  RunResult foreign = RunCtl({"import", file}, other);
  EXPECT_EQ(foreign.exit_code, 2);
  EXPECT_THAT(foreign.err, AllOf(HasSubstr(absl::StrCat("entry .[0] '", namespace_, "/x'")),
                                 HasSubstr(absl::StrCat("whose keys start with '", other, "/'"))));
  EXPECT_EQ(Export("/", other), "[]\n");

  // "-" reads the file from standard input.
  std::vector<std::string> shell = {
      "/bin/sh",
      "-c",
      absl::StrCat("exec \"$0\" \"$1\" import - < \"$2\""),
      REGISTRYCTL_BIN,
      "--config=" + Config(other),
      WriteFile("rewritten.json", absl::StrReplaceAll(ReadFile(file), {{"\"" + namespace_ + "/",
                                                                        "\"" + other + "/"}}))};
  RunResult piped = RunProcess(shell, absl::Seconds(60));
  EXPECT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_EQ(RunCtl({"get", "/x"}, other).out, "1\n");
}

// Consul 1.8 takes 64 operations per transaction: told 128, import's second transaction (128
// keys) is refused after its first (one key, alone for its size) was written, and the message
// says which entries of the file are written.
TEST_F(RegistryctlBackupTest, AFailedTransactionSaysWhichEntriesOfTheFileAreWritten) {
  if (!real_consul()) {
    GTEST_SKIP() << "the dev server takes 128 operations per transaction, as Consul 1.14+ does";
  }
  const std::string ns = namespace_ + "_128";
  // The first value fills a transaction body (512 KiB of JSON) nearly alone, so persist_batch
  // sends it by itself; the 129 small keys after it make one transaction of 128 and one of 1.
  const std::string big_key = ns + "/big";
  const size_t big_base64 = 524286 - 100 - (6 * big_key.size() + 80);
  std::string file = absl::StrCat("[{\"key\":\"", big_key, "\",\"value\":\"",
                                  absl::Base64Escape(std::string(big_base64 / 4 * 3, 'b')), "\"}");
  for (int i = 0; i < 129; ++i) {
    absl::StrAppend(&file, ",{\"key\":\"", ns, "/k", i, "\",\"value\":\"", absl::Base64Escape("v"),
                    "\"}");
  }
  file += "]";
  RunResult import =
      RunProcess({REGISTRYCTL_BIN, "--config=" + Config(ns, "      txnMaxOperations: 128\n"),
                  "import", WriteFile("big.json", file)},
                 absl::Seconds(60));
  EXPECT_EQ(import.exit_code, 2);
  EXPECT_THAT(
      import.err,
      AllOf(HasSubstr("the first of the 130 keys of the file (entry .[0]) is written, the "
                      "others are not"),
            HasSubstr("entry 1 of 130, the first not written"), HasSubstr("too many operations")));
  EXPECT_THAT(KeysOf(Export("/", ns)), ::testing::ElementsAre(big_key));
}

TEST_F(RegistryctlBackupTest, HelpNamesBothCommandsAndTheDryRunFlag) {
  RunResult help = RunProcess({REGISTRYCTL_BIN, "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, AllOf(HasSubstr("export PREFIX"), HasSubstr("import FILE"),
                              HasSubstr("--dry-run"), HasSubstr("consul kv export")));
  RunResult arity = RunProcess({REGISTRYCTL_BIN, "import"});
  EXPECT_EQ(arity.exit_code, 2);
  EXPECT_THAT(arity.err, HasSubstr("'import' takes FILE"));
}

}  // namespace
}  // namespace registry::integration
