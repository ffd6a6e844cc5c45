package failure

// The classes. Each is defined with its type so the tests can find every
// one of them in this file and require a row in the table below.
const (
	None Class = "" // success

	// The network.
	DNS     Class = "dns"
	Connect Class = "connect"
	TLS     Class = "tls"
	Timeout Class = "timeout"

	// The answer's status.
	HTTP404       Class = "http_404"
	HTTP4xx       Class = "http_4xx" // includes 410 Gone; see Miss
	HTTP429       Class = "http_429"
	HTTP5xx       Class = "http_5xx"
	RedirectLimit Class = "redirect_limit"
	TooLarge      Class = "too_large"

	// Refused by the fetch guard before any connection.
	BlockedAddress Class = "blocked_address"
	BlockedScheme  Class = "blocked_scheme"
	BlockedPort    Class = "blocked_port"
	PlaceholderURL Class = "placeholder_url"
	InvalidURL     Class = "invalid_url"

	// A document arrived but is not what was asked for (the crawl).
	Soft404           Class = "soft_404"
	NotJSON           Class = "not_json"
	InvalidDocument   Class = "invalid_document"
	StoredBodyMissing Class = "stored_body_missing"
	Robots            Class = "robots"

	// An MCP exchange arrived but is not MCP (the probe).
	NoResponse            Class = "no_response"
	NotJSONRPC            Class = "not_jsonrpc"
	UnexpectedContentType Class = "unexpected_content_type"

	// The caller stopped (Ctrl-C); such attempts are not stored.
	Canceled Class = "canceled"
)

// Probe outcomes.
const (
	OutcomeOK                Outcome = "ok"
	OutcomeRequiresLogin     Outcome = "requires_login"
	OutcomeHandshakeRejected Outcome = "handshake_rejected"
	OutcomeNotMCP            Outcome = "not_mcp"
	OutcomeHTTP4xx           Outcome = "http_4xx"
	OutcomeHTTP5xx           Outcome = "http_5xx"
	OutcomeRateLimited       Outcome = "rate_limited"
	OutcomeConnect           Outcome = "connect"
	OutcomeTimeout           Outcome = "timeout"
	OutcomeBlocked           Outcome = "blocked"
	OutcomeCanceled          Outcome = "canceled"
)

// Spelled-out values for the table's unkeyed rows.
const (
	mayPass, stands     = true, false // Meaning.Transient
	miss, notMiss       = true, false // Meaning.Miss
	retried, notRetried = true, false // Meaning.Retried
)

// table is the one place a class's meanings are decided. Its rows are
// unkeyed on purpose: the compiler then refuses a row that leaves a meaning
// out. Columns: transient, miss, retried, probe outcome, text.
var table = map[Class]Meaning{
	DNS: {mayPass, notMiss, notRetried, OutcomeConnect,
		"the host name did not resolve, or the resolver failed"},
	Connect: {mayPass, notMiss, retried, OutcomeConnect,
		"the connection was refused, reset, or dropped before an answer (a dropped connection is retried once)"},
	// A failed handshake is an untrusted, expired or wrong-host certificate
	// or no common protocol: it does not fix itself within the hour, so
	// what was listed through it is not kept as if the host were down.
	TLS: {stands, notMiss, notRetried, OutcomeConnect,
		"the TLS handshake failed (untrusted, expired or wrong-host certificate); not temporary, a certificate does not fix itself"},
	Timeout: {mayPass, notMiss, notRetried, OutcomeTimeout,
		"no complete answer within the 15 s limit"},

	HTTP404: {stands, miss, notRetried, OutcomeHTTP4xx,
		"the server answered 404 Not Found"},
	HTTP4xx: {stands, notMiss, notRetried, OutcomeHTTP4xx,
		"the server answered another 4xx status (410 Gone among them, which counts as a miss)"},
	HTTP429: {mayPass, notMiss, notRetried, OutcomeRateLimited,
		"the server answered 429 Too Many Requests"},
	HTTP5xx: {mayPass, notMiss, notRetried, OutcomeHTTP5xx,
		"the server answered a 5xx status (or a status that is no HTTP status)"},
	RedirectLimit: {stands, notMiss, notRetried, OutcomeNotMCP,
		"more than 3 redirects, or a redirect where none is followed"},
	TooLarge: {stands, notMiss, notRetried, OutcomeNotMCP,
		"the body passed its size cap (1 MiB per document)"},

	BlockedAddress: {stands, notMiss, notRetried, OutcomeBlocked,
		"the URL, a redirect or a DNS answer points at a loopback, private, link-local, CGNAT, multicast, reserved, Teredo or cloud-metadata address"},
	BlockedScheme: {stands, notMiss, notRetried, OutcomeBlocked,
		"the URL is not https, carries userinfo, or is no URL at all"},
	BlockedPort: {stands, notMiss, notRetried, OutcomeBlocked,
		"the URL names a port browsers refuse to fetch (the WHATWG Fetch standard's bad ports: 22, 25, 110, 143, …)"},
	PlaceholderURL: {stands, notMiss, notRetried, OutcomeBlocked,
		"the URL still has a {placeholder}"},
	InvalidURL: {stands, notMiss, notRetried, OutcomeBlocked,
		"the probe could not build a request from the URL (or from the endpoint a legacy SSE server named)"},

	Soft404: {stands, miss, notRetried, OutcomeNotMCP,
		"an HTML page where JSON was expected (often a \"not found\" page served with 200)"},
	NotJSON: {stands, notMiss, notRetried, OutcomeNotMCP,
		"the body is not JSON"},
	InvalidDocument: {stands, notMiss, notRetried, OutcomeNotMCP,
		"JSON, but not a catalog (or a catalog of an unsupported major version)"},
	// Not the host's doing: what the document listed is kept until it can
	// be read again.
	StoredBodyMissing: {mayPass, notMiss, notRetried, OutcomeNotMCP,
		"the server answered 304 Not Modified, but the body it confirmed is missing from the database"},
	// The host's own word, standing until it changes its file. Never
	// reached by a probe: robots.txt is read only for documents.
	Robots: {stands, notMiss, notRetried, OutcomeBlocked,
		"with --robots, the host's robots.txt disallows the URL for cardcrawl (not fetched)"},

	NoResponse: {stands, notMiss, notRetried, OutcomeNotMCP,
		"an MCP exchange ended without a JSON-RPC response to the request"},
	NotJSONRPC: {stands, notMiss, notRetried, OutcomeNotMCP,
		"an MCP exchange answered with something that is not JSON-RPC"},
	UnexpectedContentType: {stands, notMiss, notRetried, OutcomeNotMCP,
		"an MCP exchange answered with neither JSON nor an event stream"},

	// Says nothing about the host: the attempt is dropped and made again.
	Canceled: {mayPass, notMiss, notRetried, OutcomeCanceled,
		"the run was interrupted (not recorded; the attempt is made again next run)"},
}

// outcomes describes every probe outcome: what it means, and the words a
// directory's "why checks failed" breakdown uses for it (probes --summary).
var outcomes = map[Outcome]outcomeMeaning{
	OutcomeOK: {"the server completed the MCP handshake (for legacy SSE: sent its endpoint event)",
		"answered as an MCP server"},
	OutcomeRequiresLogin:     {"the server answered 401 or 403", "requires login (HTTP 401/403)"},
	OutcomeHandshakeRejected: {"the server answered initialize with a JSON-RPC error", "rejected the handshake"},
	OutcomeNotMCP:            {"the server answered, but not as an MCP server", "answered, but not as an MCP server"},
	OutcomeHTTP4xx:           {"the server answered a 4xx status the ladder could not go past", "HTTP 4xx error"},
	OutcomeHTTP5xx:           {"the server answered a 5xx status", "HTTP 5xx error"},
	OutcomeRateLimited:       {"the server answered 429 Too Many Requests", "rate limited (HTTP 429)"},
	OutcomeConnect:           {"no connection: DNS, refused, reset or TLS", "could not connect"},
	OutcomeTimeout:           {"no answer within 15 s", "no answer in 15 seconds"},
	OutcomeBlocked:           {"the fetch guard refused the URL; no request was made", "not checked: address refused"},
	OutcomeCanceled:          {"the probe was interrupted (not stored)", "interrupted"},
}
