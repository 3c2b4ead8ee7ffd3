// SPDX-License-Identifier: Apache-2.0

package check

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Builders of hand-made history lines. Times are plain numbers: only their
// order matters to the checker.

func str(s string) *string { return &s }
func flag(b bool) *bool    { return &b }

var line int

func mk(process, kind, key string, call, ret int64) *Op {
	line++
	return &Op{Process: process, Op: kind, Key: key, Call: call, Return: ret, Outcome: Ok,
		Where: fmt.Sprintf("test:%d", line)}
}

func put(p, key, v string, call, ret int64) *Op {
	o := mk(p, OpPut, key, call, ret)
	o.Value = str(v)
	return o
}

func ephemeral(p, key, v string, call, ret int64) *Op {
	o := put(p, key, v, call, ret)
	o.Op = OpEphemeralPut
	return o
}

func putIfAbsent(p, key, v string, created bool, call, ret int64) *Op {
	o := put(p, key, v, call, ret)
	o.Op, o.Created = OpPutIfAbsent, flag(created)
	return o
}

func update(p, key, v string, found bool, call, ret int64) *Op {
	o := put(p, key, v, call, ret)
	o.Op, o.Found = OpUpdate, flag(found)
	return o
}

func del(p, key string, call, ret int64) *Op { return mk(p, OpDelete, key, call, ret) }

// get reads v; "" means the key was absent.
func get(p, key, v string, call, ret int64) *Op {
	o := mk(p, OpGet, key, call, ret)
	o.Found = flag(v != "")
	if v != "" {
		o.Value = str(v)
	}
	return o
}

func unknown(o *Op) *Op {
	o.Outcome, o.Return, o.Error = Unknown, 0, "timed out"
	return o
}

func failed(o *Op) *Op {
	o.Outcome, o.Error = Failed, "refused"
	return o
}

func acquire(p, lock, hold string, call, ret int64) *Op {
	o := mk(p, OpLockAcquire, "", call, ret)
	o.Lock, o.Hold = lock, hold
	return o
}

func release(p, lock, hold string, call, ret int64) *Op {
	o := acquire(p, lock, hold, call, ret)
	o.Op = OpLockRelease
	return o
}

func lost(p, lock, hold string, at int64) *Op {
	o := acquire(p, lock, hold, at, at)
	o.Op = OpLockLost
	return o
}

func fenced(p, lock, hold, key, v string, call, ret int64) *Op {
	o := put(p, key, v, call, ret)
	o.Op, o.Lock, o.Hold = OpFencedPut, lock, hold
	return o
}

func event(watch, kind, key, v string, at int64) *Op {
	o := mk("watcher", OpWatchEvent, key, at, at)
	o.Watch, o.Event, o.Value = watch, kind, str(v)
	return o
}

func watchEnd(watch, prefix string, at int64) *Op {
	o := mk("watcher", OpWatchEnd, prefix, at, at)
	o.Watch = watch
	return o
}

func run(t *testing.T, ops ...*Op) *Report {
	t.Helper()
	for _, o := range ops {
		if err := o.validate(); err != nil {
			t.Fatalf("bad test line %v: %v", o, err)
		}
	}
	report, err := Check(ops, Options{KeyTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return report
}

// pass fails the test unless the history passes every check.
func pass(t *testing.T, ops ...*Op) {
	t.Helper()
	if report := run(t, ops...); !report.OK() {
		t.Fatalf("a legal history was flagged:\n%s", report)
	}
}

// flagged fails the test unless the history shows a violation of kind.
func flagged(t *testing.T, kind string, ops ...*Op) *Report {
	t.Helper()
	report := run(t, ops...)
	for _, v := range report.Violations {
		if v.Kind == kind {
			return report
		}
	}
	t.Fatalf("no %q violation found:\n%s", kind, report)
	return nil
}

func TestReportNamesTheSmallestFailingKey(t *testing.T) {
	report := flagged(t, "not linearizable",
		put("a", "/big", "1", 0, 10), put("a", "/big", "2", 20, 30), get("b", "/big", "1", 40, 50),
		put("a", "/small", "1", 0, 10), get("b", "/small", "", 20, 30))
	if s := report.Smallest(); s == nil || s.Subject != "/small" || s.Ops != 2 {
		t.Fatalf("smallest failing key: %+v\n%s", s, report)
	}
	if !strings.Contains(report.String(), "smallest failing key history: /small (2 operations)") {
		t.Fatalf("report does not name it:\n%s", report)
	}
}
