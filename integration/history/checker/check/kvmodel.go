// SPDX-License-Identifier: Apache-2.0

package check

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strings"

	"github.com/anishathalye/porcupine"
)

// The sequential specification of one repository key, with the watchers of
// that key, for porcupine.
//
// Reads (Repository::Get) are consistent reads: each returns the state at its
// linearization point. Watches read in Consul's default mode, which may be
// stale: a watch event is a read of the key's state at some moment before its
// delivery, however long before, but after the moment its watcher's previous
// event read (the n-th event of a watcher on a key steps only after the
// (n-1)-th). So an event reports a state the key really had, the events come
// in the order of the writes, they may skip states (the plugin coalesces rapid
// writes), and its type must fit the watcher's previous view: ADDED after
// absent, UPDATED after present, DELETED (carrying the last value told) only
// of a present view and an absent key. watch_end reads the key at its own
// time, after every event of its watcher: the final view must be the state.
//
// Keys written with ephemeral_put or put_if_absent (session-bound) may vanish
// when their session ends and be re-created by the restorer of an instance
// that wrote them, without any call in the history. For such a key (backs not
// empty) every observing step may first see the key vanished or restored to a
// value some process wrote ephemerally. Keys never written ephemerally are
// checked exactly.

// kvCall is porcupine's input: a history line, and for a watch line its
// watcher's count of events on the key up to and including it.
type kvCall struct {
	op *Op
	n  int
}

// back is the value a process's restorer would re-create.
type back struct {
	process, val string
}

// view is what a watcher last reported for the key.
type view struct {
	id      string
	events  int // how many events it has reported
	present bool
	val     string
}

type kvState struct {
	exists   bool
	val      string
	backs    []back // sorted by process
	watchers []view // sorted by id
}

// kvModel is the model of a key.
func kvModel() porcupine.Model {
	nm := porcupine.NondeterministicModel{
		Init: func() []interface{} { return []interface{}{kvState{}} },
		Step: func(state, input, _ interface{}) []interface{} {
			return step(state.(kvState), input.(kvCall))
		},
		Equal:             func(a, b interface{}) bool { return equal(a.(kvState), b.(kvState)) },
		Hash:              func(s interface{}) uint64 { return hash(s.(kvState)) },
		DescribeOperation: func(input, _ interface{}) string { return describeOp(input.(kvCall).op) },
		DescribeState:     func(s interface{}) string { return describeState(s.(kvState)) },
	}
	return nm.ToModel()
}

func step(s kvState, in kvCall) []interface{} {
	op := in.op
	unknown := op.Outcome == Unknown
	var next []interface{}
	keep := func(ok bool, state kvState) {
		if ok {
			next = append(next, state)
		}
	}
	switch op.Op {
	case OpGet:
		for _, c := range s.closure() {
			keep(*op.Found == c.exists && (!c.exists || op.ValueOr() == c.val), c)
		}
	case OpPut, OpFencedPut:
		keep(true, s.write(true, op.ValueOr()))
	case OpEphemeralPut:
		keep(true, s.write(true, op.ValueOr()).withBack(op.Process, op.ValueOr()))
	case OpPutIfAbsent:
		for _, c := range s.closure() {
			created := c.write(true, op.ValueOr()).withBack(op.Process, op.ValueOr())
			keep(!c.exists && (unknown || *op.Created), created)
			keep(c.exists && (unknown || !*op.Created), c)
		}
	case OpUpdate:
		for _, c := range s.closure() {
			keep(c.exists && (unknown || *op.Found), c.write(true, op.ValueOr()))
			keep(!c.exists && (unknown || !*op.Found), c)
		}
	case OpDelete, OpFencedDelete:
		// The deleter's instance no longer re-creates the key; another's still may.
		keep(true, s.write(false, "").withoutBack(op.Process))
	case OpWatchEvent:
		w := s.view(op.Watch)
		if in.n != w.events+1 {
			break // its previous event has not read yet
		}
		for _, c := range s.closure() {
			keep(fits(op, w, c), c.withView(view{op.Watch, in.n, c.exists, c.val}))
		}
	case OpWatchEnd:
		w := s.view(op.Watch)
		for _, c := range s.closure() {
			keep(in.n == w.events && w.present == c.exists && (!c.exists || w.val == c.val), c)
		}
	}
	return next
}

// fits tells whether watch event op, after view w, reports state c.
func fits(op *Op, w view, c kvState) bool {
	switch op.Event {
	case "ADDED":
		return !w.present && c.exists && c.val == op.ValueOr()
	case "UPDATED":
		return w.present && c.exists && c.val == op.ValueOr()
	case "DELETED":
		return w.present && w.val == op.ValueOr() && !c.exists
	}
	return false
}

// closure is the states an observer may find: s, and for a session-bound key
// s vanished or restored to a value a restorer remembers.
func (s kvState) closure() []kvState {
	out := []kvState{s}
	if len(s.backs) == 0 {
		return out
	}
	if s.exists {
		gone := s
		gone.exists, gone.val = false, ""
		out = append(out, gone)
	}
	for _, b := range s.backs {
		if !s.exists || s.val != b.val {
			restored := s
			restored.exists, restored.val = true, b.val
			out = append(out, restored)
		}
	}
	return out
}

func (s kvState) write(exists bool, val string) kvState {
	s.exists, s.val = exists, val
	return s
}

func (s kvState) withBack(process, val string) kvState {
	s.backs = append(s.withoutBack(process).backs, back{process, val})
	sort.Slice(s.backs, func(i, j int) bool { return s.backs[i].process < s.backs[j].process })
	return s
}

func (s kvState) withoutBack(process string) kvState {
	kept := make([]back, 0, len(s.backs))
	for _, b := range s.backs {
		if b.process != process {
			kept = append(kept, b)
		}
	}
	s.backs = kept
	return s
}

func (s kvState) view(id string) view {
	for _, w := range s.watchers {
		if w.id == id {
			return w
		}
	}
	return view{id: id}
}

func (s kvState) withView(w view) kvState {
	watchers := make([]view, 0, len(s.watchers)+1)
	replaced := false
	for _, old := range s.watchers {
		if old.id == w.id {
			old, replaced = w, true
		}
		watchers = append(watchers, old)
	}
	if !replaced {
		watchers = append(watchers, w)
		sort.Slice(watchers, func(i, j int) bool { return watchers[i].id < watchers[j].id })
	}
	s.watchers = watchers
	return s
}

func equal(a, b kvState) bool {
	if a.exists != b.exists || a.val != b.val || len(a.backs) != len(b.backs) ||
		len(a.watchers) != len(b.watchers) {
		return false
	}
	for i := range a.backs {
		if a.backs[i] != b.backs[i] {
			return false
		}
	}
	for i := range a.watchers {
		if a.watchers[i] != b.watchers[i] {
			return false
		}
	}
	return true
}

func hash(s kvState) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%t|%s|%d", s.exists, s.val, len(s.backs))
	for _, w := range s.watchers {
		fmt.Fprintf(h, "|%s:%d:%t:%s", w.id, w.events, w.present, w.val)
	}
	return h.Sum64()
}

func describeOp(op *Op) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", op.Process, op.Op)
	switch {
	case op.Op == OpWatchEvent:
		fmt.Fprintf(&b, " %s %s %q", op.Watch, op.Event, op.ValueOr())
	case op.Op == OpWatchEnd:
		fmt.Fprintf(&b, " %s", op.Watch)
	case op.Value != nil:
		fmt.Fprintf(&b, " %q", *op.Value)
	}
	if op.Found != nil {
		fmt.Fprintf(&b, " found=%t", *op.Found)
	}
	if op.Created != nil {
		fmt.Fprintf(&b, " created=%t", *op.Created)
	}
	if op.Outcome != Ok {
		fmt.Fprintf(&b, " (%s)", op.Outcome)
	}
	return b.String()
}

func describeState(s kvState) string {
	var b strings.Builder
	if s.exists {
		fmt.Fprintf(&b, "%q", s.val)
	} else {
		b.WriteString("absent")
	}
	if len(s.backs) > 0 {
		fmt.Fprintf(&b, " (session-bound, restorable: %v)", s.backs)
	}
	for _, w := range s.watchers {
		if w.present {
			fmt.Fprintf(&b, "; %s sees %q", w.id, w.val)
		} else {
			fmt.Fprintf(&b, "; %s sees absent", w.id)
		}
	}
	return b.String()
}
