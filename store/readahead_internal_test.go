package store

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReadAhead: use sees every page next reads, in order, up to the last
// one or the first error of either side; after readAhead returns, next
// never runs again (the walk's transaction is gone by then), and it never
// runs more than one page ahead of use.
func TestReadAhead(t *testing.T) {
	errRead, errUse := errors.New("read failed"), errors.New("use failed")
	for _, tc := range []struct {
		name      string
		pages     int // next says done on this page
		failRead  int // next fails on this page (0: never)
		failUse   int // use fails on this page (0: never)
		wantPages []int
		wantErr   error
	}{
		{"one page", 1, 0, 0, []int{1}, nil},
		{"five pages", 5, 0, 0, []int{1, 2, 3, 4, 5}, nil},
		{"next fails", 5, 3, 0, []int{1, 2}, errRead},
		{"use fails", 5, 0, 2, []int{1, 2}, errUse},
		{"use fails on the last", 3, 0, 3, []int{1, 2, 3}, errUse},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var read, used atomic.Int64
			var returned atomic.Bool
			var got []int
			err := readAhead(func(page []int) ([]int, bool, error) {
				if returned.Load() {
					t.Error("next ran after readAhead returned")
				}
				n := int(read.Add(1))
				if ahead := n - int(used.Load()); ahead > 2 {
					t.Errorf("next reads page %d while use has had %d", n, used.Load())
				}
				if n == tc.failRead {
					return nil, true, errRead
				}
				return append(page[:0], n), n == tc.pages, nil
			}, func(page []int) error {
				used.Add(1)
				got = append(got, page...)
				if page[0] == tc.failUse {
					return errUse
				}
				return nil
			})
			returned.Store(true)
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("error %v, want %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantPages, got); diff != "" {
				t.Errorf("pages used (-want +got):\n%s", diff)
			}
			if n := read.Load(); n > int64(len(tc.wantPages))+2 {
				t.Errorf("next read %d pages for %d used", n, len(tc.wantPages))
			}
		})
	}
}

// TestReadAheadPanics: a panic in next reaches readAhead's caller, where
// a recover (net/http's, for serve) can catch it, after the pages before.
func TestReadAheadPanics(t *testing.T) {
	var got []int
	p := func() (p any) {
		defer func() { p = recover() }()
		n := 0
		_ = readAhead(func(page []int) ([]int, bool, error) {
			if n++; n == 3 {
				panic("broken page")
			}
			return append(page[:0], n), false, nil
		}, func(page []int) error {
			got = append(got, page...)
			return nil
		})
		return nil
	}()
	if p != "broken page" {
		t.Errorf("recovered %v, want the reader's panic", p)
	}
	if diff := cmp.Diff([]int{1, 2}, got); diff != "" {
		t.Errorf("pages used before the panic (-want +got):\n%s", diff)
	}
}
