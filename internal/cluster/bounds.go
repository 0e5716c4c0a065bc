package cluster

import (
	"crypto/sha256"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubegap/kubegap/internal/snapshot"
)

// ValidateNamespace refuses a namespace that is not a namespace name (a
// DNS-1123 label, as the API server itself requires). The namespace is a
// path segment of every namespaced LIST: "../nodes/x/proxy" would reach a
// kubelet through the API server's proxy, "kube-system/services/x/proxy"
// an in-cluster Service. "" (all namespaces) is valid.
func ValidateNamespace(ns string) error {
	if ns == "" {
		return nil
	}
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return fmt.Errorf("namespace %s is not a namespace name: %s", quoteCapped(ns), errs[0])
	}
	return nil
}

// quoteCapped quotes a user-supplied value for an error message, cut to a
// length no valid name exceeds, so a megabyte of input stays one short line.
func quoteCapped(s string) string {
	const max = validation.DNS1123SubdomainMaxLength + 1
	if len(s) > max {
		return fmt.Sprintf("%q… (%d bytes)", s[:max], len(s))
	}
	return fmt.Sprintf("%q", s)
}

// maxListObjects bounds a LIST whose server gives no remainingItemCount:
// past this many pages' worth of objects (ten times the largest clusters'
// pods or events), a list that still hands out continue tokens is taken to
// be looping, not large.
const maxListObjects = 2_000_000

// EndlessListError is a LIST that would never end: the server repeated a
// continue token, or sent far more pages than its remainingItemCount
// announced. The resource is recorded as an error; the read goes on.
type EndlessListError struct {
	Resource snapshot.Resource
	Reason   string
}

func (e *EndlessListError) Error() string {
	return fmt.Sprintf("listing %s stopped: %s", e.Resource, e.Reason)
}

func isEndless(err error) bool {
	var e *EndlessListError
	return errors.As(err, &e)
}

// pageGuard follows the pages of one LIST and stops it when it loops.
// Tokens are remembered by their hash: a hostile server's tokens may be
// large.
type pageGuard struct {
	res   snapshot.Resource
	limit int64
	pages int64
	max   int64
	// claim is the first page's remainingItemCount, or -1.
	claim int64
	seen  map[[sha256.Size]byte]bool
}

func newPageGuard(res snapshot.Resource, limit int64) *pageGuard {
	return &pageGuard{res: res, limit: limit, max: pagesFor(maxListObjects, limit), claim: -1,
		seen: map[[sha256.Size]byte]bool{}}
}

// pagesFor is how many pages of limit objects n objects take.
func pagesFor(n, limit int64) int64 {
	if limit <= 0 {
		limit = 1
	}
	return (n + limit - 1) / limit
}

// next is told each page's continue token and remainingItemCount (nil
// when the server gave none), and fails when the list should stop.
func (g *pageGuard) next(cont string, remaining *int64) error {
	g.pages++
	if cont == "" {
		return nil
	}
	h := sha256.Sum256([]byte(cont))
	if g.seen[h] {
		return &EndlessListError{Resource: g.res, Reason: fmt.Sprintf(
			"page %d came with a continue token the server had already sent: the list would never end", g.pages)}
	}
	g.seen[h] = true
	if g.pages == 1 && remaining != nil && *remaining >= 0 {
		// A consistent list has exactly this many pages left; twice as
		// many and a few more leave room for a server's short pages.
		g.claim = *remaining
		g.max = min(g.max, 2*(1+pagesFor(*remaining, g.limit))+8)
	}
	if g.pages >= g.max {
		why := fmt.Sprintf("%d pages of up to %d objects and the server still sends a continue token", g.pages, g.limit)
		if g.claim >= 0 {
			why += fmt.Sprintf(", far beyond the %d more objects its first page announced", g.claim)
		}
		return &EndlessListError{Resource: g.res, Reason: why}
	}
	return nil
}
