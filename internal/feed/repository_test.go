package feed

import (
	"encoding/json"
	"testing"

	"github.com/cardcrawl/cardcrawl/servercard"
	"github.com/google/go-cmp/cmp"
)

// repositoryByJSON is what decodeRepository must agree with.
func repositoryByJSON(s string) *servercard.Repository {
	var repo servercard.Repository
	if json.Unmarshal([]byte(s), &repo) != nil {
		return nil
	}
	return &repo
}

var repositorySeeds = []string{
	`{"url":"https://github.com/a/b","source":"github"}`,
	`{"url":"https://github.com/a/b","source":"github","subfolder":"x/y","id":"123"}`,
	`{}`, `{"url":""}`, `{"url":"a","url":"b"}`,
	// Handed to encoding/json: escapes, white space, other keys or
	// values, case-folded keys, broken objects.
	`{"url":"https://a.example/?a=\u003c"}`, `{"url":"a\"b"}`, `{ "url": "a" }`, `{"URL":"a"}`,
	`{"url":"a","stars":5}`, `{"url":1}`, `{"url":"a",}`, `{"url":"a"`, `{"url":"a""}`, `{"url","x":"y"}`,
	`{"url":"é"}`, "{\"url\":\"\xff\"}", "{\"url\":\"a\x01\"}", `null`, `[]`, ``, `{"url":"a"}x`,
}

// TestDecodeRepository: the hand-read objects decode as encoding/json
// decodes them, and everything else is left to it.
func TestDecodeRepository(t *testing.T) {
	for _, s := range repositorySeeds {
		if diff := cmp.Diff(repositoryByJSON(s), decodeRepository(s)); diff != "" {
			t.Errorf("%s (-encoding/json +decodeRepository):\n%s", s, diff)
		}
	}
	if _, ok := plainRepository(`{"url":"https://github.com/a/b","source":"github","subfolder":"x","id":"1"}`); !ok {
		t.Error("a plain repository was not read by hand")
	}
}

func FuzzDecodeRepository(f *testing.F) {
	for _, s := range repositorySeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if diff := cmp.Diff(repositoryByJSON(s), decodeRepository(s)); diff != "" {
			t.Errorf("%q (-encoding/json +decodeRepository):\n%s", s, diff)
		}
	})
}
