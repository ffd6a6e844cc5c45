package feed

import (
	"context"
	"sync"
)

// versionReads coalesces the reads of the store's version that every
// request makes (for its ETag and its kept answer): requests arriving
// while a read runs share the next one. That next read starts after they
// arrived, so each still sees every write made before it asked. Fifty
// clients asking at once made fifty reads, a quarter of the server's CPU
// per kept answer.
type versionReads struct {
	read func(context.Context) (string, error)

	mu      sync.Mutex
	running bool
	next    *versionRound // the round to start when the running one ends
}

type versionRound struct {
	done    chan struct{}
	version string
	err     error
}

// get returns the store's version as read after the call began.
func (c *versionReads) get(ctx context.Context) (string, error) {
	c.mu.Lock()
	if c.next == nil {
		c.next = &versionRound{done: make(chan struct{})}
	}
	r := c.next
	if !c.running {
		c.running, c.next = true, nil
		c.mu.Unlock()
		c.run(r)
	} else {
		c.mu.Unlock()
	}
	select {
	case <-r.done:
		return r.version, r.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// run reads for r, then starts the round that gathered meanwhile, if any.
// A round's read belongs to no one request, so no one client's going away
// cancels it for the others.
func (c *versionReads) run(r *versionRound) {
	r.version, r.err = c.read(context.Background())
	close(r.done)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.next == nil {
		c.running = false
		return
	}
	next := c.next
	c.next = nil
	go c.run(next)
}
