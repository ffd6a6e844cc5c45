package probe

import (
	"context"
	"errors"
	"log/slog"

	"github.com/cardcrawl/cardcrawl/internal/fetch"
)

const (
	classInvalid = "invalid_url"
	levelDebug   = slog.LevelDebug
)

// interrupted reports a context the caller canceled, as opposed to one
// whose deadline passed (which is the server's fault: a timeout).
func interrupted(ctx context.Context) bool {
	return ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded)
}

// classifyErr names a transport failure (no response).
func (p *Prober) classifyErr(ctx context.Context, err error) string {
	if interrupted(ctx) {
		return fetch.ClassCanceled
	}
	return errClass(err)
}

// classifyBodyErr names a failure while reading a body that had started.
func (p *Prober) classifyBodyErr(ctx context.Context, err error) string {
	if errors.Is(err, errBodySizeLimit) || errors.Is(err, errTooManyEvents) {
		return fetch.ClassTooLarge
	}
	return p.classifyErr(ctx, err)
}

// outcomeOf maps a failure class to a probe outcome.
func outcomeOf(class string) string {
	switch class {
	case fetch.ClassBlockedAddress, fetch.ClassBlockedScheme, fetch.ClassPlaceholderURL, classInvalid:
		return OutcomeBlocked
	case fetch.ClassTimeout:
		return OutcomeTimeout
	case fetch.ClassCanceled:
		return OutcomeCanceled
	case fetch.ClassDNS, fetch.ClassConnect, fetch.ClassTLS:
		return OutcomeConnect
	default:
		return OutcomeNotMCP
	}
}

// attrsOf renders an exchange for the debug log.
func attrsOf(ex *Exchange) []slog.Attr {
	a := []slog.Attr{
		slog.String("step", ex.Step), slog.String("method", ex.Method), slog.String("url", ex.URL),
		slog.Int("status", ex.Status), slog.Int64("latency_ms", ex.LatencyMs),
	}
	if ex.Error != "" {
		a = append(a, slog.String("error", ex.Error), slog.String("detail", ex.Detail))
	}
	return a
}
