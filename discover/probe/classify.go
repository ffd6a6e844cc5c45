package probe

import (
	"context"
	"errors"
	"log/slog"

	"github.com/cardcrawl/cardcrawl/internal/failure"
)

const (
	classInvalid = string(failure.InvalidURL)
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
		return string(failure.Canceled)
	}
	return errClass(err)
}

// classifyBodyErr names a failure while reading a body that had started.
func (p *Prober) classifyBodyErr(ctx context.Context, err error) string {
	if errors.Is(err, errBodySizeLimit) || errors.Is(err, errTooManyEvents) {
		return string(failure.TooLarge)
	}
	return p.classifyErr(ctx, err)
}

// outcomeOf maps a failure class to a probe outcome by the failure table.
// Every class the probe produces is a constant of that table, whose tests
// require a probe outcome for each, and TestOutcomeOfEveryClass walks them
// and the probe's own class names; so an unmapped class is a test failure.
// Should one still reach a probe at run time, the probe ends as not_mcp
// with that class named in its reason (describeErr), rather than stopping.
func outcomeOf(class string) string {
	if o, ok := failure.Class(class).ProbeOutcome(); ok {
		return string(o)
	}
	return OutcomeNotMCP
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
