package upgrade

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check"
)

// TestNewestKnownMinorBoundsTheTables: no row of either table names a
// minor past the newest target they judge, whether read through the
// parsed rows or as any quoted "1.N" in the files.
func TestNewestKnownMinorBoundsTheTables(t *testing.T) {
	newest, err := NewestKnownMinor()
	if err != nil {
		t.Fatal(err)
	}
	tabled, err := newestTabled()
	if err != nil {
		t.Fatal(err)
	}
	if newest.Less(tabled) || tabled.Minor < 35 {
		t.Fatalf("NewestKnownMinor %s, newest tabled minor %s: a row is past the judged range, or the rows were not read",
			newest.MinorString(), tabled.MinorString())
	}
	quoted := regexp.MustCompile(`"(1\.[0-9]+)"`)
	for name, data := range map[string][]byte{"upgrade-facts.yaml": factsYAML, "addon-compat.yaml": addonCompatYAML} {
		for _, m := range quoted.FindAllSubmatch(data, -1) {
			if v, ok := check.ParseKubeVersion(string(m[1])); ok && newest.Less(v) {
				t.Errorf("%s names %s, past NewestKnownMinor %s", name, m[1], newest.MinorString())
			}
		}
	}
	// The parser refuses a file without the bound.
	if _, err := parseFacts(regexp.MustCompile(`(?s)judgesTargetsThrough:.*?README.md\n`).ReplaceAll(factsYAML, nil)); err == nil {
		t.Error("upgrade-facts.yaml without judgesTargetsThrough parsed")
	}
}

// TestPreflightDocNamesNewestKnownMinor keeps docs/preflight.md's
// statement of the newest target true as the tables grow.
func TestPreflightDocNamesNewestKnownMinor(t *testing.T) {
	newest, err := NewestKnownMinor()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "preflight.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := newest.MinorString() + " in this release"; !strings.Contains(strings.Join(strings.Fields(string(doc)), " "), want) {
		t.Errorf("docs/preflight.md does not say %q", want)
	}
}
