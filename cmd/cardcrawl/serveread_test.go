package main

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestServeClosesAConnectionWhoseBodyNeverEnds: a client that sends its
// headers and then trickles (here: withholds) the body it announced holds
// its connection only until the read timeout, not for as long as it likes;
// the idle timeout does not cover it, since the connection is not idle.
func TestServeClosesAConnectionWhoseBodyNeverEnds(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok\n")) })
	addr, _, _, _ := startServe(t, listen(t), h, serveOptions{ReadTimeout: 100 * time.Millisecond, IdleTimeout: time.Hour})
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A guard against a server that never closes it, not a wait.
	if err := conn.SetReadDeadline(time.Now().Add(failAfter)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\npartial"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Errorf("after the answer: %v, want the server to close the connection (EOF) at its read timeout", err)
	}
}
