package probe

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
)

// errTooManyEvents and errBodySizeLimit end a stream that goes on too long;
// callers classify both as too_large.
var (
	errTooManyEvents = errors.New("too many events")
	errBodySizeLimit = errors.New("body size limit exceeded")
)

// sseEvent is one dispatched server-sent event.
type sseEvent struct {
	Event string // "" means the default type, message
	Data  string
	ID    string
}

// sseLimits bound one stream.
type sseLimits struct {
	MaxBytes  int64
	MaxEvents int
}

// readSSE parses an event stream (WHATWG rules: CR, LF or CRLF line endings,
// comment lines, joined data lines) and calls fn for each dispatched event
// until fn returns false, the stream ends, or a limit is hit. It returns nil
// when fn stopped it, io.EOF when the stream ended first.
func readSSE(r io.Reader, lim sseLimits, fn func(sseEvent) bool) error {
	lr := &limitedReader{r: r, n: lim.MaxBytes}
	sc := bufio.NewScanner(lr)
	sc.Buffer(make([]byte, 0, 4096), sseMaxLine(lim))
	sc.Split(scanSSELines)

	var (
		ev      sseEvent
		data    strings.Builder
		hasData bool
		events  int
	)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			if !hasData && ev.Event == "" && ev.ID == "" {
				continue
			}
			ev.Data = data.String()
			events++
			if !fn(ev) {
				return nil
			}
			if lim.MaxEvents > 0 && events >= lim.MaxEvents {
				return fmt.Errorf("sse: %w (%d)", errTooManyEvents, events)
			}
			ev, hasData = sseEvent{}, false
			data.Reset()
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			value = bytes.TrimPrefix(value, []byte(" "))
		}
		switch string(field) {
		case "event":
			ev.Event = string(value)
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			data.Write(value)
			hasData = true
		case "id":
			ev.ID = string(value)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("sse: %w", errBodySizeLimit)
		}
		return fmt.Errorf("sse: %w", err)
	}
	if lr.hit {
		return fmt.Errorf("sse: %w", errBodySizeLimit)
	}
	return io.EOF
}

// sseMaxLine is the scanner's largest token: one byte more than the
// stream's own cap, so one endless line cannot make the buffer outgrow it,
// yet a last unterminated line of exactly MaxBytes (a stream within its
// cap) is read to the end rather than reported as too large: the scanner
// gives up on a full buffer before it sees that the stream has ended.
func sseMaxLine(lim sseLimits) int {
	if lim.MaxBytes <= 0 {
		return DefaultMaxBodyBytes
	}
	return int(lim.MaxBytes) + 1
}

// scanSSELines splits on CRLF, LF or a lone CR; a CR at the end of the
// buffer waits for one more byte so that CRLF is not read as two endings.
func scanSSELines(data []byte, atEOF bool) (int, []byte, error) {
	for i, b := range data {
		switch b {
		case '\n':
			return i + 1, data[:i], nil
		case '\r':
			if i+1 < len(data) {
				if data[i+1] == '\n' {
					return i + 2, data[:i], nil
				}
				return i + 1, data[:i], nil
			}
			if atEOF {
				return i + 1, data[:i], nil
			}
			return 0, nil, nil
		}
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}

// limitedReader is io.LimitReader that remembers whether the limit, rather
// than the stream, ended the read.
type limitedReader struct {
	r   io.Reader
	n   int64
	hit bool
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		// Probe one byte so that a body of exactly n bytes is not an error.
		var one [1]byte
		k, err := l.r.Read(one[:])
		if k > 0 {
			l.hit = true
			return 0, errBodySizeLimit
		}
		return 0, err
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	k, err := l.r.Read(p)
	l.n -= int64(k)
	return k, err
}

// readCapped reads a whole body up to max bytes.
func readCapped(r io.Reader, max int64) ([]byte, error) {
	lr := &limitedReader{r: r, n: max}
	b, err := io.ReadAll(lr)
	if err != nil {
		return b, err
	}
	return b, nil
}
