package images

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// wrappedRegistry serves the in-process registry through wrap, which can
// delay, count or refuse requests before the registry sees them.
func wrappedRegistry(t testing.TB, wrap func(w http.ResponseWriter, r *http.Request, next http.Handler)) string {
	t.Helper()
	h := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { wrap(w, r, h) }))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	return u.Host
}

// distinctImages pushes n images that differ by one small file.
func distinctImages(t testing.TB, host string, n int, fx *fixtureBinaries) []ImageRef {
	t.Helper()
	reg := &testRegistry{host: host}
	var refs []ImageRef
	for i := range n {
		img := image(t, "amd64", layer(t,
			file("opt/cni/bin/plugin", fx.cDynamic),
			file("opt/cni/bin/static", fx.cStatic),
			file("etc/id", []byte(fmt.Sprint(i)))))
		refs = append(refs, ImageRef{Reference: pushImage(t, reg, fmt.Sprintf("img%d:v1", i), img)})
	}
	return refs
}

// TestRetryAfterHonoured: a registry that answers every manifest's first
// request with 429 and Retry-After: 2 gets each retried no sooner than two
// seconds later, and every image is still inspected. (go-containerregistry
// alone would retry after about one second.)
func TestRetryAfterHonoured(t *testing.T) {
	fx := fixtures(t)
	var mu sync.Mutex
	refused := map[string]time.Time{}
	retryGap := map[string]time.Duration{}
	limiting := false
	host := wrappedRegistry(t, func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if strings.Contains(r.URL.Path, "/manifests/") && r.Method == http.MethodGet {
			mu.Lock()
			at, seen := refused[r.URL.Path]
			if limiting && !seen {
				refused[r.URL.Path] = time.Now()
				mu.Unlock()
				w.Header().Set("Retry-After", "2")
				http.Error(w, "slow down", http.StatusTooManyRequests)
				return
			}
			if seen {
				if _, done := retryGap[r.URL.Path]; !done {
					retryGap[r.URL.Path] = time.Since(at)
				}
			}
			mu.Unlock()
		}
		next.ServeHTTP(w, r)
	})
	refs := distinctImages(t, host, 3, fx)
	mu.Lock()
	limiting = true
	mu.Unlock()
	facts := InspectForAudit(context.Background(), refs, testOptions(t))
	for _, r := range refs {
		if f := facts[r.Reference]; f.Err != "" || f.MaxGlibc != fx.cDynamicNeed {
			t.Errorf("%s: %+v", r.Reference, f)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(refused) != 3 {
		t.Fatalf("refused %d manifests, want 3", len(refused))
	}
	for p, gap := range retryGap {
		if gap < 1900*time.Millisecond {
			t.Errorf("%s retried after %s, before the 2 s Retry-After", p, gap)
		}
	}
	if len(retryGap) != 3 {
		t.Errorf("retries seen for %d manifests, want 3", len(retryGap))
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"3", 3 * time.Second, true},
		{"Tue, 01 Dec 2026 00:00:10 GMT", 10 * time.Second, true},
		{"Mon, 30 Nov 2026 00:00:10 GMT", 0, true},
		{"soon", 0, false},
		{"", 0, false},
		{"-1", 0, false},
	} {
		if got, ok := parseRetryAfter(c.in, now); got != c.want || ok != c.ok {
			t.Errorf("parseRetryAfter(%q) = %s %v, want %s %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// TestPerRegistryConcurrency: with eight images and eight workers, no
// more than PerRegistry requests reach one registry at once.
func TestPerRegistryConcurrency(t *testing.T) {
	fx := fixtures(t)
	var mu sync.Mutex
	inFlight, peak := 0, 0
	host := wrappedRegistry(t, func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if r.Method == http.MethodGet {
			mu.Lock()
			inFlight++
			peak = max(peak, inFlight)
			mu.Unlock()
			time.Sleep(20 * time.Millisecond)
			defer func() { mu.Lock(); inFlight--; mu.Unlock() }()
		}
		next.ServeHTTP(w, r)
	})
	refs := distinctImages(t, host, 8, fx)
	mu.Lock()
	peak = 0
	mu.Unlock()
	opts := testOptions(t)
	opts.Concurrency, opts.PerRegistry = 8, 2
	for r, f := range InspectForAudit(context.Background(), refs, opts) {
		if f.Err != "" {
			t.Errorf("%s: %s", r, f.Err)
		}
	}
	if peak > 2 {
		t.Errorf("%d requests reached the registry at once, PerRegistry is 2", peak)
	}
}

// TestCacheSizeCap: the cache stays under CacheMaxBytes, dropping the
// least recently used results, and is shared by later runs.
func TestCacheSizeCap(t *testing.T) {
	fx := fixtures(t)
	host := wrappedRegistry(t, func(w http.ResponseWriter, r *http.Request, next http.Handler) { next.ServeHTTP(w, r) })
	refs := distinctImages(t, host, 6, fx)
	opts := testOptions(t)
	InspectForAudit(context.Background(), refs[:1], opts)
	one := cacheBytes(t, opts.CacheDir)
	if one == 0 {
		t.Fatal("nothing cached")
	}
	opts.CacheMaxBytes = 3*one + one/2
	for _, r := range refs[1:] {
		InspectForAudit(context.Background(), []ImageRef{r}, opts)
		time.Sleep(10 * time.Millisecond) // distinct modification times
	}
	if got := cacheBytes(t, opts.CacheDir); got > opts.CacheMaxBytes {
		t.Errorf("cache holds %d bytes, cap %d", got, opts.CacheMaxBytes)
	}
	files, _ := filepath.Glob(filepath.Join(opts.CacheDir, "sha256-*.json"))
	if len(files) != 3 {
		t.Errorf("cache holds %d results, want the 3 most recent", len(files))
	}
	last := InspectForAudit(context.Background(), refs[5:], opts)[refs[5].Reference]
	if last.Err != "" || last.MaxGlibc != fx.cDynamicNeed {
		t.Errorf("most recent result: %+v", last)
	}
}

func cacheBytes(t *testing.T, dir string) int64 {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "sha256-*.json"))
	var n int64
	for _, f := range files {
		info, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		n += info.Size()
	}
	return n
}

// BenchmarkInspectForAudit50 audits 50 distinct images from the
// in-process registry, as --inspect-images does for a cluster's host
// installers: cold (empty cache: every layer pulled and read) and warm
// (results cached by digest: manifests only).
func BenchmarkInspectForAudit50(b *testing.B) {
	fx := fixtures(b)
	var mu sync.Mutex
	requests := 0
	host := wrappedRegistry(b, func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		mu.Lock()
		requests++
		mu.Unlock()
		next.ServeHTTP(w, r)
	})
	refs := distinctImages(b, host, 50, fx)
	run := func(b *testing.B, warm bool) {
		dir := b.TempDir()
		opts := testOptions(b)
		opts.CacheDir = dir
		if warm {
			InspectForAudit(context.Background(), refs, opts)
		}
		mu.Lock()
		requests = 0
		mu.Unlock()
		n := 0
		for b.Loop() {
			if !warm {
				os.RemoveAll(dir)
			}
			for r, f := range InspectForAudit(context.Background(), refs, opts) {
				if f.Err != "" {
					b.Fatalf("%s: %s", r, f.Err)
				}
			}
			n++
		}
		b.ReportMetric(float64(len(refs)*n)/b.Elapsed().Seconds(), "images/s")
		mu.Lock()
		b.ReportMetric(float64(requests)/float64(n*len(refs)), "requests/image")
		mu.Unlock()
	}
	b.Run("cold", func(b *testing.B) { run(b, false) })
	b.Run("warm", func(b *testing.B) { run(b, true) })
}

var _ v1.Image // keep the import for helpers that build images
