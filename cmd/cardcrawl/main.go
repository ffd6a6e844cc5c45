// Command cardcrawl finds remote MCP servers the way the web publishes them
// (AI Catalogs and MCP Server Cards), keeps what it finds in SQLite, compares
// it with the MCP Registry, probes endpoints when a card warrants it, and
// exports a feed. Run `cardcrawl help` for the commands.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"github.com/cardcrawl/cardcrawl/internal/termsafe"
	"github.com/cardcrawl/cardcrawl/store"
)

// Exit codes, stable for scripts.
const (
	exitOK    = 0 // done, even if many domains failed: failures are data
	exitRun   = 1 // the run itself failed
	exitUsage = 2 // bad flags, arguments or input files
	exitBusy  = 3 // another process is crawling the database; nothing was done
	// exitInterrupted is the shell's convention for SIGINT (128+2): the run
	// stopped cleanly on Ctrl-C and the same command continues it.
	exitInterrupted = 130
)

// errInterrupted ends a run stopped by Ctrl-C, after it said what was left.
var errInterrupted = errors.New("interrupted")

// reported is a run failure the command has already explained on its own
// output; it exits 1 without saying it again.
type reported struct{ err error }

func (r reported) Error() string { return r.err.Error() }
func (r reported) Unwrap() error { return r.err }

// version is set at build time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

// command is one subcommand. run gets the arguments after the command name.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *env, args []string) error
}

// env is what commands share: where to print, and the process environment.
type env struct {
	stdout, stderr io.Writer
	stdin          io.Reader
	// stderrTTY says progress may be drawn on stderr.
	stderrTTY bool
}

// commands is filled by init functions in each command's file, so adding a
// command touches one file.
var commands = map[string]*command{}

func register(c *command) { commands[c.name] = c }

// usageError marks errors that are the user's to fix; they exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	e := &env{stdout: os.Stdout, stderr: os.Stderr, stdin: os.Stdin, stderrTTY: isTerminal(os.Stderr)}
	os.Exit(runMain(ctx, e, os.Args[1:]))
}

// runMain dispatches and maps errors to exit codes; tests call it directly.
func runMain(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 {
		printUsage(e.stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				return exitCode(e, c.run(ctx, e, []string{"--help"}))
			}
		}
		printUsage(e.stdout)
		return exitOK
	case "version", "--version":
		fmt.Fprintln(e.stdout, "cardcrawl", version)
		return exitOK
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(e.stderr, "cardcrawl: unknown command %q (run 'cardcrawl help')\n", name)
		return exitUsage
	}
	return exitCode(e, c.run(ctx, e, args[1:]))
}

func exitCode(e *env, err error) int {
	if err == nil || errors.Is(err, errHelp) {
		return exitOK
	}
	if errors.Is(err, errInterrupted) {
		return exitInterrupted
	}
	if errors.As(err, new(reported)) {
		return exitRun
	}
	if errors.Is(err, store.ErrCrawlBusy) {
		fmt.Fprintln(e.stderr, "cardcrawl:", termsafe.String(err.Error()))
		return exitBusy
	}
	// Error text can quote outside strings (a name, a server's message).
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintln(e.stderr, "cardcrawl:", termsafe.String(ue.msg))
		return exitUsage
	}
	fmt.Fprintln(e.stderr, "cardcrawl:", termsafe.String(err.Error()))
	return exitRun
}

func printUsage(w io.Writer) {
	fmt.Fprintf(w, `cardcrawl finds remote MCP servers through AI Catalogs and MCP Server Cards.

Usage: cardcrawl <command> [flags] [arguments]

Commands:
`)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, commands[n].summary)
	}
	fmt.Fprintf(w, "  %-12s %s\n", "version", "print the version")
	fmt.Fprintf(w, `
Run 'cardcrawl <command> --help' for a command's flags.
Exit codes: 0 done (failed domains are data, not errors), 1 the run failed, 2 usage,
3 another cardcrawl process is crawling the database (crawls take turns),
130 interrupted (run the same command again to continue).
`)
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0 && os.Getenv("TERM") != "dumb"
}

// joinLines is for multi-line help text blocks.
func joinLines(lines ...string) string { return strings.Join(lines, "\n") }
