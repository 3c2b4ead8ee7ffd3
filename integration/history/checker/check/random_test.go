// SPDX-License-Identifier: Apache-2.0

package check

import (
	"fmt"
	"math/rand"
	"testing"
	"time"
)

// simulate makes the history of a store that is linearizable by construction:
// every call takes effect at one instant inside its [call, return] (or, with
// an unknown outcome, at that instant or never), and a watcher reports, late,
// states the key really went through, in order. The checker must pass it.
func simulate(seed int64, keys, opsPerKey int) []*Op {
	r := rand.New(rand.NewSource(seed))
	var ops []*Op
	for k := 0; k < keys; k++ {
		key := fmt.Sprintf("/k%d", k)
		value, exists := "", false
		type state struct {
			exists bool
			val    string
			at     int64 // when it took effect
		}
		var states []state
		at := int64(0)
		for i := 0; i < opsPerKey; i++ {
			at += int64(1 + r.Intn(5))
			p := fmt.Sprintf("p%d", r.Intn(4))
			call, ret := at-int64(r.Intn(12)), at+int64(r.Intn(12))
			var op *Op
			switch r.Intn(4) {
			case 0:
				op = get(p, key, value, call, ret)
			case 1, 2:
				v := fmt.Sprintf("%d.%d", k, i)
				op = put(p, key, v, call, ret)
				if r.Intn(5) == 0 {
					op = unknown(op)
					if r.Intn(2) == 0 {
						break // never applied
					}
				}
				value, exists = v, true
				states = append(states, state{true, v, at})
			case 3:
				op = del(p, key, call, ret)
				if exists {
					states = append(states, state{false, "", at})
				}
				value, exists = "", false
			}
			ops = append(ops, op)
		}
		// The watcher reports a lagging sample of the states (mostly soon after
		// the change, sometimes much later), then its final view.
		present, last, delivered := false, "", int64(0)
		for j, s := range states {
			if j != len(states)-1 && r.Intn(3) == 0 {
				continue // coalesced
			}
			kind := "DELETED"
			switch {
			case s.exists && present:
				kind = "UPDATED"
			case s.exists:
				kind = "ADDED"
			case !present:
				continue // absent to absent: nothing to report
			}
			v := s.val
			if !s.exists {
				v = last
			}
			lag := int64(r.Intn(20))
			if r.Intn(10) == 0 {
				lag = 200
			}
			delivered = max(delivered+1, s.at+lag)
			ops = append(ops, event("w", kind, key, v, delivered))
			present, last = s.exists, s.val
		}
		ops = append(ops, watchEnd("w", key, max(delivered, at)+20))
	}
	return ops
}

func TestRandomLinearizableHistoriesPass(t *testing.T) {
	for seed := int64(1); seed <= 30; seed++ {
		ops := simulate(seed, 3, 60)
		report, err := Check(ops, Options{KeyTimeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if !report.OK() {
			t.Fatalf("seed %d: a linearizable history was flagged:\n%s", seed, report)
		}
	}
}

// A run's cost, reported with -v: 20 keys of 150 operations each, a watcher on each.
func TestAHistoryOfThousandsOfOperationsPasses(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	ops := simulate(99, 20, 150)
	report, err := Check(ops, Options{KeyTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if !report.OK() {
		t.Fatalf("flagged:\n%s", report)
	}
	t.Logf("%s", report)
}
