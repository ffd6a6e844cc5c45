package store

// readAhead hands use the pages next reads, in order, reading each next
// page in a goroutine of its own while use works on the one before: a walk
// spends about a fifth of its time in use (building and writing records),
// which the read of the next page now overlaps on a second core. Two
// pages take turns, so memory holds two pages; next and use never touch
// the same one, and next never runs after readAhead returns (the walk's
// transaction ends then). done from next says the page is the last. A
// panic in next panics again in readAhead's caller, as it did before next
// had a goroutine of its own (serve's HTTP server recovers it there; a
// goroutine's own panic would end the process).
func readAhead[T any](next func(page []T) ([]T, bool, error), use func([]T) error) error {
	return readAheadThrough(next, nil, use)
}

// readAheadThrough is readAhead with a stage between next and use:
// attach, when not nil, works on each page next has read, in order, in a
// goroutine of its own, and use has the page after it. A walk that reads
// its records on one connection and their facts on another (a split read)
// runs the two queries' work on two cores; three pages take turns. attach
// never runs after readAheadThrough returns either, and its panic reaches
// the caller as next's does.
func readAheadThrough[T any](next func(page []T) ([]T, bool, error), attach func([]T) error, use func([]T) error) error {
	type read struct {
		page     []T
		done     bool
		err      error
		panicked any
	}
	pages := 2
	if attach != nil {
		pages = 3
	}
	free := make(chan []T, pages)
	for range pages {
		free <- nil
	}
	stop := make(chan struct{})
	stages := make(chan struct{}, 2)
	// send passes r on unless the walk is over; false says it is.
	send := func(to chan<- read, r read) bool {
		select {
		case to <- r:
			return true
		case <-stop:
			return false
		}
	}
	// recovered turns a stage's panic into the read that carries it.
	recovered := func(to chan<- read) {
		if p := recover(); p != nil {
			send(to, read{done: true, panicked: p})
		}
	}
	read1 := make(chan read, 1)
	go func() {
		defer func() { stages <- struct{}{} }()
		defer recovered(read1)
		for {
			var page []T
			select {
			case page = <-free:
			case <-stop:
				return
			}
			page, done, err := next(page)
			if !send(read1, read{page: page, done: done, err: err}) || done || err != nil {
				return
			}
		}
	}()
	full, running := read1, 1
	if attach != nil {
		attached := make(chan read, 1)
		full, running = attached, 2
		go func() {
			defer func() { stages <- struct{}{} }()
			defer recovered(attached)
			for {
				var r read
				select {
				case r = <-read1:
				case <-stop:
					return
				}
				if r.err == nil && r.panicked == nil {
					r.err = attach(r.page)
				}
				if !send(attached, r) || r.done || r.err != nil || r.panicked != nil {
					return
				}
			}
		}()
	}
	defer func() {
		close(stop)
		for range running {
			<-stages
		}
	}()
	for {
		r := <-full
		if r.panicked != nil {
			panic(r.panicked)
		}
		if r.err != nil {
			return r.err
		}
		if err := use(r.page); err != nil {
			return err
		}
		if r.done {
			return nil
		}
		free <- r.page
	}
}

// readAheadOn is readAheadThrough when the walk reads on two connections
// (split), and otherwise readAhead with attach done by next: a walk on one
// connection cannot run two of its queries at once.
func readAheadOn[T any](split bool, next func(page []T) ([]T, bool, error), attach func([]T) error, use func([]T) error) error {
	if split {
		return readAheadThrough(next, attach, use)
	}
	return readAhead(func(page []T) ([]T, bool, error) {
		page, done, err := next(page)
		if err == nil {
			err = attach(page)
		}
		return page, done, err
	}, use)
}
