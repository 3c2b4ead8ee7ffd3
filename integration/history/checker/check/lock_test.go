// SPDX-License-Identifier: Apache-2.0

package check

import (
	"strings"
	"testing"
)

const (
	overlap    = "lock overlap"
	misplaced  = "fenced write outside its hold"
	lockName   = "schema/db"
	anotherKey = "/counter"
)

func TestHoldsHandedOverPass(t *testing.T) {
	// b's acquire returns after a's release was called: the release freed the lock.
	pass(t, acquire("a", lockName, "a1", 0, 10), release("a", lockName, "a1", 20, 30),
		acquire("b", lockName, "b1", 5, 25), release("b", lockName, "b1", 40, 50))
}

func TestOverlappingHoldsAreFlagged(t *testing.T) {
	flagged(t, overlap, acquire("a", lockName, "a1", 0, 10), release("a", lockName, "a1", 50, 60),
		acquire("b", lockName, "b1", 5, 20), release("b", lockName, "b1", 30, 40))
	// Holds of two locks never conflict.
	pass(t, acquire("a", lockName, "a1", 0, 10), release("a", lockName, "a1", 50, 60),
		acquire("b", "other", "b1", 5, 20), release("b", "other", "b1", 30, 40))
}

func TestAReleaseWithALostReplyEndsTheHoldAtItsCall(t *testing.T) {
	pass(t, acquire("a", lockName, "a1", 0, 10), unknown(release("a", lockName, "a1", 20, 0)),
		acquire("b", lockName, "b1", 15, 25), release("b", lockName, "b1", 40, 50))
	pass(t, acquire("a", lockName, "a1", 0, 10), failed(release("a", lockName, "a1", 20, 80)),
		acquire("b", lockName, "b1", 15, 25), release("b", lockName, "b1", 40, 50))
}

func TestALostHoldEndsWhenItsLossIsReported(t *testing.T) {
	ops := []*Op{acquire("a", lockName, "a1", 0, 10), lost("a", lockName, "a1", 40),
		release("a", lockName, "a1", 90, 95)}
	pass(t, with(ops, acquire("b", lockName, "b1", 20, 45), release("b", lockName, "b1", 60, 70))...)
	flagged(t, overlap, with(ops, acquire("b", lockName, "b1", 20, 35),
		release("b", lockName, "b1", 60, 70))...)
}

func TestAHoldOfAKilledProcessEndsWithItsLastRecord(t *testing.T) {
	ops := []*Op{acquire("a", lockName, "a1", 0, 10), put("a", "/x", "1", 20, 30)}
	pass(t, with(ops, acquire("b", lockName, "b1", 25, 35))...)
	flagged(t, overlap, with(ops, acquire("b", lockName, "b1", 5, 25),
		release("b", lockName, "b1", 40, 50))...)
}

func TestASemaphoreAllowsItsCapacity(t *testing.T) {
	sem := func(p, hold string, call, ret int64) *Op {
		o := acquire(p, "sem", hold, call, ret)
		o.Capacity = 2
		return o
	}
	ops := []*Op{sem("a", "a1", 0, 10), release("a", "sem", "a1", 100, 110),
		sem("b", "b1", 0, 20), release("b", "sem", "b1", 100, 110)}
	pass(t, ops...)
	flagged(t, overlap, with(ops, sem("c", "c1", 30, 40), release("c", "sem", "c1", 50, 60))...)
}

func TestAFencedWriteInsideItsHoldPasses(t *testing.T) {
	pass(t, acquire("a", lockName, "a1", 0, 10), fenced("a", lockName, "a1", anotherKey, "1", 20, 30),
		release("a", lockName, "a1", 40, 50), acquire("b", lockName, "b1", 45, 55),
		fenced("b", lockName, "b1", anotherKey, "2", 60, 70), release("b", lockName, "b1", 80, 90))
	// A stale holder's write refused by Consul is no violation.
	pass(t, acquire("a", lockName, "a1", 0, 10), lost("a", lockName, "a1", 40),
		acquire("b", lockName, "b1", 45, 55),
		failed(fenced("a", lockName, "a1", anotherKey, "1", 60, 70)))
}

func TestAFencedWriteOutsideItsHoldIsFlagged(t *testing.T) {
	// After its own release was acknowledged.
	report := flagged(t, misplaced, acquire("a", lockName, "a1", 0, 10),
		release("a", lockName, "a1", 20, 30), fenced("a", lockName, "a1", anotherKey, "1", 40, 50))
	if !strings.Contains(report.String(), "accepted outside hold a1") {
		t.Fatalf("the report does not say why:\n%s", report)
	}
	// While another hold certainly held the lock (a's release never finished).
	flagged(t, misplaced, acquire("a", lockName, "a1", 0, 10), lost("a", lockName, "a1", 20),
		acquire("b", lockName, "b1", 25, 30), fenced("a", lockName, "a1", anotherKey, "1", 40, 50),
		release("b", lockName, "b1", 60, 70))
	// Under another process's hold, or a hold never acquired.
	flagged(t, misplaced, acquire("a", lockName, "a1", 0, 10),
		fenced("b", lockName, "a1", anotherKey, "1", 20, 30), release("a", lockName, "a1", 40, 50))
	flagged(t, misplaced, fenced("b", lockName, "b9", anotherKey, "1", 20, 30))
}

func TestAFencedWriteThatMayHaveLandedBeforeTheNextHoldPasses(t *testing.T) {
	// Its call came before b's acquire returned: it may have landed while a still held.
	pass(t, acquire("a", lockName, "a1", 0, 10), lost("a", lockName, "a1", 20),
		acquire("b", lockName, "b1", 25, 35), fenced("a", lockName, "a1", anotherKey, "1", 15, 50),
		release("b", lockName, "b1", 60, 70))
}

func TestAReleaseOfAHoldNeverAcquiredIsAMalformedHistory(t *testing.T) {
	if _, err := Check([]*Op{release("a", lockName, "a1", 0, 10)}, Options{}); err == nil {
		t.Fatal("accepted a release of a hold never acquired")
	}
}
