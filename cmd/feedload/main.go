// Command feedload measures how a running `cardcrawl serve` answers one URL
// under load, against floors measured in the same run: a static server that
// returns the same bytes from memory, in this process and in a process of
// its own (as serve is: requests then cross processes, as serve's do). It
// prints one JSON line per measurement (target, then floors): requests,
// errors, p50, p99 and max latency in milliseconds, and, given --pid, the
// serving process's peak RSS (VmHWM). Used for BENCHMARKS.md's "Export and serve".
//
//	feedload --url 'http://127.0.0.1:8080/v0.1/servers?limit=100' --clients 50 --requests 2000 --pid $PID
//
// Exit codes: 0 done, 1 the run failed, 2 usage.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

type result struct {
	Name     string  `json:"name"`
	URL      string  `json:"url"`
	Clients  int     `json:"clients"`
	Requests int     `json:"requests"`
	Errors   int64   `json:"errors"`
	Bytes    int     `json:"bytes"`
	P50      float64 `json:"p50Ms"`
	P99      float64 `json:"p99Ms"`
	Max      float64 `json:"maxMs"`
	Wall     float64 `json:"wallSeconds"`
	RSSKiB   int     `json:"peakRssKiB,omitempty"`
}

func main() {
	fs := flag.NewFlagSet("feedload", flag.ContinueOnError)
	target := fs.String("url", "", "the `URL` to load (required)")
	clients := fs.Int("clients", 1, "concurrent clients, each one request at a time")
	requests := fs.Int("requests", 500, "requests in all, per measurement")
	pid := fs.Int("pid", 0, "report this process's peak RSS (Linux)")
	floor := fs.Bool("floor", true, "also measure a static server returning the same bytes")
	static := fs.String("static-serve", "", "(internal) serve this file's bytes as the floor in its own process")
	staticType := fs.String("static-type", "", "(internal) the floor's Content-Type")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if *static != "" {
		if err := serveStatic(*static, *staticType); err != nil {
			fmt.Fprintln(os.Stderr, "feedload:", err)
			os.Exit(1)
		}
		return
	}
	if *target == "" || *clients < 1 || *requests < 1 || fs.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "feedload: --url is required; --clients and --requests must be at least 1")
		os.Exit(2)
	}
	if err := run(*target, *clients, *requests, *pid, *floor); err != nil {
		fmt.Fprintln(os.Stderr, "feedload:", err)
		os.Exit(1)
	}
}

func run(target string, clients, requests, pid int, floor bool) error {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}, Timeout: time.Minute}
	body, ctype, err := get(client, target)
	if err != nil {
		return err
	}
	r := load(client, "serve", target, clients, requests)
	r.Bytes = len(body)
	if pid > 0 {
		r.RSSKiB = peakRSS(pid)
	}
	if err := emit(r); err != nil {
		return err
	}
	if !floor {
		return nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: staticHandler(body, ctype)}
	go srv.Serve(ln)
	defer srv.Shutdown(context.Background())
	f := load(client, "static floor", "http://"+ln.Addr().String()+"/", clients, requests)
	f.Bytes = len(body)
	if err := emit(f); err != nil {
		return err
	}
	addr, stop, err := startStatic(body, ctype)
	if err != nil {
		return err
	}
	defer stop()
	f = load(client, "static floor, own process", "http://"+addr+"/", clients, requests)
	f.Bytes = len(body)
	return emit(f)
}

func staticHandler(body []byte, ctype string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", ctype)
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	})
}

// startStatic runs this program again as the floor's own process, and
// returns the address it listens on.
func startStatic(body []byte, ctype string) (string, func(), error) {
	f, err := os.CreateTemp("", "feedload-*")
	if err != nil {
		return "", nil, err
	}
	defer os.Remove(f.Name()) // the child has read it once it prints its address
	if _, err := f.Write(body); err != nil {
		f.Close()
		return "", nil, err
	}
	f.Close()
	cmd := exec.Command(os.Args[0], "--static-serve", f.Name(), "--static-type", ctype)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		stop()
		return "", nil, fmt.Errorf("static floor process: %w", err)
	}
	return strings.TrimSpace(addr), stop, nil
}

// serveStatic is the floor's own process: it prints its address, then
// serves until killed.
func serveStatic(path, ctype string) error {
	body, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Println(ln.Addr().String())
	return http.Serve(ln, staticHandler(body, ctype))
}

func get(c *http.Client, u string) ([]byte, string, error) {
	resp, err := c.Get(u)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, "", err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("%s: %s", u, resp.Status)
	}
	return b, resp.Header.Get("Content-Type"), nil
}

func load(c *http.Client, name, u string, clients, requests int) result {
	var next atomic.Int64
	var errs atomic.Int64
	lat := make([]time.Duration, requests)
	var wg sync.WaitGroup
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= requests {
					return
				}
				t := time.Now()
				resp, err := c.Get(u)
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if err == nil && resp.StatusCode != http.StatusOK {
						err = errors.New(resp.Status)
					}
				}
				lat[i] = time.Since(t)
				if err != nil {
					errs.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return result{Name: name, URL: u, Clients: clients, Requests: requests, Errors: errs.Load(),
		P50: ms(lat[len(lat)/2]), P99: ms(lat[len(lat)*99/100]), Max: ms(lat[len(lat)-1]), Wall: wall.Seconds()}
}

func emit(r result) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	if err := enc.Encode(r); err != nil {
		return err
	}
	_, err := os.Stdout.Write(buf.Bytes())
	return err
}

// peakRSS reads VmHWM from /proc; 0 where there is none.
func peakRSS(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	return 0
}
