package catalog

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The helpers below walk JSON that json.Valid has already accepted. They exist
// because encoding/json matches member names case-insensitively and silently
// lets duplicates overwrite each other; walking the bytes ourselves gives exact
// member names, duplicate detection and sub-slices (no copies) in one cheap
// pass. They still bounds-check everything, so malformed input cannot make them
// panic, only stop early.

func skipWS(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// stringEnd returns the index just past the closing quote of the string whose
// opening quote is at b[i]. It jumps from quote to quote (IndexByte is
// vectorised) and only looks back when a quote might be escaped: the quote is
// escaped exactly when an odd run of backslashes precedes it.
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return len(b)
		}
		j += k
		n := 0
		for p := j - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return j + 1
		}
	}
	return len(b)
}

// valueEnd returns the index just past the value starting at b[i]. It is
// iterative so that deeply nested input cannot exhaust the stack.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = stringEnd(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(b)
	default:
		for i < len(b) {
			switch b[i] {
			case ',', '}', ']', ':', ' ', '\t', '\n', '\r':
				return i
			}
			i++
		}
		return i
	}
}

// eachMember calls fn for every member of the object obj, in document order,
// with the member name still quoted and escaped and the value verbatim.
func eachMember(obj []byte, fn func(rawKey, val []byte)) {
	i := skipWS(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return
	}
	i++
	for {
		i = skipWS(obj, i)
		if i >= len(obj) || obj[i] != '"' {
			return
		}
		ke := stringEnd(obj, i)
		key := obj[i:ke]
		i = skipWS(obj, ke)
		if i >= len(obj) || obj[i] != ':' {
			return
		}
		i = skipWS(obj, i+1)
		ve := valueEnd(obj, i)
		fn(key, obj[i:ve])
		i = skipWS(obj, ve)
		if i >= len(obj) || obj[i] != ',' {
			return
		}
		i++
	}
}

// eachElement calls fn for every element of the array arr until fn returns
// false.
func eachElement(arr []byte, fn func(idx int, val []byte) bool) {
	i := skipWS(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return
	}
	i++
	for n := 0; ; n++ {
		i = skipWS(arr, i)
		if i >= len(arr) || arr[i] == ']' {
			return
		}
		ve := valueEnd(arr, i)
		if ve == i || !fn(n, arr[i:ve]) {
			return
		}
		i = skipWS(arr, ve)
		if i >= len(arr) || arr[i] != ',' {
			return
		}
		i++
	}
}

// decodeString returns the Go string for a raw JSON string token; ok is false
// when raw is not a string.
func decodeString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner), true
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// keyIs reports whether the raw (quoted) member name equals name, without
// allocating in the common unescaped case.
func keyIs(rawKey []byte, name string) bool {
	if len(rawKey) == len(name)+2 && string(rawKey[1:len(rawKey)-1]) == name {
		return true
	}
	if bytes.IndexByte(rawKey, '\\') < 0 {
		return false
	}
	s, ok := decodeString(rawKey)
	return ok && s == name
}

func isNull(raw []byte) bool { return string(raw) == "null" }

// pointerEscape escapes one JSON pointer reference token (RFC 6901).
func pointerEscape(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// dupKeyLimit bounds how many duplicate_json_key findings one document can
// produce, so a hostile document cannot blow up the findings list.
const dupKeyLimit = 20

// linearKeys is how many member names an object may have before duplicate
// detection switches from a linear scan to a map (keeps huge objects O(n)).
const linearKeys = 32

type scanFrame struct {
	obj     bool
	wantKey bool
	keys0   int                 // start of this object's names in the shared key stack
	set     map[string]struct{} // used once the object has more than linearKeys names
	cur     []byte              // current member name (raw) or nil
	idx     int                 // current element index for arrays
}

// duplicateKeys walks the whole (already valid) document and calls report for
// each member name that repeats within its object, with the JSON pointer of
// the repeated member. It returns the total number of duplicates found.
func duplicateKeys(b []byte, report func(path string)) int {
	var (
		stack []scanFrame
		keys  [][]byte // names of all open objects, innermost last
		count int
	)
	canon := func(rawKey []byte) []byte {
		if bytes.IndexByte(rawKey, '\\') < 0 {
			return rawKey
		}
		if s, ok := decodeString(rawKey); ok {
			return []byte(strconv.Quote(s))
		}
		return rawKey
	}
	path := func() string {
		var sb strings.Builder
		for _, f := range stack {
			sb.WriteByte('/')
			if f.obj {
				s, _ := decodeString(f.cur)
				sb.WriteString(pointerEscape(s))
			} else {
				sb.WriteString(strconv.Itoa(f.idx))
			}
		}
		return sb.String()
	}
	for i := skipWS(b, 0); i < len(b); i = skipWS(b, i) {
		switch c := b[i]; c {
		case '{', '[':
			stack = append(stack, scanFrame{obj: c == '{', wantKey: c == '{', keys0: len(keys)})
			i++
		case '}', ']':
			if n := len(stack); n > 0 {
				keys = keys[:stack[n-1].keys0]
				stack = stack[:n-1]
			}
			i++
		case ',':
			if n := len(stack); n > 0 {
				if stack[n-1].obj {
					stack[n-1].wantKey = true
				} else {
					stack[n-1].idx++
				}
			}
			i++
		case ':':
			i++
		case '"':
			end := stringEnd(b, i)
			if n := len(stack); n > 0 && stack[n-1].obj && stack[n-1].wantKey {
				f := &stack[n-1]
				f.wantKey = false
				k := canon(b[i:end])
				f.cur = k
				dup := false
				if f.set != nil {
					_, dup = f.set[string(k)]
					f.set[string(k)] = struct{}{}
				} else {
					for _, seen := range keys[f.keys0:] {
						if bytes.Equal(seen, k) {
							dup = true
							break
						}
					}
					keys = append(keys, k)
					if len(keys)-f.keys0 > linearKeys {
						f.set = make(map[string]struct{}, 2*linearKeys)
						for _, seen := range keys[f.keys0:] {
							f.set[string(seen)] = struct{}{}
						}
						keys = keys[:f.keys0]
					}
				}
				if dup {
					count++
					if count <= dupKeyLimit {
						report(path())
					}
				}
			}
			i = end
		default:
			e := valueEnd(b, i)
			if e <= i {
				e = i + 1 // never stall on a byte no case understands
			}
			i = e
		}
	}
	return count
}
