package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

// CrawlMode says how a process that fetches from the crawled web shares a
// database with others doing the same.
type CrawlMode int

const (
	// CrawlAlone is a crawl's (and a bulk probe's): no other process may
	// crawl the database meanwhile. Its domains are not leased and its
	// requests pass no host gate, so only being alone keeps two processes
	// from crawling one domain, or one host, at the same time.
	CrawlAlone CrawlMode = iota
	// CrawlShared is a worker's: any number of workers, which lease their
	// domains and take each host through the shared gate, and no crawl.
	CrawlShared
)

// ErrCrawlBusy is what LockCrawl returns, wrapped in a *CrawlBusyError,
// when another process holds the database.
var ErrCrawlBusy = errors.New("another cardcrawl process is crawling this database")

// CrawlBusyError says who holds the database, as far as it can be told.
type CrawlBusyError struct {
	// Holder describes the crawl that holds it ("crawl, pid 123 on host
	// h since T"); empty when workers do (they do not say).
	Holder string
}

func (e *CrawlBusyError) Error() string {
	if e.Holder == "" {
		return ErrCrawlBusy.Error() + " (workers: see 'cardcrawl status')"
	}
	return ErrCrawlBusy.Error() + " (" + e.Holder + ")"
}

func (e *CrawlBusyError) Unwrap() error { return ErrCrawlBusy }

// ErrCrawlLockLost is what CrawlLock.Check returns when the lock went with
// its PostgreSQL session and another process took the database meanwhile.
var ErrCrawlLockLost = errors.New("lost the database's crawl lock with its PostgreSQL session, and another process took it")

// CrawlLock is a held LockCrawl; Release gives it back. A process that
// dies holding it loses it with its file descriptor (SQLite) or its
// connection (PostgreSQL): no lease to wait out.
type CrawlLock struct {
	mu      sync.Mutex
	release func()
	check   func(ctx context.Context) error
}

// Release gives the lock back; a second call does nothing.
func (l *CrawlLock) Release() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.release != nil {
		l.release()
		l.release, l.check = nil, nil
	}
}

// Check says whether the lock is still held. A file lock lasts as long as
// its file is open; a PostgreSQL one as long as its session, which a
// network fault or pg_terminate_backend can end while the crawl goes on.
// Check then takes the lock again on a new session, and returns an error
// wrapping ErrCrawlLockLost when another process took it first: the
// caller must stop fetching. A process holding the lock checks it every
// few seconds (a crawl that went on beside another would fetch from the
// same hosts at once).
func (l *CrawlLock) Check(ctx context.Context) error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.check == nil {
		return nil
	}
	return l.check(ctx)
}

// LockCrawl takes the database for crawling in mode without waiting, or
// returns a *CrawlBusyError. holder says who takes it, for the message
// another process gets (CrawlAlone only: shared holders are many).
//
// On SQLite it is an advisory lock (flock) on a file beside the database,
// PATH.lock, which stays there; on PostgreSQL a session advisory lock on a
// connection of its own, in the shared or exclusive form, with holder as
// that session's application_name so pg_stat_activity shows it too.
func (db *DB) LockCrawl(ctx context.Context, mode CrawlMode, holder string) (*CrawlLock, error) {
	if db.readOnly {
		return nil, errors.New("lock for crawling: the database is open read-only")
	}
	if db.dialect.shared {
		return db.lockCrawlPostgres(ctx, mode, holder)
	}
	return db.lockCrawlFile(mode, holder)
}

// crawlLockPath is the SQLite database's lock file.
func crawlLockPath(dbPath string) string { return dbPath + ".lock" }

func (db *DB) lockCrawlFile(mode CrawlMode, holder string) (*CrawlLock, error) {
	path := crawlLockPath(db.name)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock for crawling: %w", err)
	}
	ok, err := flockTry(f, mode == CrawlShared)
	if err != nil {
		// A file system without locks (some network mounts) must not stop
		// the crawl; it only loses the check.
		db.log.Warn("cannot lock the database for crawling; nothing stops a second crawl on it", "file", path, "err", err)
		f.Close()
		return &CrawlLock{}, nil
	}
	if !ok {
		b := make([]byte, 512)
		n, _ := f.ReadAt(b, 0)
		f.Close()
		return nil, &CrawlBusyError{Holder: strings.TrimSpace(string(b[:n]))}
	}
	// What a crawl that died left here is not true any more; the file
	// names the current exclusive holder or nobody.
	_ = f.Truncate(0)
	if mode == CrawlAlone && holder != "" {
		_, _ = f.WriteAt([]byte(holder+"\n"), 0)
	}
	return &CrawlLock{release: func() {
		if mode == CrawlAlone {
			_ = f.Truncate(0)
		}
		f.Close() // drops the flock
	}}, nil
}

// crawlLockClass and crawlLockObject are the lock's key in the two-key
// form of PostgreSQL's advisory locks (so it cannot meet TryLead's one-key
// locks), and what pg_locks shows as classid and objid.
const crawlLockClass, crawlLockObject = 0x63617264, 0x6372776c // "card", "crwl"

func (db *DB) lockCrawlPostgres(ctx context.Context, mode CrawlMode, holder string) (*CrawlLock, error) {
	conn, err := db.takeCrawlPostgres(ctx, mode, holder)
	if err != nil {
		return nil, err
	}
	unlock := "pg_advisory_unlock"
	if mode == CrawlShared {
		unlock = "pg_advisory_unlock_shared"
	}
	return &CrawlLock{
		release: func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, _ = conn.ExecContext(ctx, `SELECT `+unlock+`(?, ?)`, crawlLockClass, crawlLockObject)
			if mode == CrawlAlone && holder != "" {
				_, _ = conn.ExecContext(ctx, `RESET application_name`) // the connection goes back to the pool
			}
			conn.Close()
		},
		check: func(ctx context.Context) error {
			if conn.PingContext(ctx) == nil {
				return nil
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			// The session, and the lock with it, is gone: the pool drops
			// the bad connection, and a new one asks again.
			conn.Close()
			again, err := db.takeCrawlPostgres(ctx, mode, holder)
			if be := (*CrawlBusyError)(nil); errors.As(err, &be) {
				// Not ErrCrawlBusy: this process did crawl, and stops.
				if be.Holder == "" {
					return fmt.Errorf("%w (workers)", ErrCrawlLockLost)
				}
				return fmt.Errorf("%w (%s)", ErrCrawlLockLost, be.Holder)
			}
			if err != nil {
				return err // not known lost: the next check asks again
			}
			db.log.Warn("the crawl lock's PostgreSQL session ended; took the lock again on a new one")
			conn = again
			return nil
		},
	}, nil
}

// takeCrawlPostgres takes the crawl lock in mode on a connection of its
// own, which it returns, or says who holds it (*CrawlBusyError).
func (db *DB) takeCrawlPostgres(ctx context.Context, mode CrawlMode, holder string) (*sql.Conn, error) {
	conn, err := db.sql.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("lock for crawling: %w", err)
	}
	fn := "pg_try_advisory_lock"
	if mode == CrawlShared {
		fn = "pg_try_advisory_lock_shared"
	}
	var ok bool
	if err := conn.QueryRowContext(ctx, `SELECT `+fn+`(?, ?)`, crawlLockClass, crawlLockObject).Scan(&ok); err != nil {
		conn.Close()
		return nil, fmt.Errorf("lock for crawling: %w", err)
	}
	if !ok {
		_, name, _ := crawlHolderPostgres(ctx, conn)
		conn.Close()
		return nil, &CrawlBusyError{Holder: name}
	}
	if mode == CrawlAlone && holder != "" {
		// application_name is at most 63 bytes; PostgreSQL cuts the rest.
		_, _ = conn.ExecContext(ctx, `SET application_name = '`+strings.ReplaceAll(holder, "'", "''")+`'`)
	}
	return conn, nil
}

// crawlHolderPostgres says whether a crawl holds the lock alone, and the
// application_name of its session: readable when the holder's role is ours
// or we may read every session's statistics; otherwise empty.
func crawlHolderPostgres(ctx context.Context, q querier) (held bool, holder string, err error) {
	err = q.QueryRowContext(ctx, `SELECT count(*) > 0, coalesce(string_agg(DISTINCT a.application_name, ', '), '')
		FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.granted AND l.classid = ? AND l.objid = ? AND l.objsubid = 2
		  AND l.mode = 'ExclusiveLock'`, crawlLockClass, crawlLockObject).Scan(&held, &holder)
	return held, holder, err
}

// CrawlNow is what `status` says of the crawl lock: whether a crawl (or a
// bulk probe, or the namespaces' checks) holds the database alone, and how
// it described itself.
type CrawlNow struct {
	Running bool   `json:"running"`
	Holder  string `json:"holder,omitempty"`
}

// crawlNow looks at the crawl lock without taking it for longer than the
// look (a read-only handle can: it only asks for a shared lock).
func (db *DB) crawlNow(ctx context.Context) (CrawlNow, error) {
	if db.dialect.shared {
		held, holder, err := crawlHolderPostgres(ctx, db.sql)
		return CrawlNow{Running: held, Holder: holder}, err
	}
	// status reads files the user may not write: a lock file that is not
	// there (never crawled by a build that locks) or cannot be opened, or
	// a file system without locks, says no crawl rather than failing it.
	// The look holds a shared lock for a moment, in which a crawl starting
	// would be refused as if workers held the database (--wait rides it).
	f, err := os.Open(crawlLockPath(db.name))
	if err != nil {
		return CrawlNow{}, nil
	}
	defer f.Close()
	free, err := flockTry(f, true)
	if err != nil || free {
		return CrawlNow{}, nil
	}
	b := make([]byte, 512)
	n, _ := f.ReadAt(b, 0)
	return CrawlNow{Running: true, Holder: strings.TrimSpace(string(b[:n]))}, nil
}
