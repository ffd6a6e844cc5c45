package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The walking helpers below (eachMember, eachElement) expect JSON that
// scanJSON has already accepted. They exist
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
	obj   bool
	keys0 int                 // start of this object's names in the shared key stack
	set   map[string]struct{} // used once the object has more than linearKeys names
	cur   []byte              // current member name (raw), for pointers
	idx   int                 // current element index for arrays
}

// maxDepth matches encoding/json's nesting limit, so that scanJSON accepts
// exactly what json.Valid accepts.
const maxDepth = 10000

// syntaxError describes where scanJSON gave up.
type syntaxError struct {
	msg string
	off int
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%s at offset %d", e.msg, e.off) }

// scanJSON validates b as one JSON value (accepting exactly what json.Valid
// accepts) and, in the same pass, calls report for each member name that
// repeats within its object, with the JSON pointer of the repeated member. It
// returns the number of repeats. One hand-written pass is several times faster
// than json.Valid followed by a separate walk, and large catalogs are common.
func scanJSON(b []byte, report func(path string)) (int, error) {
	const (
		expectValue = iota
		afterValue
		expectKey
	)
	var (
		stack []scanFrame
		keys  [][]byte // names of all open objects, innermost last
		count int
		state = expectValue
		i     = skipWS(b, 0)
	)
	bad := func(i int) (int, error) {
		if i >= len(b) {
			return count, &syntaxError{"unexpected end of json input", len(b)}
		}
		return count, &syntaxError{fmt.Sprintf("invalid character %q", b[i]), i}
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
	for {
		switch state {
		case expectValue:
			if i >= len(b) {
				return bad(i)
			}
			switch c := b[i]; c {
			case '{', '[':
				if len(stack) >= maxDepth {
					return count, &syntaxError{"exceeded max depth", i}
				}
				stack = append(stack, scanFrame{obj: c == '{', keys0: len(keys)})
				i = skipWS(b, i+1)
				switch {
				case i < len(b) && (b[i] == '}' && c == '{' || b[i] == ']' && c == '['):
					keys = keys[:stack[len(stack)-1].keys0]
					stack = stack[:len(stack)-1]
					i++
					state = afterValue
				case c == '{':
					state = expectKey
				}
				continue
			case '"':
				end, ok := scanString(b, i)
				if !ok {
					return bad(end)
				}
				i = end
			case 't':
				if !bytes.HasPrefix(b[i:], []byte("true")) {
					return bad(i)
				}
				i += 4
			case 'f':
				if !bytes.HasPrefix(b[i:], []byte("false")) {
					return bad(i)
				}
				i += 5
			case 'n':
				if !bytes.HasPrefix(b[i:], []byte("null")) {
					return bad(i)
				}
				i += 4
			default:
				end, ok := scanNumber(b, i)
				if !ok {
					return bad(end)
				}
				i = end
			}
			state = afterValue
		case afterValue:
			i = skipWS(b, i)
			n := len(stack)
			if n == 0 {
				if i != len(b) {
					return bad(i)
				}
				return count, nil
			}
			f := &stack[n-1]
			switch {
			case i >= len(b):
				return bad(i)
			case b[i] == ',':
				i = skipWS(b, i+1)
				if f.obj {
					state = expectKey
				} else {
					f.idx++
					state = expectValue
				}
			case b[i] == '}' && f.obj, b[i] == ']' && !f.obj:
				keys = keys[:f.keys0]
				stack = stack[:n-1]
				i++
			default:
				return bad(i)
			}
		case expectKey:
			if i >= len(b) || b[i] != '"' {
				return bad(i)
			}
			end, ok := scanString(b, i)
			if !ok {
				return bad(end)
			}
			f := &stack[len(stack)-1]
			k := b[i:end]
			if bytes.IndexByte(k, '\\') >= 0 {
				if s, ok := decodeString(k); ok {
					k = []byte(strconv.Quote(s)) // compare escaped names by value
				}
			}
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
			i = skipWS(b, end)
			if i >= len(b) || b[i] != ':' {
				return bad(i)
			}
			i = skipWS(b, i+1)
			state = expectValue
		}
	}
}

// scanString checks the string starting at b[i] == '"'. It returns the index
// just past it, or the offending index and false.
func scanString(b []byte, i int) (int, bool) {
	for j := i + 1; j < len(b); {
		c := b[j]
		switch {
		case c == '"':
			return j + 1, true
		case c < 0x20:
			return j, false
		case c == '\\':
			if j+1 >= len(b) {
				return len(b), false
			}
			switch b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				if j+6 > len(b) {
					return len(b), false
				}
				for _, h := range b[j+2 : j+6] {
					if !isHex(h) {
						return j, false
					}
				}
				j += 6
			default:
				return j + 1, false
			}
		default:
			j++
		}
	}
	return len(b), false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// scanNumber checks the number starting at b[i] against RFC 8259's grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func scanNumber(b []byte, i int) (int, bool) {
	digits := func(j int) int {
		for j < len(b) && '0' <= b[j] && b[j] <= '9' {
			j++
		}
		return j
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(i + 1)
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}
