// SPDX-License-Identifier: Apache-2.0
#include "consul/curl_transport.h"

#include <curl/curl.h>

#include <utility>

#include "absl/strings/str_cat.h"

namespace registry::consul {

// One easy handle plus the multi handle that drives it. The multi handle owns the connection
// cache, so the connections survive between requests that use this slot.
struct CurlTransport::Slot {
  CURL* easy = nullptr;
  CURLM* multi = nullptr;

  Slot() : easy(curl_easy_init()), multi(curl_multi_init()) {}
  ~Slot() {
    if (easy != nullptr) curl_easy_cleanup(easy);
    if (multi != nullptr) curl_multi_cleanup(multi);
  }
  Slot(const Slot&) = delete;
  Slot& operator=(const Slot&) = delete;
};

namespace {

// How long one curl_multi_poll may sleep; libcurl shortens it for its own timers and
// Canceller::Cancel() interrupts it, so this only bounds a missed wake-up.
constexpr int kPollMillis = 1000;

}  // namespace

CurlTransport::CurlTransport(CurlOptions options, size_t max_idle_slots)
    : options_(std::move(options)), max_idle_slots_(max_idle_slots) {
  EnsureCurlInitialized();
}

CurlTransport::~CurlTransport() = default;

std::unique_ptr<CurlTransport::Slot> CurlTransport::TakeSlot() {
  {
    absl::MutexLock lock(&mu_);
    if (!idle_.empty()) {
      std::unique_ptr<Slot> slot = std::move(idle_.back());
      idle_.pop_back();
      return slot;
    }
  }
  auto slot = std::make_unique<Slot>();
  if (slot->easy == nullptr || slot->multi == nullptr) return nullptr;
  return slot;
}

void CurlTransport::ReturnSlot(std::unique_ptr<Slot> slot) {
  {
    absl::MutexLock lock(&mu_);
    if (idle_.size() < max_idle_slots_) {
      idle_.push_back(std::move(slot));
      return;
    }
  }
  slot.reset();  // closes its connections outside the lock
}

absl::StatusOr<HttpResponse> CurlTransport::Execute(const HttpRequest& request,
                                                    Canceller* canceller) {
  if (canceller != nullptr && canceller->IsCancelled()) {
    return absl::CancelledError(
        absl::StrCat(RequestLabel(request), ": cancelled before it started"));
  }
  std::unique_ptr<Slot> slot = TakeSlot();
  if (slot == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat(RequestLabel(request), ": cannot allocate a curl handle"));
  }
  absl::StatusOr<std::unique_ptr<CurlExchange>> exchange =
      CurlExchange::Start(slot->easy, request, options_);
  if (!exchange.ok()) {
    ReturnSlot(std::move(slot));
    return exchange.status();
  }

  CURLM* multi = slot->multi;
  bool cancelled = false;
  CURLcode result = CURLE_GOT_NOTHING;
  CURLMcode multi_error = CURLM_OK;
  {
    // While registered, Cancel() wakes curl_multi_poll; the Waker is destroyed before the slot
    // goes back to the pool, so a late Cancel() never touches a slot in other hands.
    Canceller::Waker waker(canceller, [multi] { curl_multi_wakeup(multi); });
    cancelled = waker.cancelled();
    if (!cancelled) {
      curl_multi_add_handle(multi, slot->easy);
      while (true) {
        int running = 0;
        multi_error = curl_multi_perform(multi, &running);
        if (multi_error != CURLM_OK || running == 0) break;
        multi_error = curl_multi_poll(multi, nullptr, 0, kPollMillis, nullptr);
        if (multi_error != CURLM_OK) break;
        if (canceller != nullptr && canceller->IsCancelled()) {
          cancelled = true;
          break;
        }
      }
      int queued = 0;
      while (CURLMsg* message = curl_multi_info_read(multi, &queued)) {
        if (message->msg == CURLMSG_DONE && message->easy_handle == slot->easy) {
          result = message->data.result;
        }
      }
      // Removing an unfinished transfer closes its connection; a finished one stays cached.
      curl_multi_remove_handle(multi, slot->easy);
    }
  }
  absl::StatusOr<HttpResponse> response =
      cancelled ? absl::CancelledError(absl::StrCat(RequestLabel(request), ": cancelled"))
      : multi_error != CURLM_OK ? absl::InternalError(absl::StrCat(
                                      RequestLabel(request), ": ", request.server,
                                      ": curl multi error: ", curl_multi_strerror(multi_error)))
                                : (*exchange)->Finish(result);
  exchange->reset();
  ReturnSlot(std::move(slot));
  return response;
}

}  // namespace registry::consul
