package fetch

import (
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"120", 2 * time.Minute, true},
		{" 0 ", 0, true},
		{"Sun, 29 Nov 2026 12:05:00 GMT", 5 * time.Minute, true},
		{"Sun, 29 Nov 2026 11:00:00 GMT", 0, true}, // in the past: no wait
		{"", 0, false},
		{"-5", 0, false},
		{"soon", 0, false},
	}
	for _, tt := range tests {
		got, ok := RetryAfter(tt.in, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("RetryAfter(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
