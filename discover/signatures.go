package discover

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cardcrawl/cardcrawl/catalog"
	"github.com/cardcrawl/cardcrawl/catalog/trust"
	"github.com/cardcrawl/cardcrawl/internal/finding"
)

// kindDID is the observation kind of a signer's DID document.
const kindDID = "did_document"

const acceptDID = "application/did+json, application/did+ld+json;q=0.9, application/json;q=0.8"

// maxSigners bounds the DID documents one domain's catalogs make the crawl
// fetch: a catalog may name any number of signers, each a request to
// another host.
const maxSigners = 4

// didDocument is one signer's DID document as this domain's crawl got it.
type didDocument struct {
	body []byte
	err  error // why there is none: not fetched, or the fetch failed
}

var errSignerLimit = fmt.Errorf("not checked: the domain's catalogs name more than %d signers", maxSigners)

// verifySignatures checks the signatures of the catalog n (its own and
// its entries' trust manifests) and says on the catalog what each
// establishes, at the signature's path. The document was judged already:
// these findings are the crawl's (they need the network), kept when a
// stored catalog is re-judged.
func (d *domainCrawl) verifySignatures(ctx context.Context, n catalogNode, findings *finding.List) {
	signed, more := trust.Find(n.body)
	for _, s := range signed {
		if ctx.Err() != nil {
			findings.Add(finding.Warning, CodeSignatureUnverifiable, s.Path, "not checked: the domain's time ran out")
			continue
		}
		sev, code, msg := d.verifySignature(ctx, n, s)
		findings.Add(sev, code, s.Path, msg)
	}
	if more > 0 {
		findings.Add(finding.Warning, CodeSignaturesTruncated, "",
			fmt.Sprintf("%d more signature(s) not checked: at most %d a document", more, trust.MaxSignatures))
	}
}

func (d *domainCrawl) verifySignature(ctx context.Context, n catalogNode, s trust.Signed) (finding.Severity, string, string) {
	now := d.now()
	err := trust.Precheck(s, now)
	if err == nil {
		doc := d.didDocument(ctx, s.Signature.Signer)
		if doc.err != nil {
			return finding.Warning, CodeSignatureUnverifiable, doc.err.Error()
		}
		err = trust.Authenticate(s, doc.body, now)
	}
	switch {
	case errors.Is(err, trust.ErrUnsupported):
		return finding.Warning, CodeSignatureUnverifiable, err.Error()
	case err != nil:
		return finding.Error, CodeSignatureInvalid, err.Error()
	}
	signer := s.Signature.Signer
	if s.Kind == trust.KindCatalog {
		if err := trust.CatalogCovered(s); err != nil {
			return finding.Warning, CodeSignatureNotEndorsement, fmt.Sprintf(
				"signed by %s, but not attributed to the catalog's operator: %s", signer, why(err))
		}
		return finding.Info, CodeSignatureVerified, fmt.Sprintf(
			"the catalog snapshot is signed by its operator %s (host.identifier; did-web-v1)", signer)
	}
	if err := trust.ReleaseCovered(s, d.digestOK[catalog.PointerKey(n.key, catalog.Entry{Index: s.Entry}.Path())]); err != nil {
		return finding.Warning, CodeSignatureNotEndorsement, fmt.Sprintf(
			"signed by %s, but it does not cover the entry's release: %s", signer, why(err))
	}
	if pub := trust.Publisher(s.EntryFields.Identifier); pub == signer {
		return finding.Info, CodeSignatureVerified, fmt.Sprintf(
			"the entry's release is endorsed by its publisher %s (urn:air; did-web-v1)", signer)
	}
	return finding.Info, CodeSignatureVerified, fmt.Sprintf(
		"the entry's release is endorsed by %s, which is not its publisher (its identifier names none it could be, or another)", signer)
}

// didDocument fetches a signer's DID document once per domain, at most
// maxSigners of them.
func (d *domainCrawl) didDocument(ctx context.Context, signer string) didDocument {
	if doc, ok := d.dids[signer]; ok {
		return doc
	}
	if d.dids == nil {
		d.dids = map[string]didDocument{}
	}
	if len(d.dids) >= maxSigners {
		return didDocument{err: errSignerLimit}
	}
	var doc didDocument
	u, err := trust.DocumentURL(signer)
	if err != nil {
		doc.err = err
	} else {
		f := d.get(ctx, kindDID, u, acceptDID)
		d.record(ctx, f)
		if f.ok() {
			doc.body = f.body
		} else {
			doc.err = fmt.Errorf("the DID document of %s could not be read: %s (%s)", signer, f.obs.Reason, f.obs.Class)
		}
	}
	d.dids[signer] = doc
	return doc
}

// why is a coverage error's reason, without the verdict its finding's
// code already says.
func why(err error) string {
	return strings.TrimPrefix(err.Error(), trust.ErrInvalid.Error()+": ")
}
