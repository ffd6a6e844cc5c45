package simweb

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// serveResource answers from a fixture, honouring its scripted behaviour,
// Simweb-Require-Accept and conditional requests.
func (w *Web) serveResource(rw http.ResponseWriter, r *http.Request, res *resource) {
	n := res.served.Add(1)
	switch res.behavior {
	case behaviorDrop:
		w.drop(rw)
		return
	case behaviorDropOnce, behaviorDropTwice:
		limit := int64(1)
		if res.behavior == behaviorDropTwice {
			limit = 2
		}
		if n <= limit {
			w.drop(rw)
			return
		}
	case behaviorHang:
		w.block(r)
		// Returning normally would send an empty 200 when the Web closes
		// first; a hang never answers, so drop the connection instead.
		panic(http.ErrAbortHandler)
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		rw.Header().Set("Allow", "GET, HEAD")
		http.Error(rw, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if res.requireAccept != "" && !acceptLists(r.Header.Get("Accept"), res.requireAccept) {
		http.Error(rw, "not acceptable: ask for "+res.requireAccept, http.StatusNotAcceptable)
		return
	}
	h := rw.Header()
	for k, vs := range res.header {
		h[k] = append([]string(nil), vs...)
	}
	if res.status == http.StatusOK && notModified(r, res) {
		h.Del("Content-Type")
		h.Del("Content-Length")
		rw.WriteHeader(http.StatusNotModified)
		return
	}
	body := res.body
	if len(body) < res.pad {
		body = append(append(make([]byte, 0, res.pad), body...), bytes.Repeat([]byte(" "), res.pad-len(body))...)
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if res.behavior == behaviorStall {
		// Promise the whole body, deliver half, then go quiet: the client
		// has headers and must rely on its own timeout.
		rw.WriteHeader(res.status)
		if r.Method != http.MethodHead {
			_, _ = rw.Write(body[:len(body)/2])
		}
		if f, ok := rw.(http.Flusher); ok {
			f.Flush()
		}
		w.block(r)
		return
	}
	rw.WriteHeader(res.status)
	if r.Method != http.MethodHead {
		_, _ = rw.Write(body)
	}
}

// notModified applies If-None-Match (preferred, as RFC 9110 says) and then
// If-Modified-Since.
func notModified(r *http.Request, res *resource) bool {
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		if res.etag == "" {
			return false
		}
		for tag := range strings.SplitSeq(inm, ",") {
			tag = strings.TrimSpace(tag)
			if tag == "*" || weakTag(tag) == weakTag(res.etag) {
				return true
			}
		}
		return false
	}
	if ims := r.Header.Get("If-Modified-Since"); ims != "" && !res.lastModified.IsZero() {
		t, err := http.ParseTime(ims)
		return err == nil && !res.lastModified.Truncate(time.Second).After(t)
	}
	return false
}

// weakTag strips the weak prefix: If-None-Match uses weak comparison.
func weakTag(t string) string {
	return strings.TrimPrefix(t, "W/")
}

// drop closes the connection without writing a response.
func (w *Web) drop(rw http.ResponseWriter) {
	hj, ok := rw.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}

// block waits until the client goes away or the Web is closed.
func (w *Web) block(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-w.closed:
	}
}
