package probe

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// FuzzReadSSE checks the event-stream reader on any bytes and limits: the
// events and the error do not depend on how the body arrives in reads (a
// CR at a read boundary must not become two line endings), the caps hold,
// a stream within its caps ends in io.EOF, and no field carries a line
// ending.
func FuzzReadSSE(f *testing.F) {
	for _, s := range []string{
		// What real servers send: go-sdk's priming event then a message,
		// mcp-go's endpoint event with CRLF after LF.
		"event: prime\nid: a_0\ndata: \n\nevent: message\nid: a_1\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n",
		"event: endpoint\ndata: /message?sessionId=1\r\n\r\n",
		": ping\n\nretry: 1000\ndata: a\ndata: b\n\n",
		// Hostile: lone CRs, CR at the end, fields without colons, a BOM,
		// NULs, an endless line, events without data.
		"data: a\rdata: b\r\r", "data:x\r", "data\n\nevent\n\nid\n\n", "\xef\xbb\xbfdata: x\n\n",
		"id: \x00\ndata: \x00\n\n", strings.Repeat("x", 5000), "event: e\n\nid: i\n\n:\n\n",
		strings.Repeat("data: x\n\n", 300),
	} {
		f.Add([]byte(s), uint16(1024), uint8(0))
	}
	f.Add([]byte("data: x\n\ndata: y\n\n"), uint16(8), uint8(1))
	f.Add([]byte("data: 0123456789\n\n"), uint16(17), uint8(0))
	// A last unterminated line exactly as long as the cap: within the cap,
	// yet it was once reported as too large.
	f.Add(bytes.Repeat([]byte("x"), 4096), uint16(4095), uint8(0))
	f.Fuzz(func(t *testing.T, body []byte, maxBytes uint16, maxEvents uint8) {
		lim := sseLimits{MaxBytes: int64(maxBytes%8192) + 1, MaxEvents: int(maxEvents % 16)}
		read := func(r io.Reader) ([]sseEvent, error) {
			var evs []sseEvent
			err := readSSE(r, lim, func(ev sseEvent) bool { evs = append(evs, ev); return true })
			return evs, err
		}
		evs, err := read(bytes.NewReader(body))
		switch {
		case err == nil:
			t.Fatal("nil error though the callback never stopped the stream")
		case errors.Is(err, errTooManyEvents):
			if lim.MaxEvents == 0 || len(evs) != lim.MaxEvents {
				t.Fatalf("too many events after %d, cap %d", len(evs), lim.MaxEvents)
			}
		case errors.Is(err, errBodySizeLimit):
			if int64(len(body)) <= lim.MaxBytes {
				t.Fatalf("size limit on %d bytes, cap %d", len(body), lim.MaxBytes)
			}
		case err != io.EOF:
			t.Fatalf("unexpected error %v", err)
		case int64(len(body)) > lim.MaxBytes:
			t.Fatalf("io.EOF on %d bytes, cap %d", len(body), lim.MaxBytes)
		}
		if lim.MaxEvents > 0 && len(evs) > lim.MaxEvents {
			t.Fatalf("%d events, cap %d", len(evs), lim.MaxEvents)
		}
		total := 0
		for _, ev := range evs {
			total += len(ev.Data) + len(ev.Event) + len(ev.ID)
			if strings.ContainsAny(ev.Data, "\r") || strings.ContainsAny(ev.Event+ev.ID, "\r\n") {
				t.Fatalf("line ending inside a field: %+v", ev)
			}
		}
		if int64(total) > lim.MaxBytes {
			t.Fatalf("events hold %d bytes, cap %d", total, lim.MaxBytes)
		}
		for name, r := range map[string]io.Reader{
			"one byte": iotest.OneByteReader(bytes.NewReader(body)),
			"half":     iotest.HalfReader(bytes.NewReader(body)),
		} {
			evs2, err2 := read(r)
			if diff := cmp.Diff(evs, evs2); diff != "" {
				t.Fatalf("%s reads give other events (-whole +%s):\n%s", name, name, diff)
			}
			if !sameSSEError(err, err2) {
				t.Fatalf("%s reads end in %v, whole reads in %v", name, err2, err)
			}
		}
		// A callback that stops at the first event stops the reader there.
		if len(evs) > 0 {
			calls := 0
			if err := readSSE(bytes.NewReader(body), lim, func(sseEvent) bool { calls++; return false }); err != nil || calls != 1 {
				t.Fatalf("stopping callback: err %v after %d calls", err, calls)
			}
		}
	})
}

func sameSSEError(a, b error) bool {
	for _, e := range []error{io.EOF, errTooManyEvents, errBodySizeLimit} {
		if errors.Is(a, e) || errors.Is(b, e) {
			return errors.Is(a, e) && errors.Is(b, e)
		}
	}
	return (a == nil) == (b == nil)
}
