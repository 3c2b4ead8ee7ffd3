// SPDX-License-Identifier: Apache-2.0

package check

import (
	"fmt"
	"sort"
)

// The lock model. A hold is certain from its acquire's return (the caller
// holds the lock from then on) to the first of its release's call, its
// lost_lock (the lost listener: the plugin's safety invariant says a hold is
// marked lost before anyone else can take the lock), or, with neither, the
// last moment its process recorded anything (a process killed while holding
// did not act later). During its certain interval no other hold may be
// certain, beyond the lock's capacity: two such holds overlapping is a
// violation. The release's outcome does not lengthen the certain interval: a
// release whose reply was lost may well have freed the lock at once, so
// another process's acquire right after its call is legal.
//
// A hold is possible, in the store, from its acquire's call to its release's
// return, or for ever when the release did not succeed (Unlock's error: "the
// store may still bind the lock's key until the session ends") or was never
// recorded. A fenced write that succeeded must have landed while its own hold
// was possible and, for a lock of capacity 1, outside every other hold's
// certain interval: Consul checks the hold's fencing index in the write's own
// transaction, and the index changes with every acquisition.

type hold struct {
	id                     string
	acquire, release, lost *Op
}

// certain is the interval during which the hold certainly held the lock.
func (h *hold) certain(lastSeen map[string]int64) (int64, int64) {
	end := lastSeen[h.acquire.Process]
	if h.release != nil && h.release.Call < end {
		end = h.release.Call
	}
	if h.lost != nil && h.lost.Call < end {
		end = h.lost.Call
	}
	return h.acquire.Return, end
}

// possibleEnd is the last moment the store may have kept the hold.
func (h *hold) possibleEnd() int64 {
	if h.release != nil && h.release.Outcome == Ok {
		return h.release.Return
	}
	return Infinity
}

type lockHistory struct {
	capacity int
	holds    map[string]*hold
	fenced   []*Op
}

// checkLocks returns one violation per overlap or misplaced fenced write, and
// an error when the history is malformed (a release of an unknown hold).
func checkLocks(ops []*Op) ([]Violation, int, error) {
	locks, lastSeen, err := collectLocks(ops)
	if err != nil {
		return nil, 0, err
	}
	names := make([]string, 0, len(locks))
	for name := range locks {
		names = append(names, name)
	}
	sort.Strings(names)
	var violations []Violation
	for _, name := range names {
		l := locks[name]
		violations = append(violations, l.overlaps(name, lastSeen)...)
		violations = append(violations, l.misplacedWrites(name, lastSeen)...)
	}
	return violations, len(names), nil
}

func collectLocks(ops []*Op) (map[string]*lockHistory, map[string]int64, error) {
	locks := map[string]*lockHistory{}
	lastSeen := map[string]int64{}
	holds := map[string]*hold{}
	get := func(name string) *lockHistory {
		if locks[name] == nil {
			locks[name] = &lockHistory{capacity: 1, holds: map[string]*hold{}}
		}
		return locks[name]
	}
	for _, op := range ops {
		if op.End() != Infinity && op.Return > lastSeen[op.Process] {
			lastSeen[op.Process] = op.Return
		} else if op.Call > lastSeen[op.Process] {
			lastSeen[op.Process] = op.Call
		}
		if op.Op != OpLockAcquire || op.Outcome != Ok {
			continue // after a failed acquire the caller holds nothing (distributed_lock.h)
		}
		if holds[op.Hold] != nil {
			return nil, nil, fmt.Errorf("%s: hold %q acquired twice", op.Where, op.Hold)
		}
		l := get(op.Lock)
		if op.Capacity > 1 {
			l.capacity = op.Capacity
		}
		holds[op.Hold] = &hold{id: op.Hold, acquire: op}
		l.holds[op.Hold] = holds[op.Hold]
	}
	for _, op := range ops {
		switch op.Op {
		case OpLockRelease, OpLockLost:
			h := holds[op.Hold]
			if h == nil || h.acquire.Lock != op.Lock {
				return nil, nil, fmt.Errorf("%s: %s of hold %q of lock %q, never acquired",
					op.Where, op.Op, op.Hold, op.Lock)
			}
			if op.Op == OpLockRelease {
				h.release = op
			} else {
				h.lost = op
			}
		case OpFencedPut, OpFencedDelete:
			if op.Outcome == Ok {
				get(op.Lock).fenced = append(get(op.Lock).fenced, op)
			}
		}
	}
	return locks, lastSeen, nil
}

type interval struct {
	start, end int64
	id         string
}

func (l *lockHistory) certainIntervals(lastSeen map[string]int64) []interval {
	var out []interval
	for _, h := range l.holds {
		start, end := h.certain(lastSeen)
		if start < end {
			out = append(out, interval{start, end, h.id})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].start < out[j].start })
	return out
}

// overlaps reports each hold that began while `capacity` others were certain.
// Touching intervals (one's end equal to the next's start) do not overlap: the
// clock's resolution cannot order them.
func (l *lockHistory) overlaps(name string, lastSeen map[string]int64) []Violation {
	var violations []Violation
	var active []interval
	for _, next := range l.certainIntervals(lastSeen) {
		kept := active[:0]
		for _, a := range active {
			if a.end > next.start {
				kept = append(kept, a)
			}
		}
		active = kept
		if len(active) >= l.capacity {
			violations = append(violations, Violation{
				Kind: "lock overlap", Subject: name, Ops: len(active) + 1,
				Text: fmt.Sprintf("hold %s began at %d while %d other holds (capacity %d) were "+
					"held: %s", next.id, next.start, len(active), l.capacity, describeHolds(l, active)),
			})
		}
		active = append(active, next)
	}
	return violations
}

func describeHolds(l *lockHistory, holds []interval) string {
	text := ""
	for _, h := range holds {
		text += fmt.Sprintf("\n  %s [%d, %d] acquired by %s", h.id, h.start, h.end,
			l.holds[h.id].acquire.Where)
	}
	return text
}

// misplacedWrites reports every successful fenced write that cannot have
// landed inside its own hold.
func (l *lockHistory) misplacedWrites(name string, lastSeen map[string]int64) []Violation {
	var others []interval
	if l.capacity == 1 {
		others = l.certainIntervals(lastSeen)
	}
	var violations []Violation
	for _, w := range l.fenced {
		if text := l.misplaced(w, others); text != "" {
			violations = append(violations, Violation{
				Kind: "fenced write outside its hold", Subject: name, Ops: 1, Text: text,
			})
		}
	}
	return violations
}

func (l *lockHistory) misplaced(w *Op, others []interval) string {
	h := l.holds[w.Hold]
	if h == nil || h.acquire.Process != w.Process {
		return fmt.Sprintf("%v\n  accepted under hold %q, which its process never acquired", w, w.Hold)
	}
	lo, hi := max(w.Call, h.acquire.Call), min(w.End(), h.possibleEnd())
	if lo > hi {
		return fmt.Sprintf("%v\n  accepted outside hold %s (acquire called at %d, store may "+
			"have kept it until %d)", w, h.id, h.acquire.Call, h.possibleEnd())
	}
	// Walk the other holds' certain intervals (open) from lo: covered when they
	// leave no instant of [lo, hi] at which the write could have landed.
	reach := lo
	var by []string
	for _, o := range others {
		if o.id != h.id && o.start < reach && o.end > reach {
			reach = o.end
			by = append(by, o.id)
		}
	}
	if reach > hi {
		return fmt.Sprintf("%v\n  accepted while the lock was certainly held by %v", w, by)
	}
	return ""
}
