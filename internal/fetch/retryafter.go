package fetch

import (
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxRetryAfterSeconds is the longest delay-seconds a time.Duration holds.
const maxRetryAfterSeconds = uint64(math.MaxInt64 / int64(time.Second))

// RetryAfter reads a Retry-After header value: delay-seconds or an HTTP
// date (RFC 9110 §10.2.3). A date in the past is a wait of zero; ok is false
// when the value is absent or unreadable.
func RetryAfter(v string, now time.Time) (wait time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	// delay-seconds is 1*DIGIT. A value past what a Duration holds is the
	// longest wait, not an overflow into a negative one (which would retry
	// at once and pass every cap) nor an unreadable value.
	if n, err := strconv.ParseUint(v, 10, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		return time.Duration(min(n, maxRetryAfterSeconds)) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}
