package fetch

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryAfter reads a Retry-After header value: delay-seconds or an HTTP
// date (RFC 9110 §10.2.3). A date in the past is a wait of zero; ok is false
// when the value is absent or unreadable.
func RetryAfter(v string, now time.Time) (wait time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}
