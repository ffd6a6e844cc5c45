package discover

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cardcrawl/cardcrawl/catalog"
	"github.com/cardcrawl/cardcrawl/internal/failure"
	"github.com/cardcrawl/cardcrawl/internal/fetch"
	"github.com/cardcrawl/cardcrawl/internal/finding"
	"github.com/cardcrawl/cardcrawl/internal/jcs"
	"github.com/cardcrawl/cardcrawl/servercard"
	"github.com/cardcrawl/cardcrawl/store"
)

// Classes the crawler adds to fetch's, for documents that arrived but are
// not what was asked for; their meanings are internal/failure's table.
const (
	ClassNotJSON         = string(failure.NotJSON)
	ClassSoft404         = string(failure.Soft404)
	ClassInvalidDocument = string(failure.InvalidDocument)
)

// Accept headers. Some hosts answer 406 unless their exact media type is
// listed, so it comes first; plain JSON is still welcome.
const (
	acceptCatalog = catalog.MediaTypeCatalog + ", application/json;q=0.9"
	acceptCard    = catalog.MediaTypeServerCard + ", application/json;q=0.9"
	acceptHTML    = "text/html, application/xhtml+xml;q=0.9"
)

// Observation kinds.
const (
	kindCatalog  = "catalog"
	kindCard     = "card"
	kindHomePage = "home_page"
	kindLegacy   = "legacy"
)

// Freshness when a response says nothing (Cache-Control max-age wins when
// present, clamped to [minFresh, maxFresh]). Misses are cached too: most
// domains publish nothing, and asking again every run is impolite. No
// domain is due again within the hour whatever it says: a catalog that
// changes with every fetch and asks to be fetched every minute would have
// workers store its documents (up to 50 catalogs and 200 cards of a MiB)
// sixty times an hour.
const (
	defaultFresh = time.Hour
	missFresh    = 24 * time.Hour
	failFresh    = time.Hour
	minFresh     = time.Hour
	maxFresh     = 7 * 24 * time.Hour
)

// legacyCardPaths and legacyCatalogPaths are pre-AI-Catalog locations still
// common in the wild (research: catalog-and-card.md §1.12).
var (
	legacyCardPaths    = []string{"/.well-known/mcp/server-card.json", "/.well-known/mcp.json"}
	legacyCatalogPaths = []string{"/.well-known/mcp/catalog.json"}
)

// domainCrawl is the state of one domain's crawl.
type domainCrawl struct {
	c        *crawler
	runCtx   context.Context // the run's: cancelled only by Ctrl-C
	domain   string
	result   store.DomainResult
	visited  map[string]bool // catalog URLs fetched in this traversal
	catalogs int             // catalogs read or attempted, root and nested, inline or fetched
	cards    int             // card entries read or attempted, inline or fetched
	// keptPastCap and catalogsKeptPastCap count the documents past a cap
	// whose earlier listings are kept (KeepCards, KeepCatalogs).
	keptPastCap, catalogsKeptPastCap int
	failed                           map[string]int // card failure classes, for the reason line
	entries                          int            // card entries seen
	// remotes are the probe inputs, bounded by the caps on cards and
	// remotes; they live until the domain's probes are done.
	remotes []remoteRef
	// pendingBytes counts the bodies in result.Fetches, written with the
	// result unless they grow past maxPendingBytes first.
	pendingBytes int
	// digestOK names the entries (by pointerKey of catalog and entry)
	// whose artifact matched its digest, for signed manifests' coverage.
	digestOK map[string]bool
	// dids are the signers' DID documents fetched for this domain (signatures.go).
	dids map[string]didDocument
}

// maxPendingBytes bounds the bodies a domain's crawl holds for writing
// with its result; past it they are written at once.
const maxPendingBytes = 1 << 20

// remoteRef is what probing needs of a remote found this run.
type remoteRef struct {
	Remote  servercard.Remote
	Norm    string
	CardKey string
	CardSHA string
	Card    *servercard.Card
}

// crawlDomain reads one domain within ctx, the per-domain deadline. runCtx
// is the run's context: only its cancellation (Ctrl-C) means
// "interrupted"; the domain's own deadline is an ordinary timeout,
// recorded as such.
func (c *crawler) crawlDomain(runCtx, ctx context.Context, domain string) *domainCrawl {
	d := &domainCrawl{
		c:       c,
		domain:  domain,
		runCtx:  runCtx,
		visited: map[string]bool{},
		failed:  map[string]int{},
		result:  store.DomainResult{Domain: domain, RunID: c.runID},
	}
	d.run(ctx)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && runCtx.Err() == nil {
		d.result.Reason += fmt.Sprintf("; stopped at the per-domain time limit of %s (what was not read keeps its earlier listings)", c.opts.DomainTimeout)
		d.capped(store.CapTime)
	}
	return d
}

// capped records that the domain hit a bound.
func (d *domainCrawl) capped(name string) {
	for _, n := range d.result.Capped {
		if n == name {
			return
		}
	}
	d.result.Capped = append(d.result.Capped, name)
}

func (d *domainCrawl) now() time.Time { return d.c.opts.Now() }

func (d *domainCrawl) run(ctx context.Context) {
	wellKnown := "https://" + d.domain + catalog.WellKnownPath
	f := d.get(ctx, kindCatalog, wellKnown, acceptCatalog)
	ok := d.rootCatalog(ctx, f)
	if !ok && f.miss() && d.c.opts.FollowLinks {
		ok = d.followLinks(ctx)
	}
	if !ok && f.miss() && d.c.opts.LegacyPaths {
		ok = d.legacy(ctx)
	}
	if !ok {
		d.result.Outcome = store.OutcomeFailed
		if f.miss() {
			d.result.Outcome = store.OutcomeNoCatalog
			d.result.Definitive = true
		}
		d.result.Class = f.obs.Class
		d.result.Reason = f.obs.Reason
		d.result.NextFetchAfter = d.nextFetch(f, false)
		return
	}
	d.result.Outcome = store.OutcomeCatalog
	d.result.Definitive = true
	d.result.Reason = d.reason()
	d.result.NextFetchAfter = d.nextFetch(f, true)
}

// transient says a failure may well pass by itself (the host was down,
// slow or busy), as opposed to an answer about the document (404, not JSON,
// refused address). What was listed through such a document is kept.
func transient(class string) bool { return failure.Class(class).Transient() }

// miss says the server told us plainly there is nothing there: 404, 410
// Gone, or a "not found" page served with 200.
func (f *fetched) miss() bool { return failure.Miss(failure.Class(f.obs.Class), f.obs.Status) }

func (d *domainCrawl) reason() string {
	n := len(d.result.Cards)
	parts := []string{fmt.Sprintf("%d catalog(s), %d server card entr%s, %d card(s) read",
		len(d.result.Catalogs), d.entries, plural(d.entries, "y", "ies"), n)}
	if len(d.failed) > 0 {
		var fs []string
		for k, v := range d.failed {
			fs = append(fs, fmt.Sprintf("%s×%d", k, v))
		}
		sort.Strings(fs)
		parts = append(parts, "card failures: "+strings.Join(fs, ", "))
	}
	return strings.Join(parts, "; ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func (d *domainCrawl) nextFetch(f *fetched, ok bool) time.Time {
	fresh := failFresh
	switch {
	case f.resp != nil && f.resp.MaxAge != nil:
		fresh = time.Duration(*f.resp.MaxAge) * time.Second
		fresh = min(max(fresh, minFresh), maxFresh)
	case ok:
		fresh = defaultFresh
	case f.miss(), f.obs.Class == string(failure.Robots):
		// Asking again within the day is impolite; a robots.txt that
		// kept the document out is the host's word for as long.
		fresh = missFresh
	}
	if wait := retryAfter(f.resp, d.now()); wait > fresh {
		fresh = min(wait, maxFresh)
	}
	return d.now().Add(fresh)
}

// retryAfter is how long a 429 or 503 asked us to wait.
func retryAfter(resp *fetch.Response, now time.Time) time.Duration {
	if resp == nil || (resp.Status != 429 && resp.Status != 503) || resp.Header == nil {
		return 0
	}
	wait, _ := fetch.RetryAfter(resp.Header.Get("Retry-After"), now)
	return wait
}

// fetched is one fetch, its observation (not yet written), and the body to
// work with: for a 304 the body is the stored one the validators describe.
type fetched struct {
	obs      store.Observation
	resp     *fetch.Response
	body     []byte // nil when the fetch failed
	finalURL string
}

// get fetches a URL conditionally and classifies what came back. The
// observation is written by record, after the caller has judged the content.
func (d *domainCrawl) get(ctx context.Context, kind, rawURL, accept string) *fetched {
	if d.c.robots != nil {
		if f := d.robotsGate(ctx, kind, rawURL); f != nil {
			return f
		}
	}
	f := d.conditional(ctx, kind, fetch.Request{URL: rawURL, Accept: accept})
	if f.obs.Class != "" {
		return f
	}
	switch {
	case kind == kindHomePage:
		// A page, not a document: HTML is what we asked for.
	case catalog.LooksLikeHTML(f.body):
		f.fail(ClassSoft404, "an HTML page where JSON was expected")
	case kind != kindCatalog && !json.Valid(f.body):
		// Catalogs are checked by catalog.Parse in the same pass that
		// parses them (ErrNotJSON → not_json); cards are checked here.
		f.fail(ClassNotJSON, "the body is not JSON")
	}
	return f
}

// conditional fetches req.URL with the validators of its last fetch that
// brought a body, and returns the body to work with: a 304's is the stored
// one. The content is not judged.
func (d *domainCrawl) conditional(ctx context.Context, kind string, req fetch.Request) *fetched {
	rawURL := req.URL
	v, haveV, err := d.lastValidators(ctx, rawURL)
	if err != nil && ctx.Err() == nil {
		d.c.opts.Logger.Warn("reading validators", "url", rawURL, "err", err)
	}
	if haveV {
		req.IfNoneMatch, req.IfModifiedSince = v.ETag, v.LastModified
	}
	f := d.fetch(ctx, kind, req)
	resp := f.resp
	switch {
	case resp.Class != "":
		return f
	case resp.NotModified && haveV:
		body, err := d.document(ctx, v.SHA256)
		if err != nil {
			f.obs.Class, f.obs.Reason = string(failure.StoredBodyMissing), "304 but the stored body is missing: "+err.Error()
			return f
		}
		f.body = body
		if f.finalURL == "" || f.finalURL == rawURL {
			f.finalURL = v.FinalURL
		}
		// The observation names the body it confirmed, and carries the
		// validators forward when the 304 did not repeat them, so the next
		// conditional request still has them.
		f.obs.SHA256, f.obs.Size, f.obs.FinalURL = v.SHA256, int64(len(body)), f.finalURL
		if f.obs.ETag == "" {
			f.obs.ETag = v.ETag
		}
		if f.obs.LastModified == "" {
			f.obs.LastModified = v.LastModified
		}
	default:
		f.body = resp.Body
		f.obs.SHA256 = resp.SHA256
		f.obs.Size = int64(len(resp.Body))
	}
	if f.finalURL == "" {
		f.finalURL = rawURL
	}
	return f
}

// fetch makes one request and returns it with its observation, not yet
// judged: the body is left for the caller to take.
func (d *domainCrawl) fetch(ctx context.Context, kind string, req fetch.Request) *fetched {
	started := d.now()
	resp := d.c.opts.Fetch.Get(ctx, req)
	f := &fetched{resp: resp, finalURL: resp.FinalURL}
	f.obs = store.Observation{
		RunID: d.c.runID, Domain: d.domain, Kind: kind, URL: req.URL, FetchedAt: started,
		Status: resp.Status, Class: resp.Class, ContentType: resp.ContentType, ETag: resp.ETag,
		LastModified: resp.LastModified, MaxAge: resp.MaxAge, Duration: resp.Duration,
		FinalURL: resp.FinalURL, Redirects: resp.Redirects, NotModified: resp.NotModified,
	}
	if resp.Err != nil {
		f.obs.Reason = resp.Err.Error()
	}
	return f
}

// fail marks a fetch that arrived but cannot be used. The body stays
// referenced by its hash so the evidence is kept.
func (f *fetched) fail(class, reason string) {
	f.obs.Class, f.obs.Reason = class, reason
}

func (f *fetched) ok() bool { return f.obs.Class == "" && f.body != nil }

// record keeps the observation (and a new body) to be written with the
// domain's result (one write instead of one per fetch), or at once when
// the bodies held grow past maxPendingBytes.
func (d *domainCrawl) record(ctx context.Context, f *fetched) {
	if f.obs.Class == fetch.ClassCanceled || (f.obs.Class != "" && d.runCtx.Err() != nil) {
		// Interrupted: the domain stays pending and is fetched again next
		// run, so a cancelled attempt is not an observation.
		return
	}
	var body []byte
	if f.obs.SHA256 != "" && !f.obs.NotModified {
		body = f.resp.Body
	}
	d.result.Fetches = append(d.result.Fetches, store.Fetched{Observation: f.obs, Body: body})
	d.pendingBytes += len(body)
	if d.pendingBytes > maxPendingBytes {
		d.flushFetches(ctx)
	}
}

// flushFetches writes the fetches not written yet. A fetch that completed
// is history worth keeping even if Ctrl-C came a moment later, so the
// crawl also calls it for a domain it leaves unfinished.
func (d *domainCrawl) flushFetches(ctx context.Context) {
	fs := d.result.Fetches
	d.result.Fetches, d.pendingBytes = nil, 0
	if err := d.c.opts.Store.AddObservations(context.WithoutCancel(ctx), fs...); err != nil {
		d.c.opts.Logger.Error("recording observations", "domain", d.domain, "fetches", len(fs), "err", err)
	}
}

// lastValidators are those of the latest fetch of url that produced a
// body, this domain's unwritten fetches first: they are the latest.
func (d *domainCrawl) lastValidators(ctx context.Context, url string) (store.Validators, bool, error) {
	for i := len(d.result.Fetches) - 1; i >= 0; i-- {
		if o := &d.result.Fetches[i].Observation; o.URL == url && o.SHA256 != "" {
			return store.Validators{ETag: o.ETag, LastModified: o.LastModified, SHA256: o.SHA256, FinalURL: o.FinalURL}, true, nil
		}
	}
	return d.c.opts.Store.LastValidators(ctx, url)
}

// document is a body by its hash, from this domain's unwritten fetches or
// the store.
func (d *domainCrawl) document(ctx context.Context, sha string) ([]byte, error) {
	for _, f := range d.result.Fetches {
		if f.Body != nil && f.SHA256 == sha {
			return f.Body, nil
		}
	}
	return d.c.opts.Store.Document(ctx, sha)
}

// rootCatalog handles the domain's well-known catalog. It reports whether a
// catalog was read.
func (d *domainCrawl) rootCatalog(ctx context.Context, f *fetched) bool {
	d.visited[f.obs.URL] = true
	d.catalogs++
	if !f.ok() {
		d.record(ctx, f)
		return false
	}
	ok := d.catalogDoc(ctx, f, "", 0)
	if ok {
		d.result.CatalogURL = f.obs.URL
	}
	return ok
}

// catalogDoc parses a fetched catalog, records it, and walks its entries.
func (d *domainCrawl) catalogDoc(ctx context.Context, f *fetched, parent string, depth int) bool {
	base, _ := url.Parse(f.finalURL)
	cat, findings, err := catalog.Parse(f.body, base, catalog.Options{MaxEntries: d.c.opts.MaxEntries})
	if err != nil {
		f.fail(docClass(err), err.Error())
		d.record(ctx, f)
		return false
	}
	d.record(ctx, f)
	d.walk(ctx, cat, findings, catalogNode{key: f.obs.URL, parent: parent, depth: depth, base: base, sha: f.obs.SHA256, body: f.body})
	return true
}

// docClass maps a parse error to a crawl class.
func docClass(err error) string {
	if errors.Is(err, catalog.ErrNotJSON) {
		return ClassNotJSON
	}
	return ClassInvalidDocument
}

type catalogNode struct {
	key    string // URL, or parent key plus a JSON pointer for inline catalogs
	parent string
	depth  int
	base   *url.URL
	sha    string
	body   []byte // the document as served (or the inline data), for its signatures
}

// walk records a parsed catalog and follows its entries. Entries past the
// domain's caps on cards and catalogs are recorded but not read, with one
// finding per catalog saying how many.
func (d *domainCrawl) walk(ctx context.Context, cat *catalog.Catalog, findings finding.List, n catalogNode) {
	var cardsLeft, catalogsLeft int
	first := len(d.result.Listings)
	for _, e := range cat.Entries {
		d.result.Entries = append(d.result.Entries, store.EntryRecord{
			CatalogURL: n.key, Identifier: e.Identifier, Version: e.Version, Type: e.Type, URL: e.URL,
			ResolvedURL: e.ResolvedURL, Inline: e.Data != nil, DisplayName: e.DisplayName, Raw: e.Raw,
		})
		switch e.Essence {
		case catalog.MediaTypeCatalog:
			if !d.nested(ctx, e, n, &findings) {
				catalogsLeft++
			}
		case catalog.MediaTypeServerCard, mediaTypeServerJSON:
			d.entries++
			if !d.cardEntry(ctx, e, n, &findings) {
				cardsLeft++
			}
		}
	}
	if cardsLeft > 0 {
		d.capped(store.CapCards)
		findings.Add(finding.Warning, CodeCardsTruncated, "", fmt.Sprintf(
			"%d card entr%s not read: the domain reached its limit of %d cards", cardsLeft, plural(cardsLeft, "y", "ies"), d.c.opts.MaxCards))
	}
	if cat.Signed {
		d.verifySignatures(ctx, n, &findings)
	}
	if catalogsLeft > 0 {
		d.capped(store.CapCatalogs)
		findings.Add(finding.Warning, CodeCatalogsTruncated, "", fmt.Sprintf(
			"%d nested catalog(s) not read: the domain reached its limit of %d catalogs", catalogsLeft, d.c.opts.MaxCatalogs))
	}
	d.listingCodes(first, n.key, findings)
	base := ""
	if n.base != nil {
		base = n.base.String()
	}
	d.result.Catalogs = append(d.result.Catalogs, store.CatalogRecord{
		URL: n.key, ParentURL: n.parent, Depth: n.depth, BaseURL: base, SpecVersion: cat.SpecVersion,
		SHA256: n.sha, EntryCount: cat.EntryCount, Findings: nonNilFindings(findings), JudgedBy: catalog.RulesVersion,
	})
}

// listingCodes gives the listings of catalog key made since first
// (nested catalogs' come between) the codes of what the catalog found of
// their entry and of its signature.
func (d *domainCrawl) listingCodes(first int, key string, findings finding.List) {
	if len(findings) == 0 {
		return
	}
	// An entry's listings (one a remote of its card) share its codes:
	// each entry's are found once, not once a listing.
	codes := map[int]string{}
	for i := first; i < len(d.result.Listings); i++ {
		l := &d.result.Listings[i]
		if l.CatalogURL != key {
			continue
		}
		c, ok := codes[l.Entry]
		if !ok {
			c = ListingCodes(findings, l.Entry)
			codes[l.Entry] = c
		}
		l.Codes = c
	}
}

// ListingCodes are the codes a listing of a catalog's entry at index
// carries, given the catalog's findings: those catalog.EntryFindings
// picks, as the store keeps them (store.CodesText). The crawl and the
// re-judging of a stored catalog (internal/revalidate) both use it.
func ListingCodes(findings finding.List, index int) string {
	var codes []string
	for _, f := range catalog.EntryFindings(findings, index) {
		codes = append(codes, f.Code)
	}
	return store.CodesText(codes)
}

// mediaTypeServerJSON was briefly the card's type and is proposed for
// server.json; the fetched document's own $schema decides what it is.
const mediaTypeServerJSON = "application/mcp-server+json"

func nonNilFindings(l finding.List) finding.List {
	if l == nil {
		return finding.List{}
	}
	return l
}

// nested follows a nested catalog entry, inline or by URL. It returns
// false when the domain's cap on catalogs left the entry unread.
func (d *domainCrawl) nested(ctx context.Context, e catalog.Entry, n catalogNode, findings *finding.List) bool {
	if n.depth+1 > d.c.opts.MaxDepth {
		findings.Add(finding.Warning, CodeNestingTooDeep, e.Path(),
			fmt.Sprintf("nested catalog not followed: depth %d exceeds the limit of %d", n.depth+1, d.c.opts.MaxDepth))
		return true
	}
	if e.Data != nil {
		if !d.takeCatalog("") {
			return false
		}
		cat, fs, err := catalog.Parse(e.Data, n.base, catalog.Options{MaxEntries: d.c.opts.MaxEntries})
		if err != nil {
			findings.Add(finding.Error, CodeNestedCatalogInvalid, e.DataPath(), err.Error())
			return true
		}
		d.checkDigest(n, e, "", e.Data, findings)
		sha := sha256Hex(e.Data)
		d.result.Bodies = append(d.result.Bodies, store.Body{SHA256: sha, ContentType: catalog.MediaTypeCatalog, Data: e.Data})
		d.walk(ctx, cat, fs, catalogNode{key: e.InlineKey(n.key), parent: n.key,
			depth: n.depth + 1, base: n.base, sha: sha, body: e.Data})
		return true
	}
	target := entryTarget(e)
	if target == "" {
		findings.Add(finding.Error, CodeNestedCatalogUnresolvable, e.Path(), "nested catalog URL cannot be resolved: "+e.URL)
		return true
	}
	if d.visited[target] {
		findings.Add(finding.Warning, CodeCatalogCycle, e.Path(), "nested catalog already visited in this traversal: "+target)
		return true
	}
	if !d.takeCatalog(target) {
		return false
	}
	d.visited[target] = true
	f := d.get(ctx, kindCatalog, target, acceptCatalog)
	if !f.ok() {
		d.record(ctx, f)
		findings.Add(finding.Error, CodeNestedCatalogFailed, e.Path(), fmt.Sprintf("%s: %s", f.obs.Class, f.obs.Reason))
		if transient(f.obs.Class) {
			d.result.KeepCatalogs = append(d.result.KeepCatalogs, target)
		}
		return true
	}
	d.checkDigest(n, e, target, f.body, findings)
	if !d.catalogDoc(ctx, f, n.key, n.depth+1) {
		findings.Add(finding.Error, CodeNestedCatalogFailed, e.Path(), fmt.Sprintf("%s: %s", f.obs.Class, f.obs.Reason))
	}
	return true
}

// takeCatalog counts one more catalog against the domain's cap, or says
// the cap is reached. A catalog not read for that reason keeps what it
// listed before: it was not looked at, so it is not gone.
func (d *domainCrawl) takeCatalog(target string) bool {
	if d.catalogs >= d.c.opts.MaxCatalogs {
		if target != "" && d.catalogsKeptPastCap < d.c.opts.MaxCatalogs { // as for cards
			d.catalogsKeptPastCap++
			d.result.KeepCatalogs = append(d.result.KeepCatalogs, target)
		}
		return false
	}
	d.catalogs++
	return true
}

// cardEntry reads a Server Card entry, inline or by URL. It returns false
// when the domain's cap on cards left the entry unread.
func (d *domainCrawl) cardEntry(ctx context.Context, e catalog.Entry, n catalogNode, findings *finding.List) bool {
	target := ""
	if e.Data == nil {
		target = entryTarget(e)
	}
	if d.cards >= d.c.opts.MaxCards {
		// Not looked at, so not gone: its earlier listings stay. As many
		// as the cap at most, the first past it, or a catalog that puts
		// new cards first would add a cap's worth of active ones with
		// every crawl.
		if target != "" && d.keptPastCap < d.c.opts.MaxCards {
			d.keptPastCap++
			d.result.KeepCards = append(d.result.KeepCards, target)
		}
		return false
	}
	d.cards++
	if e.Data != nil {
		d.checkDigest(n, e, "", e.Data, findings)
		d.card(n.key, e, e.InlineKey(n.key), "", e.Data, true)
		return true
	}
	if target == "" {
		findings.Add(finding.Error, CodeCardURLUnresolvable, e.Path(), "card URL cannot be resolved: "+e.URL)
		d.failed["unresolvable"]++
		return true
	}
	f := d.get(ctx, kindCard, target, acceptCard)
	if !f.ok() {
		d.record(ctx, f)
		d.failed[f.obs.Class]++
		if transient(f.obs.Class) {
			d.result.KeepCards = append(d.result.KeepCards, target)
		}
		return true
	}
	d.record(ctx, f)
	d.checkDigest(n, e, target, f.body, findings)
	d.card(n.key, e, target, target, f.body, false)
	return true
}

// checkDigest compares what an entry's digest pinned with what was read:
// the exact bytes served at target or, for inline data (target ""), the
// data's canonical JSON form. The document is used either way: the
// finding on the catalog says it is not the one the catalog pinned.
func (d *domainCrawl) checkDigest(n catalogNode, e catalog.Entry, target string, body []byte, findings *finding.List) {
	if e.Digest.IsZero() {
		return
	}
	path := e.Path() + "/digest"
	what := "the document served at " + target
	if target == "" {
		c, err := jcs.Canonicalize(body)
		if err != nil {
			findings.Add(finding.Warning, CodeDigestUnverifiable, path, "the inline data cannot be hashed as its digest says: "+err.Error())
			return
		}
		body, what = c, "the inline data, in its canonical JSON form,"
	}
	if got := e.Digest.Of(body); got != e.Digest {
		findings.Add(finding.Error, CodeDigestMismatch, path, fmt.Sprintf("%s hashes to %s, not to the entry's %s", what, got, e.Digest))
		return
	}
	if d.digestOK == nil {
		d.digestOK = map[string]bool{}
	}
	d.digestOK[catalog.PointerKey(n.key, e.Path())] = true
}

// card validates a card and records it, its remotes and the listing chain.
func (d *domainCrawl) card(catalogKey string, e catalog.Entry, key, sourceURL string, raw []byte, inline bool) {
	res := d.c.opts.Validator.Check(raw)
	sha := sha256Hex(raw)
	if inline {
		d.result.Bodies = append(d.result.Bodies, store.Body{SHA256: sha, ContentType: catalog.MediaTypeServerCard, Data: raw})
	}
	card := res.Card
	if card == nil {
		card = &servercard.Card{}
	}
	findings := res.Findings
	if n, limit := len(card.Remotes), d.c.opts.MaxRemotes; n > limit {
		// The stored card keeps only the remotes stored: the raw document,
		// by its hash, still has them all. A copy, so that the domain's
		// remotes, which point at the card, do not hold all of them.
		card.Remotes = slices.Clone(card.Remotes[:limit])
		findings.Add(finding.Warning, CodeRemotesTruncated, "/remotes",
			fmt.Sprintf("the card declares %d remotes; the first %d are kept", n, limit))
		d.capped(store.CapRemotes)
	}
	cardJSON, _ := json.Marshal(card)
	d.result.Cards = append(d.result.Cards, store.CardRecord{
		Key: key, SourceURL: sourceURL, Inline: inline, SHA256: sha, Schema: card.Schema, Name: card.Name,
		Title: card.Title, Version: card.Version, Description: card.Description, WebsiteURL: card.WebsiteURL,
		Grade: string(res.Grade), Findings: nonNilFindings(findings), JSON: cardJSON, JudgedBy: servercard.RulesVersion,
	})
	listed := 0
	for _, r := range card.Remotes {
		norm, err := servercard.NormalizeURL(r.URL)
		if err != nil || norm == "" {
			continue
		}
		rj, _ := json.Marshal(r)
		d.result.Remotes = append(d.result.Remotes, store.RemoteRecord{
			URLNorm: norm, URL: r.URL, Type: r.Type, Templated: servercard.IsTemplate(r.URL), CardKey: key, JSON: rj,
		})
		d.result.Listings = append(d.result.Listings, store.ListingRecord{
			CatalogURL: catalogKey, Identifier: e.Identifier, CardKey: key, RemoteNorm: norm, Entry: e.Index,
		})
		d.remotes = append(d.remotes, remoteRef{Remote: r, Norm: norm, CardKey: key, CardSHA: sha, Card: card})
		listed++
	}
	if listed == 0 {
		d.result.Listings = append(d.result.Listings, store.ListingRecord{CatalogURL: catalogKey, Identifier: e.Identifier,
			CardKey: key, Entry: e.Index})
	}
}

// entryTarget is the URL to fetch for an entry. A URL the parser could not
// resolve (a {placeholder}, say) is still handed to the fetch guard as
// written, so its refusal is recorded with a class like any other failure.
func entryTarget(e catalog.Entry) string {
	if e.ResolvedURL != "" {
		return e.ResolvedURL
	}
	return e.URL
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
