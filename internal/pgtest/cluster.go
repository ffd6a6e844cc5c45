package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// The programs a cluster needs, all from one installation.
var programs = []string{"initdb", "pg_ctl", "postgres"}

// dirPrefix names the temporary directories, so that a later run can find
// the ones a killed test binary left behind.
const dirPrefix = "cardcrawl-pgtest-"

// readyTimeout bounds how long a started server may take to accept
// connections (pg_ctl's default, and its -t).
const readyTimeout = 60 * time.Second

// cluster is a running throwaway PostgreSQL cluster.
type cluster struct {
	bin  string // directory of initdb, pg_ctl and postgres
	dir  string // temporary directory: data/, the socket, server.log, owner
	port int
	run  runner
}

type clusterOptions struct {
	// searchPath and globs override where the programs are looked for
	// (tests); empty means $PATH and /usr/lib/postgresql/*/bin.
	searchPath string
	globs      []string
}

func (c *cluster) data() string { return filepath.Join(c.dir, "data") }
func (c *cluster) log() string  { return filepath.Join(c.dir, "server.log") }

// url returns a URL for a database of this cluster, over TCP.
func (c *cluster) url(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, db)
}

// startCluster creates and starts a cluster. Its errors wrap errUnavailable
// when something the cluster needs is missing from this machine.
func startCluster(ctx context.Context, opts clusterOptions) (*cluster, error) {
	if opts.searchPath == "" && opts.globs == nil {
		opts.searchPath, opts.globs = os.Getenv("PATH"), []string{"/usr/lib/postgresql/*/bin"}
	}
	bin, err := findPrograms(opts.searchPath, opts.globs)
	if err != nil {
		return nil, err
	}
	run, err := serverUser()
	if err != nil {
		return nil, err
	}
	base := tempBase(run)
	sweepStale(base, bin, run)
	dir, err := os.MkdirTemp(base, dirPrefix)
	if err != nil {
		return nil, fmt.Errorf("%w: create a directory for the cluster: %v", errUnavailable, err)
	}
	c := &cluster{bin: bin, dir: dir, run: run}
	if err := c.create(ctx); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// Another process may take the free port between our look and the
	// server's bind; try a few.
	for attempt := 1; ; attempt++ {
		err = c.start(ctx)
		if err == nil || !errors.Is(err, errPortTaken) || attempt == 3 {
			break
		}
	}
	if err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

// create makes the directory the server user's and runs initdb in it.
func (c *cluster) create(ctx context.Context) error {
	// The owner file lets a later run tell an abandoned cluster from a live one.
	if err := os.WriteFile(filepath.Join(c.dir, "owner"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return fmt.Errorf("write owner file: %w", err)
	}
	if err := c.run.chown(c.dir); err != nil {
		return fmt.Errorf("%w: give %s to the postgres user: %v", errUnavailable, c.dir, err)
	}
	out, err := c.run.output(ctx, c.dir, filepath.Join(c.bin, "initdb"),
		"-D", c.data(), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync")
	if err != nil {
		return fmt.Errorf("%w: initdb failed: %v\n%s", errUnavailable, err, out)
	}
	return nil
}

// errPortTaken: the server could not bind the port it was given.
var errPortTaken = errors.New("port taken")

// start picks a free port, starts the server with pg_ctl and waits until it
// accepts connections.
func (c *cluster) start(ctx context.Context) error {
	port, err := freePort()
	if err != nil {
		return fmt.Errorf("%w: find a free port on 127.0.0.1: %v", errUnavailable, err)
	}
	c.port = port
	// Settings go into the configuration file, not pg_ctl -o, which passes
	// them through a shell. The last setting of a name wins, so a retry
	// appends a new port.
	conf := fmt.Sprintf("\n# pgtest\nlisten_addresses = '127.0.0.1'\nport = %d\nunix_socket_directories = %s\n"+
		"fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n", port, confQuote(c.dir))
	f, err := os.OpenFile(filepath.Join(c.data(), "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("configure the cluster: %w", err)
	}
	_, err = f.WriteString(conf)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("configure the cluster: %w", err)
	}
	os.Remove(c.log()) // so that a retry reads only its own log
	// -w waits for the server's own signal: the postmaster marks its pid
	// file "ready" once it accepts connections, and pg_ctl, whose child it
	// is, also sees at once when it died instead. Polling from here could
	// not tell a dead server from a slow one until a deadline.
	ctx, cancel := context.WithTimeout(ctx, readyTimeout+5*time.Second)
	defer cancel()
	out, err := c.run.output(ctx, c.dir, filepath.Join(c.bin, "pg_ctl"), "start", "-w",
		"-t", strconv.Itoa(int(readyTimeout/time.Second)), "-D", c.data(), "-l", c.log())
	if err != nil {
		tail := c.logTail()
		if strings.Contains(tail, "could not bind") || strings.Contains(tail, "already in use") {
			return fmt.Errorf("%w: port %d", errPortTaken, port)
		}
		return fmt.Errorf("pg_ctl start: %v\n%s%s", err, out, tail)
	}
	// And it does: one connection over TCP, as the tests will make them.
	conn, err := pgconn.Connect(ctx, c.url("postgres"))
	if err != nil {
		return fmt.Errorf("the started server refuses connections: %w%s", err, c.logTail())
	}
	return conn.Close(context.Background())
}

// logTail returns the end of the server log, to say why it did not start.
func (c *cluster) logTail() string {
	b, err := os.ReadFile(c.log())
	if err != nil || len(b) == 0 {
		return ""
	}
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return "\nserver log " + c.log() + ":\n" + string(b)
}

// stop shuts the server down without a checkpoint (nothing in it is kept) and
// removes the directory.
func (c *cluster) stop() error {
	var err error
	if _, ok := postmasterPID(c.data()); ok {
		ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
		defer cancel()
		var out []byte
		out, err = c.run.output(ctx, c.dir, filepath.Join(c.bin, "pg_ctl"), "stop", "-D", c.data(), "-m", "immediate", "-w")
		if err != nil {
			err = fmt.Errorf("stop the test cluster in %s: %v\n%s", c.dir, err, out)
		}
	}
	if rerr := os.RemoveAll(c.dir); rerr != nil && err == nil {
		err = fmt.Errorf("remove the test cluster: %w", rerr)
	}
	return err
}

// sweepStale stops and removes clusters whose test binary is gone (killed by
// a timeout or a signal before Main could clean up). Best effort: a cluster it
// cannot stop is left alone.
func sweepStale(base, bin string, run runner) {
	dirs, _ := filepath.Glob(filepath.Join(base, dirPrefix+"*"))
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, "owner"))
		if err != nil {
			continue // not ours, or still being created
		}
		owner, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || alive(owner) {
			continue
		}
		old := &cluster{bin: bin, dir: dir, run: run}
		old.stop()
	}
}

// findPrograms returns the first directory holding all of programs: on
// searchPath (a $PATH list), then the newest version matched by globs.
func findPrograms(searchPath string, globs []string) (string, error) {
	var candidates []string
	for _, d := range filepath.SplitList(searchPath) {
		if d != "" {
			candidates = append(candidates, d)
		}
	}
	var installed []string
	for _, g := range globs {
		m, _ := filepath.Glob(g)
		installed = append(installed, m...)
	}
	// Newest version first: /usr/lib/postgresql/15/bin before 9.6/bin.
	slices.SortStableFunc(installed, func(a, b string) int { return compareVersions(versionOf(b), versionOf(a)) })
	candidates = append(candidates, installed...)
	for _, d := range candidates {
		if slices.IndexFunc(programs, func(p string) bool { return !executable(filepath.Join(d, p)) }) < 0 {
			return d, nil
		}
	}
	where := "PATH"
	if len(globs) > 0 {
		where += " or " + strings.Join(globs, ", ")
	}
	return "", fmt.Errorf("%w: %s not found together in %s", errUnavailable, strings.Join(programs, ", "), where)
}

// versionOf returns the numbers of a path's version directory
// (/usr/lib/postgresql/15/bin → [15]).
func versionOf(binDir string) []int {
	var v []int
	for _, part := range strings.Split(filepath.Base(filepath.Dir(binDir)), ".") {
		n, err := strconv.Atoi(part)
		if err != nil {
			return nil
		}
		v = append(v, n)
	}
	return v
}

func compareVersions(a, b []int) int { return slices.Compare(a, b) }

func executable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// tempBase is where the cluster's directory goes: the temporary directory,
// unless the server runs as another user, who may not be able to reach it, or
// its path is too long for a Unix socket inside it (108 bytes with the
// socket's own name).
func tempBase(run runner) string {
	base := os.TempDir()
	if run.cred != nil || len(base)+len("/"+dirPrefix+"0123456789/.s.PGSQL.65535") >= 108 {
		return "/tmp"
	}
	return base
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// confQuote quotes a string for postgresql.conf.
func confQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// postmasterPID reads the server's pid from its lock file.
func postmasterPID(data string) (int, bool) {
	b, err := os.ReadFile(filepath.Join(data, "postmaster.pid"))
	if err != nil {
		return 0, false
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	pid, err := strconv.Atoi(strings.TrimSpace(string(line)))
	return pid, err == nil && pid > 0
}

// alive reports whether a process exists (EPERM: it does, as another user).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// runner runs the server's programs as the user the server may run as.
type runner struct {
	cred *syscall.Credential // nil: as this process's user
}

// serverUser: PostgreSQL refuses to run as root, so root runs it as the
// postgres system user that Debian's packages create.
func serverUser() (runner, error) {
	if os.Geteuid() != 0 {
		return runner{}, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return runner{}, fmt.Errorf("%w: running as root, and PostgreSQL will not; no postgres system user to run it as (%v)", errUnavailable, err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return runner{}, fmt.Errorf("%w: postgres user ids: %v", errUnavailable, err)
	}
	return runner{cred: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}, nil
}

func (r runner) chown(path string) error {
	if r.cred == nil {
		return nil
	}
	return os.Chown(path, int(r.cred.Uid), int(r.cred.Gid))
}

// output runs a program in dir (one the server user can enter) and returns
// its combined output.
func (r runner) output(ctx context.Context, dir, prog string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if r.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: r.cred}
	}
	return cmd.CombinedOutput()
}
