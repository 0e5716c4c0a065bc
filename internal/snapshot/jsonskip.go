package snapshot

import (
	"bufio"
	"os"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// jsonSkipReason says why a JSON file found in a directory is not
// Kubernetes input (a package.json, .mcp.json or tsconfig.json beside
// manifests), or "" when it is or may be: a file that is not JSON, or
// whose first top-level object names apiVersion or kind, or has the shape
// of kubectl version output. It reads the first object's keys only up to
// the first of those, so a kubectl List (apiVersion first) or typed list
// (kind first) costs a few bytes. Gzip is left to the loader.
func jsonSkipReason(path string) string {
	if !strings.HasSuffix(strings.ToLower(path), ".json") {
		return "" // YAML may open with a flow mapping, which is not JSON
	}
	f, err := os.Open(path)
	if err != nil {
		return "" // the loader reports it
	}
	defer f.Close()
	br := decodeBOM(bufio.NewReaderSize(f, 64<<10))
	first, err := firstByte(br)
	if err != nil || first != '{' && first != '[' {
		return ""
	}
	if first == '[' {
		return "a JSON array, not Kubernetes objects"
	}
	dec := jsontext.NewDecoder(br)
	if _, err := dec.ReadToken(); err != nil {
		return ""
	}
	for {
		t, err := dec.ReadToken()
		if err != nil {
			return "not Kubernetes objects (not valid JSON, and no apiVersion or kind before " +
				strings.Join(strings.Fields(err.Error()), " ") + ")"
		}
		if t.Kind() == '}' {
			return "not a Kubernetes object (JSON with no top-level apiVersion and kind)"
		}
		switch t.String() {
		case "apiVersion", "kind", "clientVersion", "serverVersion":
			return ""
		}
		if err := dec.SkipValue(); err != nil {
			return "not Kubernetes objects (not valid JSON, and no apiVersion or kind before " +
				strings.Join(strings.Fields(err.Error()), " ") + ")"
		}
	}
}
