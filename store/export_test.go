package store

// MaxSpanRecords lets the tests narrow the spans kept pages may have.
var MaxSpanRecords = &maxSpanRecords

// MaxSearchCandidates lets the tests take a search's common-term path with
// few servers.
var MaxSearchCandidates = &maxSearchCandidates
