// SPDX-License-Identifier: Apache-2.0
#include "base/log.h"

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_replace.h"
#include "absl/synchronization/mutex.h"

namespace registry {
namespace {

constexpr absl::string_view kRedacted = "<redacted>";

int Rank(LogLevel level) { return static_cast<int>(level); }

// Owns the log's state. Leaked on purpose (never destroyed): background threads of the plugin
// may log while the process exits, and the plugin is loaded with RTLD_NODELETE.
class Logger {
 public:
  static Logger& Get() {
    static Logger* const logger = new Logger;
    return *logger;
  }

  bool Enabled(LogLevel level) const {
    return Rank(level) <= threshold_.load(std::memory_order_relaxed);
  }

  void Write(LogLevel level, absl::string_view component, std::string message) {
    LogRecord record{level, absl::Now(), Redact(std::string(component)),
                     Redact(std::move(message))};
    {
      absl::MutexLock lock(&mu_);
      if (sink_ != nullptr) {
        Enqueue(std::move(record));
        return;
      }
      if (Rank(level) > Rank(stderr_level_)) return;
    }
    // Outside the lock: a blocked stderr must not hold up a later SetLogSink().
    std::fprintf(stderr, "%s\n", FormatLogLine(record).c_str());
  }

  // Outside calls are serialized by set_mu_; a call from inside the sink only swaps the sink (it
  // neither waits nor starts or stops the delivery thread, which it is running on).
  void SetSink(LogSink sink, LogLevel min_level) {
    auto installed = sink ? std::make_shared<const LogSink>(std::move(sink)) : nullptr;
    if (std::this_thread::get_id() == delivery_thread_id_.load()) {
      absl::MutexLock lock(&mu_);
      Install(std::move(installed), min_level);
      return;
    }
    absl::MutexLock serial(&set_mu_);
    std::thread finished;
    {
      absl::MutexLock lock(&mu_);
      Install(std::move(installed), min_level);
      if (sink_ != nullptr && !delivery_thread_.joinable()) StartDelivery();
      const uint64_t last = enqueued_;
      auto old_records_delivered = [this, last]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return delivered_ >= last;
      };
      mu_.Await(absl::Condition(&old_records_delivered));
      if (sink_ != nullptr || !delivery_thread_.joinable()) return;
      stop_ = true;
      finished = std::move(delivery_thread_);
    }
    finished.join();
    delivery_thread_id_.store(std::thread::id());
    absl::MutexLock lock(&mu_);
    stop_ = false;
    if (sink_ != nullptr) StartDelivery();  // installed from inside the last sink call
  }

  void SetStderrLevel(LogLevel level) {
    absl::MutexLock lock(&mu_);
    stderr_level_ = level;
    UpdateThreshold();
  }

  void AddSecret(const std::string& secret) {
    if (secret.empty()) return;
    absl::MutexLock lock(&secrets_mu_);
    ++secrets_[secret];
  }

  void RemoveSecret(const std::string& secret) {
    absl::MutexLock lock(&secrets_mu_);
    auto it = secrets_.find(secret);
    if (it != secrets_.end() && --it->second == 0) secrets_.erase(it);
  }

 private:
  struct Queued {
    std::shared_ptr<const LogSink> sink;  // the sink installed when the record was made
    LogRecord record;
  };

  void Install(std::shared_ptr<const LogSink> sink, LogLevel min_level)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    sink_ = std::move(sink);
    sink_level_ = min_level;
    UpdateThreshold();
  }

  void StartDelivery() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    delivery_thread_ = std::thread([this] { Deliver(); });
  }

  void Enqueue(LogRecord record) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (Rank(record.level) > Rank(sink_level_)) return;
    // After drops the notice goes first, and needs its own place.
    const size_t needed = dropped_ > 0 ? 2 : 1;
    if (queue_.size() + needed > kLogQueueCapacity) {
      ++dropped_;
      return;
    }
    if (dropped_ > 0) {
      queue_.push_back({sink_, DroppedNotice()});
      ++enqueued_;
      dropped_ = 0;
    }
    queue_.push_back({sink_, std::move(record)});
    ++enqueued_;
  }

  LogRecord DroppedNotice() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return {LogLevel::kWarn, absl::Now(), "log",
            absl::StrCat(dropped_, " log record(s) dropped: the log sink fell ", kLogQueueCapacity,
                         " records behind")};
  }

  void UpdateThreshold() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    threshold_.store(Rank(sink_ != nullptr ? sink_level_ : stderr_level_),
                     std::memory_order_relaxed);
  }

  std::string Redact(std::string text) const {
    absl::ReaderMutexLock lock(&secrets_mu_);
    for (const auto& [secret, count] : secrets_) {
      if (text.find(secret) != std::string::npos) absl::StrReplaceAll({{secret, kRedacted}}, &text);
    }
    return text;
  }

  // The delivery thread: calls each queued record's sink, one at a time, with no lock held.
  void Deliver() {
    delivery_thread_id_.store(std::this_thread::get_id());
    for (;;) {
      Queued next;
      {
        absl::MutexLock lock(&mu_);
        auto ready = [this]()
                         ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_ || !queue_.empty(); };
        mu_.Await(absl::Condition(&ready));
        if (queue_.empty()) return;  // stop_ and nothing left
        next = std::move(queue_.front());
        queue_.pop_front();
      }
      try {
        (*next.sink)(next.record);
      } catch (...) {
        // A host sink that throws loses that record only.
      }
      absl::MutexLock lock(&mu_);
      ++delivered_;
    }
  }

  std::atomic<int> threshold_{Rank(LogLevel::kWarn)};

  absl::Mutex set_mu_;  // serializes SetSink() calls from outside the sink; taken before mu_
  absl::Mutex mu_;
  LogLevel stderr_level_ ABSL_GUARDED_BY(mu_) = LogLevel::kWarn;
  std::shared_ptr<const LogSink> sink_ ABSL_GUARDED_BY(mu_);  // null: stderr
  LogLevel sink_level_ ABSL_GUARDED_BY(mu_) = LogLevel::kWarn;
  std::deque<Queued> queue_ ABSL_GUARDED_BY(mu_);
  uint64_t dropped_ ABSL_GUARDED_BY(mu_) = 0;    // since the last notice
  uint64_t enqueued_ ABSL_GUARDED_BY(mu_) = 0;   // items ever queued
  uint64_t delivered_ ABSL_GUARDED_BY(mu_) = 0;  // queued items whose sink call returned
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  // Runs Deliver() while a host sink is installed; joined by SetSink() when it is removed.
  std::thread delivery_thread_ ABSL_GUARDED_BY(mu_);
  // Set by the delivery thread itself, cleared after its join: tells SetSink() it is called
  // from inside the sink.
  std::atomic<std::thread::id> delivery_thread_id_{};

  mutable absl::Mutex secrets_mu_;
  std::map<std::string, int> secrets_ ABSL_GUARDED_BY(secrets_mu_);  // secret -> registrations
};

}  // namespace

absl::string_view LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kError:
      return "error";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kDebug:
      return "debug";
  }
  return "unknown";
}

std::optional<LogLevel> ParseLogLevel(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  if (lower == "error") return LogLevel::kError;
  if (lower == "warn" || lower == "warning") return LogLevel::kWarn;
  if (lower == "info") return LogLevel::kInfo;
  if (lower == "debug") return LogLevel::kDebug;
  return std::nullopt;
}

bool LogEnabled(LogLevel level) { return Logger::Get().Enabled(level); }

void LogMessage(LogLevel level, absl::string_view component, std::string message) {
  if (!LogEnabled(level)) return;
  Logger::Get().Write(level, component, std::move(message));
}

void SetLogSink(LogSink sink, LogLevel min_level) {
  Logger::Get().SetSink(std::move(sink), min_level);
}

void SetStderrLogLevel(LogLevel level) { Logger::Get().SetStderrLevel(level); }

void RegisterLogSecret(const std::string& secret) { Logger::Get().AddSecret(secret); }

void UnregisterLogSecret(const std::string& secret) { Logger::Get().RemoveSecret(secret); }

std::string FormatLogLine(const LogRecord& record) {
  const char letter = absl::ascii_toupper(LogLevelName(record.level)[0]);
  return absl::StrCat(absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", record.time, absl::UTCTimeZone()),
                      " ", absl::string_view(&letter, 1), " ", record.component, ": ",
                      record.message);
}

}  // namespace registry
