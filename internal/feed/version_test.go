package feed

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// TestVersionReadsSeeEveryEarlierWrite: whatever the interleaving, a get
// returns a version read after it began, so never one older than the last
// write made before it was asked.
func TestVersionReadsSeeEveryEarlierWrite(t *testing.T) {
	var version, reads atomic.Int64
	c := &versionReads{read: func(context.Context) (string, error) {
		reads.Add(1)
		return strconv.FormatInt(version.Load(), 10), nil
	}}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				version.Add(1)
			}
		}
	})
	var gets sync.WaitGroup
	for range 50 {
		gets.Go(func() {
			for range 200 {
				before := version.Load()
				got, err := c.get(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				if n, _ := strconv.ParseInt(got, 10, 64); n < before {
					t.Errorf("got version %d, asked after %d was written", n, before)
					return
				}
			}
		})
	}
	gets.Wait()
	close(stop)
	wg.Wait()
	t.Logf("%d reads for %d gets", reads.Load(), 50*200)
}
