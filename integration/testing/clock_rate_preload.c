// SPDX-License-Identifier: Apache-2.0
// integration/testing/clock_rate_preload.c
//
// A clock-rate fault for one process, loaded with LD_PRELOAD: its monotonic clock runs at
// REGISTRY_CLOCK_RATE times the host's (0.9: slow, 1.1: fast) from the moment it starts, and its
// monotonic sleeps and waits last accordingly, as on a machine whose clock runs at that rate. The
// wall clock is left alone: the plugin keeps its schedules and deadlines on the monotonic clock,
// and Abseil's timed waits use the wall clock against the kernel's, which a faked wall clock would
// make inconsistent.
//
// Why not libfaketime: with a rate, it answers CLOCK_MONOTONIC on the wall clock's scale and does
// not translate pthread_cond_clockwait, so every std::condition_variable wait on steady_clock
// waits decades (seen with 0.9.10).
//
// What is translated: clock_gettime and clock_nanosleep on the monotonic clocks, nanosleep, and
// pthread_cond_clockwait on CLOCK_MONOTONIC (std::condition_variable's steady waits). poll and
// epoll timeouts are not: they are real milliseconds, after which code that waits for a moment on
// its clock reads that clock again and waits for the rest.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double rate = 1.0;
static int64_t origin_ns;  // the host's monotonic time when the process started

static int64_t ToNs(const struct timespec* t) {
  return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

static struct timespec FromNs(int64_t ns) {
  struct timespec t = {ns / 1000000000, ns % 1000000000};
  return t;
}

static int IsMonotonic(clockid_t clock) {
  return clock == CLOCK_MONOTONIC || clock == CLOCK_MONOTONIC_RAW ||
         clock == CLOCK_MONOTONIC_COARSE || clock == CLOCK_BOOTTIME;
}

static int64_t HostMonotonicNs(void) {
  struct timespec t;
  syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &t);
  return ToNs(&t);
}

// The process's clock at host time `host`, and back.
static int64_t Faked(int64_t host) { return origin_ns + (int64_t)((host - origin_ns) * rate); }
static int64_t Host(int64_t faked) { return origin_ns + (int64_t)((faked - origin_ns) / rate); }

__attribute__((constructor)) static void Init(void) {
  const char* text = getenv("REGISTRY_CLOCK_RATE");
  const double parsed = text != NULL ? strtod(text, NULL) : 1.0;
  rate = parsed >= 0.01 && parsed <= 100 ? parsed : 1.0;
  origin_ns = HostMonotonicNs();
}

int clock_gettime(clockid_t clock, struct timespec* t) {
  const long result = syscall(SYS_clock_gettime, clock, t);
  if (result == 0 && IsMonotonic(clock)) *t = FromNs(Faked(ToNs(t)));
  return (int)result;
}

int clock_nanosleep(clockid_t clock, int flags, const struct timespec* request,
                    struct timespec* remain) {
  static int (*next)(clockid_t, int, const struct timespec*, struct timespec*);
  if (next == NULL) next = dlsym(RTLD_NEXT, "clock_nanosleep");
  struct timespec host = *request;
  if (flags & TIMER_ABSTIME) {
    if (IsMonotonic(clock)) host = FromNs(Host(ToNs(request)));
  } else {
    host = FromNs((int64_t)(ToNs(request) / rate));
  }
  return next(clock, flags, &host, remain);
}

int nanosleep(const struct timespec* request, struct timespec* remain) {
  return clock_nanosleep(CLOCK_MONOTONIC, 0, request, remain);
}

int pthread_cond_clockwait(pthread_cond_t* cond, pthread_mutex_t* mutex, clockid_t clock,
                           const struct timespec* deadline) {
  static int (*next)(pthread_cond_t*, pthread_mutex_t*, clockid_t, const struct timespec*);
  if (next == NULL) next = dlsym(RTLD_NEXT, "pthread_cond_clockwait");
  if (!IsMonotonic(clock)) return next(cond, mutex, clock, deadline);
  const struct timespec host = FromNs(Host(ToNs(deadline)));
  return next(cond, mutex, clock, &host);
}
