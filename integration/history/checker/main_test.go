// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// history writes one process's lines into a new history directory.
func history(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const writer = `{"process":"w","op":"put","key":"/k","value":"1","call":0,"return":10,"outcome":"ok"}
{"process":"w","op":"put","key":"/k","value":"2","call":20,"return":30,"outcome":"ok"}
`

func TestALegalHistoryExitsZero(t *testing.T) {
	dir := history(t, map[string]string{"w.jsonl": writer, "r.jsonl": `{"process":"r","op":"get",` +
		`"key":"/k","found":true,"value":"2","call":40,"return":50,"outcome":"ok"}` + "\n" +
		`{"process":"r","op":"get","key":"/k","found":true,"val`}) // a killed process's torn line
	if code := run(dir, "", time.Minute); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

func TestAViolationExitsOneAndWritesTheVisualization(t *testing.T) {
	dir := history(t, map[string]string{"w.jsonl": writer, "r.jsonl": `{"process":"r","op":"get",` +
		`"key":"/k","found":true,"value":"1","call":40,"return":50,"outcome":"ok"}` + "\n"})
	out := filepath.Join(t.TempDir(), "out")
	if code := run(dir, out, time.Minute); code != 1 {
		t.Fatalf("exit %d", code)
	}
	html, err := os.ReadFile(filepath.Join(out, "00-key_k.html"))
	if err != nil || !strings.Contains(string(html), "<html") {
		t.Fatalf("no visualization: %v", err)
	}
	report, err := os.ReadFile(filepath.Join(out, "report.txt"))
	if err != nil || !strings.Contains(string(report), "smallest failing key history: /k") {
		t.Fatalf("report.txt: %v\n%s", err, report)
	}
}

func TestAMalformedHistoryExitsTwo(t *testing.T) {
	dir := history(t, map[string]string{"w.jsonl": `{"process":"w","op":"put","key":"/k",` +
		`"call":0,"return":10,"outcome":"ok"}` + "\n"}) // a put without its value
	if code := run(dir, "", time.Minute); code != 2 {
		t.Fatalf("exit %d", code)
	}
	if code := run(t.TempDir(), "", time.Minute); code != 2 {
		t.Fatalf("an empty directory: exit %d", code)
	}
}
