package reporttest

import (
	"html"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"

	"github.com/kubegap/kubegap/internal/library"
	"github.com/kubegap/kubegap/internal/report"
)

// urlPattern finds the absolute URLs in rendered output. "kubegap.dev/"
// without a scheme is an API group or annotation prefix
// (kubegap.dev/v1alpha1, kubegap.dev/ignore), not a link, and does not
// match.
var urlPattern = regexp.MustCompile(`https?://[^\s"'<>()\[\]\\{}|` + "`" + `]+`)

// formatNamespaces are the URLs formats carry as names, not as links a
// reader follows to kubegap's content: schema and namespace identifiers.
var formatNamespaces = []string{
	"https://json.schemastore.org/sarif-2.1.0.json",
	"https://docs.oasis-open.org/sarif/sarif/v2.1.0/",
	"http://www.w3.org/2000/svg",
}

var (
	sourcesOnce sync.Once
	sources     map[string]bool
)

// citedSources are the URLs the repository's data cites as sources: the
// library cases' sources, every URL in the checks' and tables' data files
// (internal/**/*.yaml), which findings quote as their source, the URLs the
// cases' text quotes (library/**/*.yaml), and the URLs
// the checks' own code cites (internal/checks, internal/check,
// internal/owner). The code that builds kubegap's links (report, cli, web,
// mcp) is not read: a link it makes must pass on its own.
func citedSources() map[string]bool {
	sourcesOnce.Do(func() {
		sources = map[string]bool{}
		if lib, err := library.Default(); err == nil {
			for _, c := range lib.Cases() {
				for _, s := range c.Sources {
					sources[s.URL] = true
					sources[strings.ToLower(s.URL)] = true
				}
			}
		}
		_, here, _, _ := runtime.Caller(0)
		root := filepath.Join(filepath.Dir(here), "..", "..")
		// The cases' own text quotes URLs too (an error message naming an
		// endpoint, a page the summary mentions).
		_ = filepath.WalkDir(filepath.Join(root, "..", "library"), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".yaml") {
				addURLs(p)
			}
			return nil
		})
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.Contains(p, string(filepath.Separator)+"testdata"+string(filepath.Separator)) {
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			rel = filepath.ToSlash(rel)
			checkCode := strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") &&
				(strings.HasPrefix(rel, "checks/") || strings.HasPrefix(rel, "check/") || strings.HasPrefix(rel, "owner/"))
			if !strings.HasSuffix(p, ".yaml") && !checkCode {
				return nil
			}
			addURLs(p)
			return nil
		})
	})
	return sources
}

// addURLs adds the URLs of file p to sources, as written and lowercased
// (the site's search index lowercases case text).
func addURLs(p string) {
	b, err := os.ReadFile(p)
	if err != nil {
		return
	}
	for _, u := range urlPattern.FindAllString(string(b), -1) {
		u = strings.TrimRight(u, ".,;:")
		sources[u] = true
		sources[strings.ToLower(u)] = true
	}
}

// ForeignLinks returns the URLs in out that point at a host the repository
// does not control: anything but kubegap's own repository
// (report.RepositoryURL), the bases given (a configured --case-base-url,
// a server's own address), a source the repository's data cites, or a
// format's namespace identifier. kubegap.dev is foreign unless a base
// names it.
func ForeignLinks(out string, bases ...string) []string {
	var foreign []string
	cited := citedSources()
	// HTML and XML write "+" and line breaks as entities.
	for _, u := range urlPattern.FindAllString(html.UnescapeString(out), -1) {
		u = strings.TrimRight(u, ".,;:")
		if allowed(u, cited, bases) {
			continue
		}
		foreign = append(foreign, u)
	}
	return foreign
}

func allowed(u string, cited map[string]bool, bases []string) bool {
	for _, b := range bases {
		if b != "" && strings.HasPrefix(u, strings.SplitN(b, "{id}", 2)[0]) {
			return true
		}
	}
	if u == report.RepositoryURL || strings.HasPrefix(u, report.RepositoryURL+"/") {
		return true
	}
	if strings.Contains(u, "://kubegap.dev") || strings.Contains(u, ".kubegap.dev") {
		return false
	}
	for _, ns := range formatNamespaces {
		if strings.HasPrefix(u, ns) {
			return true
		}
	}
	return cited[u]
}
