package probe

import (
	"context"
	"errors"
	"net/url"

	"github.com/cardcrawl/cardcrawl/internal/fetch"
)

// checkTarget refuses URLs the probe must never touch, before any request,
// with the guard's own rules; the reason starts with a Decision reason code.
func checkTarget(raw string) string {
	err := fetch.CheckURL(raw)
	if err == nil {
		return ""
	}
	code := ReasonInvalidURL
	switch {
	case errors.Is(err, fetch.ErrPlaceholderURL):
		code = ReasonPlaceholder
	case errors.Is(err, fetch.ErrUserinfo):
		code = ReasonUserinfo
	case errors.Is(err, fetch.ErrBlockedAddress):
		code = ReasonBlockedAddress
	case errors.Is(err, fetch.ErrBlockedPort):
		code = ReasonBlockedPort
	case errors.Is(err, fetch.ErrBlockedScheme):
		if u, perr := url.Parse(raw); perr == nil && u.Scheme == "http" {
			code = ReasonPlainHTTP
		}
	}
	return code + ": " + err.Error()
}

// errClass names a transport failure with the program's one mapping.
func errClass(err error) string { return string(fetch.Class(err, 0)) }

// fetchDocs adapts the program's client to the metadata getter: anonymous,
// capped, redirects re-checked by the guard.
func fetchDocs(c *fetch.Client) docGetter {
	return func(ctx context.Context, raw string) docResult {
		r := c.Get(ctx, fetch.Request{URL: raw, Accept: "application/json", MaxBytes: metadataMaxBytes})
		return docResult{Status: r.Status, ContentType: r.ContentType, Body: r.Body, Class: r.Class, Err: r.Err}
	}
}
