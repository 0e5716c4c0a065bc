package markdown

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/report/reporttest"
)

// TestCaseRelationInWords: a cited case is introduced by what the check
// does for it, and a finding without links still names its case.
func TestCaseRelationInWords(t *testing.T) {
	for rel, words := range map[finding.Relation]string{finding.Prevents: "this is the gap behind",
		finding.Detects: "symptoms match", finding.Related: "same mechanism as"} {
		r := reporttest.Edges()
		r.Findings[0].CaseLinks = []finding.CaseLink{{ID: r.Findings[0].Cases[0], Relation: rel}}
		var b bytes.Buffer
		if err := Write(&b, r); err != nil {
			t.Fatal(err)
		}
		if out := b.String(); !strings.Contains(strings.Join(strings.Fields(out), " "), words) {
			t.Errorf("%s: output lacks %q:\n%s", rel, words, out)
		}
	}
	var b bytes.Buffer
	r := reporttest.Edges()
	if err := Write(&b, r); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); strings.Contains(out, "this is the gap behind") || !strings.Contains(out, r.Findings[0].Cases[0]) {
		t.Errorf("without links: want the case named and no relation words:\n%s", out)
	}
}
