// SPDX-License-Identifier: Apache-2.0
// conf/registry_yaml.cc
//
// The YAML reader: walks mode / repository / props with yaml-cpp and hands each prop to
// PropsBuilder. yaml-cpp reports problems by throwing; every exception stops here.
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <exception>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/status_text.h"
#include "conf/props.h"
#include "conf/registry_config.h"
#include "conf/values.h"

namespace registry::conf {
namespace {

int LineOf(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  return mark.is_null() ? 0 : mark.line + 1;
}

absl::string_view KindOf(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      return "a single value";
    default:
      return "no value";
  }
}

absl::Status Invalid(absl::string_view name, absl::string_view problem, int line) {
  return absl::InvalidArgumentError(absl::StrCat(name, ": ", problem, AtLine(line)));
}

using EntryVisitor =
    absl::FunctionRef<absl::Status(const std::string& key, int line, const YAML::Node& value)>;

// Visits the entries of `map` (named `block` in errors) in order; `prefix` + key names an entry.
// Keys must be plain names and appear once: yaml-cpp keeps a repeated key as a second entry
// instead of rejecting it, so repeats are caught here.
absl::Status ForEachEntry(const YAML::Node& map, absl::string_view block, absl::string_view prefix,
                          EntryVisitor visit) {
  absl::flat_hash_map<std::string, int> first_line;
  for (const auto& entry : map) {
    const int line = LineOf(entry.first);
    if (!entry.first.IsScalar()) {
      return Invalid(block, absl::StrCat("a key is ", KindOf(entry.first), "; expected a name"),
                     line);
    }
    const std::string& key = entry.first.Scalar();
    auto [it, inserted] = first_line.emplace(key, line);
    if (!inserted) {
      return Invalid(absl::StrCat(prefix, key),
                     absl::StrCat("duplicate key, first set on line ", it->second), line);
    }
    RETURN_IF_ERROR(visit(key, line, entry.second));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ScalarOf(const YAML::Node& value, absl::string_view name, int line) {
  if (value.IsScalar()) return value.Scalar();
  return Invalid(name, absl::StrCat("expected a single value, got ", KindOf(value)), line);
}

absl::Status ExpectMap(const YAML::Node& node, absl::string_view name, int line) {
  if (node.IsMap()) return absl::OkStatus();
  return Invalid(name, absl::StrCat("expected a map, got ", KindOf(node)), line);
}

// Hands each entry of a props block to `builder`; prop errors name the bare key, as in the docs.
absl::Status ParseProps(const YAML::Node& props, const std::string& path, int line,
                        PropsBuilder* builder) {
  RETURN_IF_ERROR(ExpectMap(props, path, line));
  return ForEachEntry(props, path, "",
                      [&](const std::string& key, int key_line, const YAML::Node& value) {
                        absl::StatusOr<std::string> text = ScalarOf(value, key, key_line);
                        if (!text.ok()) return text.status();
                        return builder->Set(key, *text, AtLine(key_line));
                      });
}

// Parses a repository block (`mode.repository` or a top-level `repository`).
absl::StatusOr<RegistryConfig> ParseRepository(const YAML::Node& node, const std::string& path,
                                               int line, const std::string& base_dir) {
  RETURN_IF_ERROR(ExpectMap(node, path, line));
  static const auto* const kKeys = new std::vector<std::string>{"type", "props"};
  std::string type;
  PropsBuilder builder(RegistryConfig(), base_dir, PropsBuilder::Keys::kProps);
  int props_line = line;
  RETURN_IF_ERROR(ForEachEntry(
      node, path, path + ".",
      [&](const std::string& key, int key_line, const YAML::Node& value) -> absl::Status {
        if (key == "type") {
          ASSIGN_OR_RETURN(type, ScalarOf(value, path + ".type", key_line));
          if (type.empty()) return Invalid(path + ".type", "'' is empty", key_line);
          return absl::OkStatus();
        }
        if (key != "props") return UnknownKeyError(path, key, *kKeys, AtLine(key_line));
        props_line = key_line;
        if (value.IsNull()) return absl::OkStatus();  // `props:` alone: nothing set
        return ParseProps(value, path + ".props", key_line, &builder);
      }));
  if (type.empty()) return Invalid(path + ".type", "missing", line);
  ASSIGN_OR_RETURN(RegistryConfig config, std::move(builder).Finish(AtLine(props_line)));
  config.repository_type = std::move(type);
  return config;
}

absl::StatusOr<RegistryConfig> ParseMode(const YAML::Node& node, int line,
                                         const std::string& base_dir) {
  RETURN_IF_ERROR(ExpectMap(node, "mode", line));
  static const auto* const kKeys = new std::vector<std::string>{"type", "overwrite", "repository"};
  bool has_type = false;
  bool overwrite = false;
  absl::StatusOr<RegistryConfig> config = Invalid("mode.repository", "missing", line);
  RETURN_IF_ERROR(ForEachEntry(
      node, "mode", "mode.",
      [&](const std::string& key, int key_line, const YAML::Node& value) -> absl::Status {
        if (key == "type") {
          ASSIGN_OR_RETURN(std::string type, ScalarOf(value, "mode.type", key_line));
          if (!absl::EqualsIgnoreCase(type, "Cluster")) {
            return Invalid("mode.type",
                           absl::StrCat("'", type,
                                        "' is not supported; this plugin only serves cluster mode "
                                        "(type: Cluster)"),
                           key_line);
          }
          has_type = true;
        } else if (key == "overwrite") {
          ASSIGN_OR_RETURN(std::string text, ScalarOf(value, "mode.overwrite", key_line));
          absl::StatusOr<bool> parsed = ParseBoolValue(text);
          if (!parsed.ok()) return Invalid("mode.overwrite", parsed.status().message(), key_line);
          overwrite = *parsed;
        } else if (key == "repository") {
          config = ParseRepository(value, "mode.repository", key_line, base_dir);
          return config.status();
        } else {
          return UnknownKeyError("mode", key, *kKeys, AtLine(key_line));
        }
        return absl::OkStatus();
      }));
  if (!has_type) {
    return Invalid("mode.type", "missing; this plugin only serves cluster mode (type: Cluster)",
                   line);
  }
  if (config.ok()) config->overwrite = overwrite;
  return config;
}

absl::StatusOr<RegistryConfig> ParseDocuments(const std::vector<YAML::Node>& documents,
                                              const std::string& base_dir) {
  if (documents.empty() || (documents.size() == 1 && documents[0].IsNull())) {
    return absl::InvalidArgumentError(
        "empty document; expected a 'mode:' or a 'repository:' block");
  }
  if (documents.size() > 1) {
    return Invalid("top level", absl::StrCat(documents.size(), " YAML documents; expected one"),
                   LineOf(documents[1]));
  }
  const YAML::Node& root = documents[0];
  if (!root.IsMap()) {
    return Invalid("top level",
                   absl::StrCat("expected a 'mode:' or a 'repository:' block, got ", KindOf(root)),
                   LineOf(root));
  }
  // Other top-level keys belong to the host's own configuration and are left to it.
  // Nodes are handles: copies share the parsed tree and outlive the iteration.
  std::optional<YAML::Node> mode;
  std::optional<YAML::Node> repository;
  int mode_line = 0;
  int repository_line = 0;
  std::string hint;
  RETURN_IF_ERROR(
      ForEachEntry(root, "top level", "",
                   [&](const std::string& key, int line, const YAML::Node& value) -> absl::Status {
                     if (key == "mode") {
                       mode = value;
                       mode_line = line;
                     } else if (key == "repository") {
                       repository = value;
                       repository_line = line;
                     } else if (std::string closest = ClosestKey(key, {"mode", "repository"});
                                hint.empty() && !closest.empty()) {
                       hint = absl::StrCat("; found '", key, "', did you mean '", closest, "'?");
                     }
                     return absl::OkStatus();
                   }));
  if (mode.has_value() && repository.has_value()) {
    return Invalid(
        "top level",
        absl::StrCat("both 'mode:' (line ", mode_line, ") and 'repository:'; expected one of them"),
        repository_line);
  }
  if (mode.has_value()) return ParseMode(*mode, mode_line, base_dir);
  if (repository.has_value()) {
    return ParseRepository(*repository, "repository", repository_line, base_dir);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("top level: no 'mode:' or 'repository:' block", hint));
}

std::string MarkText(const YAML::Mark& mark) {
  if (mark.is_null()) return "";
  return absl::StrCat(" (line ", mark.line + 1, ", column ", mark.column + 1, ")");
}

// Sees only where each document starts. yaml-cpp 0.7 (Debian 12's) never returns from LoadAll
// on a flow indicator where a block document is expected (" ,"): the parser reports an empty
// document at that token again and again without consuming it, and LoadAll collects them until
// memory runs out. A document that starts where the previous one did is that loop.
class DocumentStarts : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override { last_ = mark; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

  const YAML::Mark& last() const { return last_; }

 private:
  YAML::Mark last_ = YAML::Mark::null_mark();
};

// Walks the documents of `text` without building them; throws YAML::ParserException at a token
// the parser does not move past (see DocumentStarts), so LoadAll is safe afterwards.
void CheckParserAdvances(const std::string& text) {
  std::istringstream stream(text);
  YAML::Parser parser(stream);
  DocumentStarts starts;
  int previous_pos = -1;
  while (parser.HandleNextDocument(starts)) {
    const YAML::Mark mark = starts.last();
    if (!mark.is_null() && mark.pos == previous_pos) {
      const std::string token = text.substr(static_cast<size_t>(mark.pos), 1);
      throw YAML::ParserException(mark, absl::StrCat("unexpected '", absl::CHexEscape(token),
                                                     "' where a document should start"));
    }
    previous_pos = mark.pos;
  }
}

absl::StatusOr<RegistryConfig> ParseText(absl::string_view yaml_text, const std::string& base_dir) {
  std::vector<YAML::Node> documents;
  try {
    const std::string text(yaml_text);
    CheckParserAdvances(text);
    documents = YAML::LoadAll(text);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("YAML syntax error: ", e.msg, MarkText(e.mark)));
  }
  try {
    return ParseDocuments(documents, base_dir);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("YAML error: ", e.msg, MarkText(e.mark)));
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("reading the registry YAML failed: ", e.what()));
  }
}

}  // namespace

absl::StatusOr<RegistryConfig> ParseRegistryYaml(absl::string_view yaml_text) {
  return ParseText(yaml_text, /*base_dir=*/"");
}

absl::StatusOr<RegistryConfig> LoadRegistryYamlFile(const std::string& path) {
  auto in_file = [&path](const absl::Status& status) { return Prefixed(path, status); };
  absl::StatusOr<std::string> text = ReadTextFile(path);
  if (!text.ok()) return in_file(text.status());
  const size_t slash = path.rfind('/');
  std::string base_dir = slash == std::string::npos ? "" : path.substr(0, slash == 0 ? 1 : slash);
  absl::StatusOr<RegistryConfig> config = ParseText(*text, base_dir);
  if (!config.ok()) return in_file(config.status());
  return config;
}

}  // namespace registry::conf
