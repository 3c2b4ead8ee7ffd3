// SPDX-License-Identifier: Apache-2.0

package check

import (
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

// keyHistory is what porcupine checks for one key.
type keyHistory struct {
	key      string
	ops      []*Op
	watchers []string
}

// keyResult is porcupine's verdict on one key.
type keyResult struct {
	key    string
	ops    int
	result porcupine.CheckResult
	model  porcupine.Model
	info   porcupine.LinearizationInfo
}

// under tells whether key is prefix or below it ("/" covers every key).
func under(key, prefix string) bool {
	return prefix == "/" || key == prefix || strings.HasPrefix(key, prefix+"/")
}

// takesPart tells whether op belongs in a linearizability check: a failed
// call changed nothing, and a read whose answer was lost observed nothing.
func takesPart(op *Op) bool {
	switch op.Op {
	case OpLockAcquire, OpLockRelease, OpLockLost:
		return false
	case OpGet:
		return op.Outcome == Ok
	}
	return op.Outcome != Failed
}

// partitionByKey splits the history into one history per key. A delete
// removes the key's whole subtree (Repository::Delete), so it joins every key
// below it; a watch_end joins every key below its watch's key.
func partitionByKey(ops []*Op) []keyHistory {
	byKey := map[string]*keyHistory{}
	var spanning []*Op // deletes and watch_ends
	for _, op := range ops {
		if !takesPart(op) {
			continue
		}
		if op.Op == OpDelete || op.Op == OpFencedDelete || op.Op == OpWatchEnd {
			spanning = append(spanning, op)
			continue
		}
		h := byKey[op.Key]
		if h == nil {
			h = &keyHistory{key: op.Key}
			byKey[op.Key] = h
		}
		h.ops = append(h.ops, op)
	}
	for _, op := range spanning {
		for key, h := range byKey {
			if under(key, op.Key) {
				h.ops = append(h.ops, op)
			}
		}
	}
	var out []keyHistory
	for _, h := range byKey {
		h.ops = dropUnobserved(h.ops)
		seen := map[string]bool{}
		for _, op := range h.ops {
			if op.Watch != "" && !seen[op.Watch] {
				seen[op.Watch] = true
				h.watchers = append(h.watchers, op.Watch)
			}
		}
		sort.Strings(h.watchers)
		out = append(out, *h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

// dropUnobserved leaves out the unknown-outcome plain writes (put, fenced_put)
// whose value nothing reports (no get, no watch event), when the key has no
// update or put_if_absent: such a write, if it took effect, was overwritten or
// deleted before anyone looked, so a linearization with it is one without it.
// (An update or put_if_absent may depend on its making the key exist, and an
// ephemeral write makes the key session-bound: those are kept.) Each unknown
// call is open until Infinity, and porcupine's search grows with every call
// left open; etcd's robustness tests drop them alike.
func dropUnobserved(ops []*Op) []*Op {
	observed := map[string]bool{}
	for _, op := range ops {
		switch op.Op {
		case OpUpdate, OpPutIfAbsent:
			return ops
		case OpGet, OpWatchEvent:
			observed[op.ValueOr()] = true
		}
	}
	kept := ops[:0:0]
	for _, op := range ops {
		plain := op.Op == OpPut || op.Op == OpFencedPut
		if !(plain && op.Outcome == Unknown && !observed[op.ValueOr()]) {
			kept = append(kept, op)
		}
	}
	return kept
}

// operations turns a key's history into porcupine's form. An unknown outcome
// returns at Infinity, so porcupine may apply it at any time after its call,
// including after everything else (never). A watch event read the key at some
// moment before its delivery; that moment cannot precede the first call of a
// write of the value it reports (a DELETED reports the value deleted), nor its
// watcher's previous event's read, so its call is the later of the two. Each
// watch line also counts its watcher's events on the key (the model keeps
// them in order).
func (h keyHistory) operations() []porcupine.Operation {
	ops := append([]*Op(nil), h.ops...)
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].Call < ops[j].Call })
	written := map[string]int64{} // value -> the first call of a write of it
	for _, op := range ops {
		if op.Value != nil && op.Op != OpGet && op.Op != OpWatchEvent {
			if _, seen := written[*op.Value]; !seen {
				written[*op.Value] = op.Call
			}
		}
	}
	clients := map[string]int{}
	events := map[string]int{}
	readFrom := map[string]int64{} // watcher -> earliest read of its next event
	out := make([]porcupine.Operation, 0, len(ops))
	for _, op := range ops {
		client, ok := clients[op.Process]
		if !ok {
			client = len(clients)
			clients[op.Process] = client
		}
		in, call := kvCall{op: op}, op.Call
		switch op.Op {
		case OpWatchEvent:
			events[op.Watch]++
			in.n = events[op.Watch]
			if first, ok := written[op.ValueOr()]; ok && first < call {
				call = max(first, readFrom[op.Watch])
			}
			readFrom[op.Watch] = call
		case OpWatchEnd:
			in.n = events[op.Watch] // events delivered later are caught: n is then too small
		}
		out = append(out, porcupine.Operation{
			ClientId: client, Input: in, Call: call, Output: nil, Return: op.End(),
		})
	}
	return out
}

// checkKeys runs porcupine on every key, on all CPUs, each key given at most
// timeout (0: no limit).
func checkKeys(keys []keyHistory, timeout time.Duration) []keyResult {
	results := make([]keyResult, len(keys))
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i] = checkKey(keys[i], timeout)
			}
		}()
	}
	for i := range keys {
		next <- i
	}
	close(next)
	wg.Wait()
	return results
}

func checkKey(h keyHistory, timeout time.Duration) keyResult {
	model := kvModel()
	result, info := porcupine.CheckOperationsVerbose(model, h.operations(), timeout)
	return keyResult{key: h.key, ops: len(h.ops), result: result, model: model, info: info}
}
