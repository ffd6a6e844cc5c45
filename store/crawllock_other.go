//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package store

import (
	"errors"
	"os"
)

// flockTry has no lock to take here: LockCrawl warns and goes on.
func flockTry(*os.File, bool) (bool, error) {
	return false, errors.New("file locks are not supported on this system")
}
