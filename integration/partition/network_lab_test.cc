// SPDX-License-Identifier: Apache-2.0
// integration/partition/network_lab_test.cc
//
// The lab itself, without Consul: each fault blocks what network_lab.h says it blocks, spares
// the rest, and HealAll() brings every path back. Reachability is a TCP connect (the kernel
// completes it against a listening socket; nobody accepts) from a NamespaceThread, with a short
// timeout: a dropped SYN is simply never answered.
#include "integration/partition/network_lab.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace registry::partition {
namespace {

constexpr int kPort = 7070;
constexpr int kConnectTimeoutMs = 300;
constexpr int kOpenAttempts = 10;  // 3 s

// A TCP listener on `address`:kPort created on `thread` (so in its namespace); the fd.
int Listen(NamespaceThread& thread, const std::string& address) {
  int fd = -1;
  thread.Run([&] {
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(kPort);
    inet_pton(AF_INET, address.c_str(), &addr.sin_addr);
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(fd, 64) != 0) {
      close(fd);
      fd = -1;
    }
  });
  return fd;
}

// Whether a TCP connect from `thread`'s namespace to `address`:kPort completes in time.
bool Connects(NamespaceThread& thread, const std::string& address) {
  bool connected = false;
  thread.Run([&] {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(kPort);
    inet_pton(AF_INET, address.c_str(), &addr.sin_addr);
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
      connected = true;
    } else if (errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      int error = 0;
      socklen_t len = sizeof(error);
      connected = poll(&p, 1, kConnectTimeoutMs) == 1 &&
                  getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) == 0 && error == 0;
    }
    close(fd);
  });
  return connected;
}

TEST(NetworkLabTest, EachFaultBlocksWhatItSaysAndHealAllRestoresEveryPath) {
  if (std::string why = NetworkLab::Unsupported(); !why.empty()) GTEST_SKIP() << why;
  absl::StatusOr<std::unique_ptr<NetworkLab>> created = NetworkLab::Create({"a", "b", "c"});
  ASSERT_TRUE(created.ok()) << created.status();
  NetworkLab& lab = **created;
  std::vector<std::unique_ptr<NamespaceThread>> threads;
  std::vector<int> listeners;
  for (int i = 0; i < lab.size(); ++i) {
    absl::StatusOr<std::unique_ptr<NamespaceThread>> thread =
        NamespaceThread::Start(lab.netns_path(i));
    ASSERT_TRUE(thread.ok()) << thread.status();
    threads.push_back(*std::move(thread));
    listeners.push_back(Listen(*threads[i], lab.address(i)));
    ASSERT_GE(listeners.back(), 0) << "cannot listen on " << lab.address(i);
  }
  // reach[i][j] == '1': a connect from i to j completes (a path that should be open may take a
  // few attempts after a heal: ARP resolution starts again); '0': it does not.
  auto expect = [&](const std::string& fault, const std::vector<std::string>& reach) {
    for (int i = 0; i < lab.size(); ++i) {
      for (int j = 0; j < lab.size(); ++j) {
        const bool open = reach[i][j] == '1';
        bool connected = Connects(*threads[i], lab.address(j));
        for (int attempt = 1; open && !connected && attempt < kOpenAttempts; ++attempt) {
          connected = Connects(*threads[i], lab.address(j));
        }
        EXPECT_EQ(connected, open) << fault << ": " << lab.name(i) << " -> " << lab.name(j) << "\n"
                                   << lab.ListRules(i) << lab.ListRules(j);
      }
    }
  };
  const std::vector<std::string> all = {"111", "111", "111"};
  // Loopback is never cut: a node reaches its own address.
  const std::vector<std::string> without_a = {"100", "011", "011"};
  expect("no fault", all);

  ASSERT_EQ(lab.Isolate(0), absl::OkStatus());
  expect("Isolate(a)", without_a);
  ASSERT_EQ(lab.HealAll(), absl::OkStatus());
  expect("healed", all);

  ASSERT_EQ(lab.Partition({0}, {1}), absl::OkStatus());
  expect("Partition({a}, {b})", {"101", "011", "111"});
  ASSERT_EQ(lab.HealAll(), absl::OkStatus());
  expect("healed", all);

  ASSERT_EQ(lab.Loss(0, 100), absl::OkStatus());
  expect("Loss(a, 100)", without_a);
  ASSERT_EQ(lab.HealAll(), absl::OkStatus());
  expect("healed", all);

  ASSERT_EQ(lab.PortDown(0), absl::OkStatus());
  expect("PortDown(a)", without_a);
  ASSERT_EQ(lab.HealAll(), absl::OkStatus());
  expect("healed", all);

  // The namespaces are gone with the lab.
  const std::string netns = lab.netns(0);
  for (int fd : listeners) close(fd);
  threads.clear();
  created->reset();
  EXPECT_NE(access(("/run/netns/" + netns).c_str(), F_OK), 0) << netns << " survived the lab";
}

}  // namespace
}  // namespace registry::partition
