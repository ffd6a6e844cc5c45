package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTextOut: a cell or argument cannot add a row, a column or a line, or
// send a control sequence; the program's own formats and numbers print as
// written.
func TestTextOut(t *testing.T) {
	var buf bytes.Buffer
	out := newTextOut(&buf)
	out.printf("RUN %d (%s) %5.1f %v\n", 7, "a\x1b[2Jb", 2.5, true)
	out.table("NAME", "COUNT", "NOTE")
	out.row("plain", 1, "ok")
	out.row("tab\there", 22, "line\nbreak\r\u202eright")
	out.row([]byte("\x07bell"), errors.New("err\x1b"), "é😀")
	out.printf("%s entries; %v\n", []string{"x\ty", "\u2066z"}, errors.New("boom\n"))
	if err := out.flush(); err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		`RUN 7 (a\x1b[2Jb)   2.5 true`,
		`NAME       COUNT    NOTE`,
		`plain      1        ok`,
		`tab\there  22       line\nbreak\r\u202eright`,
		`\x07bell   err\x1b  é😀`,
		`[x\ty \u2066z] entries; boom\n`,
		``}, "\n")
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}

// TestErrorLineIsTerminalSafe: an error can quote outside text (a name, a
// server's message); the one line it gets on stderr is escaped too.
func TestErrorLineIsTerminalSafe(t *testing.T) {
	var stderr bytes.Buffer
	e := &env{stdout: &bytes.Buffer{}, stderr: &stderr}
	if code := exitCode(e, errors.New("stored findings of \x1b]0;pwned\x07x: bad")); code != exitRun {
		t.Errorf("exit %d, want %d", code, exitRun)
	}
	if code := exitCode(e, usagef("--db: \u202eevil")); code != exitUsage {
		t.Errorf("exit %d, want %d", code, exitUsage)
	}
	want := "cardcrawl: stored findings of \\x1b]0;pwned\\x07x: bad\ncardcrawl: --db: \\u202eevil\n"
	if diff := cmp.Diff(want, stderr.String()); diff != "" {
		t.Errorf("stderr (-want +got):\n%s", diff)
	}
}
