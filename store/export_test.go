package store

// MaxSpanRecords lets the tests narrow the spans kept pages may have.
var MaxSpanRecords = &maxSpanRecords
