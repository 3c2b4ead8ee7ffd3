// SPDX-License-Identifier: Apache-2.0

// Package check checks a recorded history of plugin operations (the format of
// integration/history/README.md): each key's operations for linearizability
// against a key-value model with porcupine, the locks' holds for overlap and
// their fenced writes, and each watcher's events.
package check

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Op is one line of a history: one plugin call of one process.
type Op struct {
	Process  string  `json:"process"`
	Op       string  `json:"op"`
	Key      string  `json:"key,omitempty"`
	Value    *string `json:"value,omitempty"`
	Found    *bool   `json:"found,omitempty"`
	Created  *bool   `json:"created,omitempty"`
	Lock     string  `json:"lock,omitempty"`
	Hold     string  `json:"hold,omitempty"`
	Capacity int     `json:"capacity,omitempty"`
	Watch    string  `json:"watch,omitempty"`
	Event    string  `json:"event,omitempty"`
	Call     int64   `json:"call"`
	Return   int64   `json:"return"`
	Outcome  string  `json:"outcome"`
	Error    string  `json:"error,omitempty"`

	// Where the line was read: "file:line".
	Where string `json:"-"`
}

// Infinity is the return time given to a call whose outcome is unknown: it may
// take effect at any moment after its call, or never (porcupine may order it
// after every other call).
const Infinity = int64(math.MaxInt64)

// The operation names of the format.
const (
	OpGet          = "get"
	OpPut          = "put"
	OpPutIfAbsent  = "put_if_absent"
	OpUpdate       = "update"
	OpDelete       = "delete"
	OpEphemeralPut = "ephemeral_put"
	OpLockAcquire  = "lock_acquire"
	OpLockRelease  = "lock_release"
	OpLockLost     = "lock_lost"
	OpFencedPut    = "fenced_put"
	OpFencedDelete = "fenced_delete"
	OpWatchEvent   = "watch_event"
	OpWatchEnd     = "watch_end"
)

// Ok, Failed and Unknown are the outcomes.
const (
	Ok      = "ok"
	Failed  = "failed"
	Unknown = "unknown"
)

// End is when the call's effect may last take place: its return, or Infinity
// for an unknown outcome.
func (o *Op) End() int64 {
	if o.Outcome == Unknown {
		return Infinity
	}
	return o.Return
}

// ValueOr is the value, or "" when none.
func (o *Op) ValueOr() string {
	if o.Value == nil {
		return ""
	}
	return *o.Value
}

func (o *Op) String() string {
	text, _ := json.Marshal(o)
	return fmt.Sprintf("%s %s", o.Where, text)
}

// ReadDir reads every *.jsonl file of dir (one per process) as one history.
func ReadDir(dir string) ([]*Op, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("history %s: no *.jsonl file", dir)
	}
	sort.Strings(files)
	var ops []*Op
	for _, file := range files {
		read, err := readFile(file)
		if err != nil {
			return nil, err
		}
		ops = append(ops, read...)
	}
	return ops, nil
}

// readFile reads one process's lines. A last line without its newline is
// what a killed process leaves: it is dropped, as the call it describes
// might not have been recorded at all.
func readFile(path string) ([]*Op, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	text := string(data)
	if i := strings.LastIndexByte(text, '\n'); i+1 < len(text) {
		text = text[:i+1]
	}
	var ops []*Op
	scanner := bufio.NewScanner(strings.NewReader(text))
	scanner.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for line := 1; scanner.Scan(); line++ {
		where := fmt.Sprintf("%s:%d", filepath.Base(path), line)
		op := &Op{Where: where}
		if err := json.Unmarshal(scanner.Bytes(), op); err != nil {
			return nil, fmt.Errorf("%s: %v", where, err)
		}
		if err := op.validate(); err != nil {
			return nil, fmt.Errorf("%s: %v", where, err)
		}
		ops = append(ops, op)
	}
	return ops, scanner.Err()
}

// validate checks that the line has what its operation needs.
func (o *Op) validate() error {
	if o.Process == "" {
		return fmt.Errorf("no process")
	}
	switch o.Outcome {
	case Ok, Failed, Unknown:
	default:
		return fmt.Errorf("outcome %q is not ok, failed or unknown", o.Outcome)
	}
	if o.Outcome != Unknown && o.Return < o.Call {
		return fmt.Errorf("returns (%d) before its call (%d)", o.Return, o.Call)
	}
	need := func(ok bool, what string) error {
		if !ok {
			return fmt.Errorf("%s needs %s", o.Op, what)
		}
		return nil
	}
	done := o.Outcome == Ok
	switch o.Op {
	case OpGet:
		if err := need(o.Key != "" && (!done || o.Found != nil), "key and found"); err != nil {
			return err
		}
		return need(!done || !*o.Found || o.Value != nil, "a value when found")
	case OpPut, OpEphemeralPut:
		return need(o.Key != "" && o.Value != nil, "key and value")
	case OpPutIfAbsent:
		return need(o.Key != "" && o.Value != nil && (!done || o.Created != nil),
			"key, value and created")
	case OpUpdate:
		return need(o.Key != "" && o.Value != nil && (!done || o.Found != nil),
			"key, value and found")
	case OpDelete:
		return need(o.Key != "", "key")
	case OpLockAcquire, OpLockRelease, OpLockLost:
		return need(o.Lock != "" && o.Hold != "", "lock and hold")
	case OpFencedPut:
		return need(o.Lock != "" && o.Hold != "" && o.Key != "" && o.Value != nil,
			"lock, hold, key and value")
	case OpFencedDelete:
		return need(o.Lock != "" && o.Hold != "" && o.Key != "", "lock, hold and key")
	case OpWatchEvent:
		if o.Event != "ADDED" && o.Event != "UPDATED" && o.Event != "DELETED" {
			return fmt.Errorf("watch_event needs event ADDED, UPDATED or DELETED, not %q", o.Event)
		}
		return need(o.Watch != "" && o.Key != "" && o.Value != nil && done,
			"watch, key, value and outcome ok")
	case OpWatchEnd:
		return need(o.Watch != "" && o.Key != "" && done, "watch, key and outcome ok")
	}
	return fmt.Errorf("unknown op %q", o.Op)
}
