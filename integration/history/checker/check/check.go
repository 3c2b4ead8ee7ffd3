// SPDX-License-Identifier: Apache-2.0

package check

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// Options of a check.
type Options struct {
	// OutDir receives, on a violation, porcupine's visualization of each
	// failing key (at most MaxVisualizations, smallest first) and report.txt.
	// Empty: nothing is written.
	OutDir string
	// KeyTimeout bounds porcupine's search on one key; 0: no bound. A key it
	// cannot decide in time is reported as undecided, not as passed.
	KeyTimeout time.Duration
}

// MaxVisualizations bounds the HTML files written for one check.
const MaxVisualizations = 10

// Violation is one thing the history shows the plugin got wrong.
type Violation struct {
	Kind    string // "not linearizable", "lock overlap", "fenced write outside its hold"
	Subject string // the key or the lock
	Ops     int    // operations in the failing key's history (or holds involved)
	Text    string
	// Visualization is the HTML file of a failing key, when one was written.
	Visualization string
}

// Report is the outcome of a check.
type Report struct {
	Ops        int // operations read
	KeyOps     int // operations checked by porcupine, summed over keys
	Keys       int
	Locks      int
	Watchers   int
	Elapsed    time.Duration
	Violations []Violation // key violations first, smallest key history first
	Undecided  []string    // keys porcupine could not decide within KeyTimeout
}

// OK tells whether the history passed every check.
func (r *Report) OK() bool { return len(r.Violations) == 0 && len(r.Undecided) == 0 }

// Smallest is the smallest failing key history, if a key failed.
func (r *Report) Smallest() *Violation {
	for i := range r.Violations {
		if r.Violations[i].Kind == "not linearizable" {
			return &r.Violations[i]
		}
	}
	return nil
}

// CheckDir reads the history in dir and checks it.
func CheckDir(dir string, options Options) (*Report, error) {
	ops, err := ReadDir(dir)
	if err != nil {
		return nil, err
	}
	return Check(ops, options)
}

// Check checks a history: every key for linearizability (with its watchers),
// then every lock.
func Check(ops []*Op, options Options) (*Report, error) {
	began := time.Now()
	report := &Report{Ops: len(ops)}
	lockViolations, locks, err := checkLocks(ops)
	if err != nil {
		return nil, err
	}
	report.Locks = locks
	keys := partitionByKey(ops)
	report.Keys = len(keys)
	watchers := map[string]bool{}
	for _, k := range keys {
		report.KeyOps += len(k.ops)
		for _, w := range k.watchers {
			watchers[w] = true
		}
	}
	report.Watchers = len(watchers)
	var failed []keyResult
	for _, result := range checkKeys(keys, options.KeyTimeout) {
		switch result.result {
		case porcupine.Illegal:
			failed = append(failed, result)
		case porcupine.Unknown:
			report.Undecided = append(report.Undecided, result.key)
		}
	}
	sort.SliceStable(failed, func(i, j int) bool { return failed[i].ops < failed[j].ops })
	for i, f := range failed {
		v := Violation{
			Kind: "not linearizable", Subject: f.key, Ops: f.ops,
			Text: fmt.Sprintf("key %s: no order of its %d operations satisfies the model", f.key, f.ops),
		}
		if options.OutDir != "" && i < MaxVisualizations {
			v.Visualization = filepath.Join(options.OutDir, fmt.Sprintf("%02d-%s.html", i, fileName(f.key)))
			if err := porcupine.VisualizePath(f.model, f.info, v.Visualization); err != nil {
				return nil, fmt.Errorf("writing the visualization of key %s: %v", f.key, err)
			}
		}
		report.Violations = append(report.Violations, v)
	}
	report.Violations = append(report.Violations, lockViolations...)
	report.Elapsed = time.Since(began)
	if options.OutDir != "" && !report.OK() {
		path := filepath.Join(options.OutDir, "report.txt")
		if err := os.WriteFile(path, []byte(report.String()), 0o644); err != nil {
			return nil, err
		}
	}
	return report, nil
}

// fileName makes a key part of a file name: "/a/b" becomes "key_a_b" (the
// caller numbers the files, so that "/a_b" does not overwrite it).
func fileName(key string) string {
	var b strings.Builder
	b.WriteString("key")
	for _, r := range key {
		if r == '/' || r == '.' || r < ' ' || r == '\\' {
			b.WriteRune('_')
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// String is the report as the CLI prints it.
func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "checked %d operations (%d in %d key histories, %d locks, %d watchers) in %s: ",
		r.Ops, r.KeyOps, r.Keys, r.Locks, r.Watchers, r.Elapsed.Round(time.Millisecond))
	switch {
	case r.OK():
		b.WriteString("no violation\n")
		return b.String()
	case len(r.Violations) > 0:
		fmt.Fprintf(&b, "%d violations\n", len(r.Violations))
	default:
		b.WriteString("undecided\n")
	}
	if s := r.Smallest(); s != nil {
		fmt.Fprintf(&b, "smallest failing key history: %s (%d operations)", s.Subject, s.Ops)
		if s.Visualization != "" {
			fmt.Fprintf(&b, ", see %s", s.Visualization)
		}
		b.WriteString("\n")
	}
	for _, v := range r.Violations {
		fmt.Fprintf(&b, "%s, %s: %s\n", v.Kind, v.Subject, v.Text)
	}
	for _, key := range r.Undecided {
		fmt.Fprintf(&b, "undecided within the key timeout: %s\n", key)
	}
	return b.String()
}
