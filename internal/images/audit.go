package images

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/kubegap/kubegap/internal/check"
)

// cacheVersion changes when the Report format or the analysis changes, so
// that stale cached results are ignored rather than misread.
const cacheVersion = 3

// cacheEntry is one cached Report. Limits records the limits that shape a
// successful report, so a run with different limits does not reuse it.
type cacheEntry struct {
	Version int     `json:"version"`
	Limits  string  `json:"limits"`
	Report  *Report `json:"report"`
}

// InspectForAudit inspects each image for its platform and returns what
// the checks need, keyed by ImageRef.Reference. An image that cannot be
// inspected gets ImageFacts.Err; nothing here aborts the audit. Results are
// cached on disk by image digest (Options.CacheDir), so a second audit only
// fetches manifests. When one reference is asked for on several platforms,
// its facts are merged: the highest glibc need wins and every need is listed.
func InspectForAudit(ctx context.Context, refs []ImageRef, opts Options) map[string]check.ImageFacts {
	opts = opts.withDefaults()
	cache := cacheDir(opts)
	type job struct {
		ref ImageRef
		rep *Report
		err error
	}
	var jobs []*job
	seen := map[ImageRef]*job{}
	for _, r := range refs {
		if r.Platform == "" {
			r.Platform = DefaultPlatform
		}
		key := ImageRef{Reference: r.Reference, Platform: r.Platform}
		if j := seen[key]; j != nil {
			// Asked for in full once: in full.
			j.ref.ManifestOnly = j.ref.ManifestOnly && r.ManifestOnly
			continue
		}
		j := &job{ref: r}
		seen[key] = j
		jobs = append(jobs, j)
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, opts.Concurrency)
	// A registry's own slot is taken before a global one, so images
	// waiting on a busy registry never hold slots others could use.
	perRegistry := map[string]chan struct{}{}
	for _, j := range jobs {
		host := registryOf(j.ref.Reference)
		if perRegistry[host] == nil {
			perRegistry[host] = make(chan struct{}, opts.PerRegistry)
		}
		regSem := perRegistry[host]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, s := range []chan struct{}{regSem, sem} {
				select {
				case s <- struct{}{}:
					defer func() { <-s }()
				case <-ctx.Done():
					j.err = ctx.Err()
					return
				}
			}
			j.rep, j.err = inspectCached(ctx, j.ref, cache, opts)
		}()
	}
	wg.Wait()

	out := map[string]check.ImageFacts{}
	for _, j := range jobs {
		f := check.ImageFacts{Image: j.ref.Reference}
		if j.err != nil {
			f.Err = oneLine(j.err.Error())
		} else {
			f = j.rep.Facts()
			f.Image = j.ref.Reference
		}
		if prev, ok := out[j.ref.Reference]; ok {
			f = mergeFacts(prev, f, j.ref.Platform)
		}
		out[j.ref.Reference] = f
	}
	return out
}

// inspectCached resolves the image digest (manifests only), then answers
// from the cache or inspects and stores the result.
func inspectCached(ctx context.Context, ref ImageRef, cache string, opts Options) (*Report, error) {
	plat, err := ParsePlatform(ref.Platform)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	res, err := openRemote(ctx, ref.Reference, plat, opts)
	if err != nil {
		return nil, timeoutErr(ctx, opts, err)
	}
	if res.schema1 {
		// Nothing to cache: the manifest was the whole inspection.
		return schema1Report(ref.Reference, plat, res), nil
	}
	file := ""
	if cache != "" {
		file = filepath.Join(cache, strings.ReplaceAll(res.digest.String(), ":", "-")+".json")
		if r := readCache(file, res.digest.String(), opts); r != nil {
			r.Reference = printable(ref.Reference)
			// The file's time orders eviction: recently used stays.
			now := time.Now()
			_ = os.Chtimes(file, now, now)
			return r, nil
		}
	}
	if ref.ManifestOnly {
		// Not cached: it would stand in for a full result it is not.
		return manifestReport(ref.Reference, plat, res), nil
	}
	r, err := inspectResolved(ctx, ref.Reference, plat, res, opts)
	if err != nil {
		return nil, err
	}
	if file != "" {
		// A cache that cannot be written costs a pull next time, nothing more.
		if writeCache(file, r, opts) == nil {
			pruneCache(cache, opts.CacheMaxBytes)
		}
	}
	return r, nil
}

// registryOf names the registry of an image reference ("" when it does
// not parse; such a reference fails on its own).
func registryOf(ref string) string {
	r, err := name.ParseReference(ref)
	if err != nil {
		return ""
	}
	return r.Context().RegistryStr()
}

// cacheMu serialises pruning within a process; across processes the
// worst case is two of them deleting the same old file.
var cacheMu sync.Mutex

// pruneCache deletes the least recently used results until the cache's
// result files fit in maxBytes.
func pruneCache(dir string, maxBytes int64) {
	cacheMu.Lock()
	defer cacheMu.Unlock()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type item struct {
		path string
		size int64
		mod  time.Time
	}
	var items []item
	var total int64
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "sha256-") || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		items = append(items, item{filepath.Join(dir, e.Name()), info.Size(), info.ModTime()})
		total += info.Size()
	}
	slices.SortFunc(items, func(a, b item) int { return a.mod.Compare(b.mod) })
	for _, it := range items {
		if total <= maxBytes {
			break
		}
		if os.Remove(it.path) == nil {
			total -= it.size
		}
	}
}

// cacheDir returns the cache directory, or "" when caching is off.
func cacheDir(opts Options) string {
	switch opts.CacheDir {
	case "-":
		return ""
	case "":
		base, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		return filepath.Join(base, "kubegap", "images")
	}
	return opts.CacheDir
}

func limitsKey(opts Options) string {
	return fmt.Sprintf("file=%d,payload=%d,payloads=%d", opts.MaxFileBytes, opts.MaxPayloadBytes, opts.MaxPayloads)
}

func readCache(file, digest string, opts Options) *Report {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	var e cacheEntry
	if err := json.Unmarshal(b, &e); err != nil || e.Version != cacheVersion || e.Limits != limitsKey(opts) || e.Report == nil || e.Report.Digest != digest {
		return nil
	}
	return e.Report
}

// writeCache stores r atomically: a reader never sees half a file.
func writeCache(file string, r *Report, opts Options) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return fmt.Errorf("creating image cache: %w", err)
	}
	b, err := json.Marshal(cacheEntry{Version: cacheVersion, Limits: limitsKey(opts), Report: r})
	if err != nil {
		return fmt.Errorf("encoding cache entry: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".tmp-*")
	if err != nil {
		return fmt.Errorf("writing image cache: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("writing image cache: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing image cache: %w", err)
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		return fmt.Errorf("writing image cache: %w", err)
	}
	return nil
}

// Facts is what the audit's host-binary-glibc check needs: what binaries
// this image may install on a host require from it — glibc, libstdc++,
// a musl loader, an unusual loader path. Only host candidates count (see
// hostCandidate): a distro base image's own programs run inside the
// container against the image's libraries, and counting them would flag
// every installer built on Debian or Azure Linux. Static and static-pie
// programs need nothing and are not listed.
func (r *Report) Facts() check.ImageFacts {
	f := check.ImageFacts{Image: r.Reference, Digest: r.Digest, ShippedGlibc: r.ShippedGlibc,
		MediaType: r.MediaType, LayersRead: r.LayersRead, Java: slices.Clone(r.Java)}
	for _, h := range r.hostBinaries() {
		if !hostCandidate(h.path) {
			continue
		}
		b := h.bin
		var needs []string
		switch b.Linkage {
		case LinkGlibc, LinkGlibcUnversioned:
			if CompareVersions(b.MinGlibc, f.MaxGlibc) > 0 {
				f.MaxGlibc = b.MinGlibc
			}
			if b.MinGlibc == "" {
				needs = append(needs, "glibc (no versioned symbols)")
			} else {
				needs = append(needs, "GLIBC_"+b.MinGlibc)
			}
		case LinkMusl:
			f.Musl = append(f.Musl, h.path+": musl, loader "+orNone(b.Interpreter))
			needs = append(needs, "musl loader "+orNone(b.Interpreter))
		}
		if b.MinGlibcxx != "" {
			needs = append(needs, "GLIBCXX_"+b.MinGlibcxx)
			if CompareVersions(b.MinGlibcxx, f.MaxGlibcxx) > 0 {
				f.MaxGlibcxx = b.MinGlibcxx
			}
		}
		if b.MinCxxabi != "" {
			needs = append(needs, "CXXABI_"+b.MinCxxabi)
			if CompareVersions(b.MinCxxabi, f.MaxCxxabi) > 0 {
				f.MaxCxxabi = b.MinCxxabi
			}
		}
		if b.Interpreter != "" && !slices.Contains(f.Interpreters, b.Interpreter) {
			f.Interpreters = append(f.Interpreters, b.Interpreter)
		}
		if b.Go != nil && b.Go.SystemCrypto {
			needs = append(needs, "libcrypto via dlopen")
		}
		if len(needs) > 0 && b.Linkage != LinkMusl {
			f.Executables = append(f.Executables, h.path+": "+strings.Join(needs, ", "))
		}
	}
	slices.Sort(f.Interpreters)
	return f
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// hostBinary is an executable or embedded payload with the path the
// audit names it by.
type hostBinary struct {
	path string
	bin  *Binary
}

// hostBinaries lists executables and analysed payloads, highest glibc
// need first, then by path (the order GlibcNeeds uses), so the evidence
// leads with what matters.
func (r *Report) hostBinaries() []hostBinary {
	var out []hostBinary
	for i := range r.Executables {
		e := &r.Executables[i]
		out = append(out, hostBinary{e.Path, &e.Binary})
		for j := range e.Payloads {
			if p := &e.Payloads[j]; p.Binary != nil && p.Binary.Class != ClassObject {
				out = append(out, hostBinary{e.Path + "!" + p.Name, p.Binary})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b hostBinary) int {
		if c := CompareVersions(b.bin.MinGlibc, a.bin.MinGlibc); c != 0 {
			return c
		}
		return strings.Compare(a.path, b.path)
	})
	return out
}

// systemDirs hold the programs and libraries of an image's base OS.
var systemDirs = []string{"/bin/", "/sbin/", "/lib/", "/lib32/", "/lib64/", "/libx32/",
	"/usr/bin/", "/usr/sbin/", "/usr/lib/", "/usr/lib32/", "/usr/lib64/", "/usr/libexec/", "/usr/share/"}

// hostCandidate is true for an executable an installer may copy onto a
// host: a payload embedded in another binary (the dropgz pattern, whatever
// the carrier's path), or a program outside the base OS's directories
// (/opt/cni/bin/..., /usr/local/bin/..., /app/...).
func hostCandidate(path string) bool {
	if strings.Contains(path, "!") {
		return true
	}
	for _, d := range systemDirs {
		if strings.HasPrefix(path, d) {
			return false
		}
	}
	return true
}

// mergeFacts combines one reference's facts across platforms.
func mergeFacts(a, b check.ImageFacts, plat string) check.ImageFacts {
	if CompareVersions(b.MaxGlibc, a.MaxGlibc) > 0 {
		a.MaxGlibc = b.MaxGlibc
	}
	if CompareVersions(b.MaxGlibcxx, a.MaxGlibcxx) > 0 {
		a.MaxGlibcxx = b.MaxGlibcxx
	}
	if CompareVersions(b.MaxCxxabi, a.MaxCxxabi) > 0 {
		a.MaxCxxabi = b.MaxCxxabi
	}
	union := func(dst, src []string) []string {
		for _, e := range src {
			if !slices.Contains(dst, e) {
				dst = append(dst, e)
			}
		}
		return dst
	}
	a.Executables = union(a.Executables, b.Executables)
	a.Musl = union(a.Musl, b.Musl)
	a.Interpreters = union(a.Interpreters, b.Interpreters)
	if a.MediaType == "" {
		a.MediaType = b.MediaType
	}
	// Files are known only when every platform's layers were read.
	a.LayersRead = a.LayersRead && b.LayersRead
	for _, j := range b.Java {
		if !slices.Contains(a.Java, j) {
			a.Java = append(a.Java, j)
		}
	}
	if a.Digest != b.Digest && b.Digest != "" {
		a.Digest = strings.TrimPrefix(a.Digest+","+b.Digest, ",")
	}
	if b.Err != "" {
		a.Err = strings.TrimPrefix(a.Err+"; "+plat+": "+b.Err, "; ")
	}
	return a
}

// oneLine folds an error message onto one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
