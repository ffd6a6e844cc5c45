package probe

import (
	"testing"

	"github.com/cardcrawl/cardcrawl/internal/failure"
)

// Every class maps to its outcome in the failure table; the probe's own
// class names are classes of that table.
func TestOutcomeOfEveryClass(t *testing.T) {
	for _, c := range failure.Classes() {
		want, ok := c.ProbeOutcome()
		if !ok {
			t.Fatalf("class %q has no probe outcome", c)
		}
		if got := outcomeOf(string(c)); got != string(want) {
			t.Errorf("outcomeOf(%q) = %q, want %q", c, got, want)
		}
	}
	for _, c := range []string{classInvalid, classNoResponse, classNotJSONRPC, classContentType} {
		if !failure.Class(c).Known() {
			t.Errorf("the probe's class %q is not in the failure table", c)
		}
	}
	if got := outcomeOf("no_such_class"); got != OutcomeNotMCP {
		t.Errorf("outcomeOf(unknown) = %q, want the documented fallback %q", got, OutcomeNotMCP)
	}
}

// The outcomes the probe records are exactly the failure package's.
func TestOutcomesAreTheTables(t *testing.T) {
	ours := []string{OutcomeOK, OutcomeRequiresLogin, OutcomeHTTP4xx, OutcomeConnect, OutcomeHTTP5xx, OutcomeTimeout,
		OutcomeNotMCP, OutcomeRateLimited, OutcomeHandshakeRejected, OutcomeBlocked, OutcomeCanceled}
	if len(ours) != len(failure.Outcomes()) {
		t.Errorf("the probe records %d outcomes, the table has %d", len(ours), len(failure.Outcomes()))
	}
	for _, o := range ours {
		if !failure.Outcome(o).Known() {
			t.Errorf("outcome %q is not in the failure table", o)
		}
	}
}
