// SPDX-License-Identifier: Apache-2.0

// Command checker checks a recorded history of plugin operations (see
// ../README.md): go run . -history DIR -out DIR.
//
// Exit status: 0 when the history passed every check, 1 on a violation, 3
// when a key could not be decided within -key-timeout (and nothing failed),
// 2 when the history could not be read.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"registryconsul/history/checker/check"
)

func main() {
	history := flag.String("history", "", "directory of the history's *.jsonl files (one per process)")
	out := flag.String("out", "", "directory for the visualizations and report.txt on a violation "+
		"(created if missing; default: the history directory)")
	timeout := flag.Duration("key-timeout", 5*time.Minute,
		"longest search for one key; a key not decided by then makes the check undecided")
	flag.Parse()
	if *history == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: checker -history DIR [-out DIR] [-key-timeout 5m]")
		os.Exit(2)
	}
	os.Exit(run(*history, *out, *timeout))
}

func run(history, out string, timeout time.Duration) int {
	if out == "" {
		out = history
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "checker:", err)
		return 2
	}
	report, err := check.CheckDir(history, check.Options{OutDir: out, KeyTimeout: timeout})
	if err != nil {
		fmt.Fprintln(os.Stderr, "checker:", err)
		return 2
	}
	fmt.Print(report.String())
	switch {
	case len(report.Violations) > 0:
		return 1
	case !report.OK():
		return 3
	}
	return 0
}
