package store

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReadAhead: use sees every page next reads, in order, up to the last
// one or the first error of any stage; with attach, after attach has had
// it. After readAhead returns, next and attach never run again (the walk's
// transactions are gone by then), and next never runs more pages ahead of
// use than there are stages.
func TestReadAhead(t *testing.T) {
	errRead, errAttach, errUse := errors.New("read failed"), errors.New("attach failed"), errors.New("use failed")
	for _, tc := range []struct {
		name       string
		pages      int // next says done on this page
		failRead   int // next fails on this page (0: never)
		failAttach int // attach fails on this page (0: never)
		failUse    int // use fails on this page (0: never)
		wantPages  []int
		wantErr    error
	}{
		{"one page", 1, 0, 0, 0, []int{1}, nil},
		{"five pages", 5, 0, 0, 0, []int{1, 2, 3, 4, 5}, nil},
		{"next fails", 5, 3, 0, 0, []int{1, 2}, errRead},
		{"attach fails", 5, 0, 4, 0, []int{1, 2, 3}, errAttach},
		{"use fails", 5, 0, 0, 2, []int{1, 2}, errUse},
		{"use fails on the last", 3, 0, 0, 3, []int{1, 2, 3}, errUse},
	} {
		for _, through := range []bool{false, true} {
			if tc.failAttach != 0 && !through {
				continue
			}
			t.Run(fmt.Sprintf("%s/attach=%v", tc.name, through), func(t *testing.T) {
				var read, attached, used atomic.Int64
				var returned atomic.Bool
				var got []int
				stages := int64(1)
				next := func(page []int) ([]int, bool, error) {
					if returned.Load() {
						t.Error("next ran after readAhead returned")
					}
					n := int(read.Add(1))
					if ahead := int64(n) - used.Load(); ahead > stages+1 {
						t.Errorf("next reads page %d while use has had %d", n, used.Load())
					}
					if n == tc.failRead {
						return nil, true, errRead
					}
					return append(page[:0], n), n == tc.pages, nil
				}
				use := func(page []int) error {
					if through && attached.Load() < int64(page[0]) {
						t.Errorf("use has page %d before attach", page[0])
					}
					used.Add(1)
					got = append(got, page...)
					if page[0] == tc.failUse {
						return errUse
					}
					return nil
				}
				var err error
				if through {
					stages = 2
					err = readAheadThrough(next, func(page []int) error {
						if returned.Load() {
							t.Error("attach ran after readAhead returned")
						}
						if n := attached.Add(1); int(n) != page[0] {
							t.Errorf("attach has page %d as its %dth", page[0], n)
						}
						if page[0] == tc.failAttach {
							return errAttach
						}
						return nil
					}, use)
				} else {
					err = readAhead(next, use)
				}
				returned.Store(true)
				if !errors.Is(err, tc.wantErr) {
					t.Errorf("error %v, want %v", err, tc.wantErr)
				}
				if diff := cmp.Diff(tc.wantPages, got); diff != "" {
					t.Errorf("pages used (-want +got):\n%s", diff)
				}
				if n := read.Load(); n > int64(len(tc.wantPages))+stages+1 {
					t.Errorf("next read %d pages for %d used", n, len(tc.wantPages))
				}
			})
		}
	}
}

// TestReadAheadPanics: a panic in next or attach reaches readAhead's
// caller, where a recover (net/http's, for serve) can catch it, after the
// pages before.
func TestReadAheadPanics(t *testing.T) {
	for _, tc := range []struct {
		name       string
		readPanics bool
		through    bool
	}{
		{"next", true, false},
		{"next before attach", true, true},
		{"attach", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []int
			p := func() (p any) {
				defer func() { p = recover() }()
				n := 0
				next := func(page []int) ([]int, bool, error) {
					if n++; n == 3 && tc.readPanics {
						panic("broken page")
					}
					return append(page[:0], n), false, nil
				}
				use := func(page []int) error {
					got = append(got, page...)
					return nil
				}
				if !tc.through {
					_ = readAhead(next, use)
					return nil
				}
				_ = readAheadThrough(next, func(page []int) error {
					if page[0] == 3 {
						panic("broken page")
					}
					return nil
				}, use)
				return nil
			}()
			if p != "broken page" {
				t.Errorf("recovered %v, want the stage's panic", p)
			}
			if diff := cmp.Diff([]int{1, 2}, got); diff != "" {
				t.Errorf("pages used before the panic (-want +got):\n%s", diff)
			}
		})
	}
}
