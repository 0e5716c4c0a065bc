package text

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// TestIndex: one line per finding, most severe first, cut to the width;
// two findings about one DaemonSet are listed under it where the more
// severe falls; a finding about several nodes has no subject of its own
// unless Subject names one.
func TestIndex(t *testing.T) {
	ds := finding.ObjectRef{APIVersion: "apps/v1", Kind: "DaemonSet", Namespace: "kube-system", Name: "agent"}
	n1 := finding.ObjectRef{APIVersion: "v1", Kind: "Node", Name: "n1"}
	n2 := finding.ObjectRef{APIVersion: "v1", Kind: "Node", Name: "n2"}
	r := report.New(snapshot.Source{Type: snapshot.SourceFiles}, nil)
	r.Findings = []finding.Finding{
		{Check: "a", Severity: finding.High, Title: "agent pulls on every start " + strings.Repeat("and more ", 20), Objects: []finding.ObjectRef{ds, n1}},
		{Check: "b", Severity: finding.Critical, Title: "nodes past support", Objects: []finding.ObjectRef{n1, n2}},
		{Check: "c", Severity: finding.Low, Title: "agent without priority", Objects: []finding.ObjectRef{ds}},
		{Check: "d", Severity: finding.Medium, Title: "nodes skewed", Objects: []finding.ObjectRef{n1, n2}},
	}
	r.Finish()
	index := func(o Options) []string {
		var b bytes.Buffer
		o.Width = 60
		if err := Write(&b, r, o); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		start := strings.Index(out, "\nINDEX (4 findings")
		if start < 0 {
			t.Fatalf("no index:\n%s", out)
		}
		block, _, _ := strings.Cut(out[start+1:], "\n\n")
		lines := strings.Split(block, "\n")[1:]
		for _, l := range lines {
			if len([]rune(l)) > 60 {
				t.Errorf("index line of %d columns: %q", len([]rune(l)), l)
			}
		}
		return lines
	}
	got := index(Options{})
	want := []string{"  CRITICAL " + r.Findings[0].ID + " nodes past support",
		"  DaemonSet/kube-system/agent: 2 findings",
		"    HIGH     " + r.Findings[1].ID + " agent pulls on every start…",
		"    LOW      " + r.Findings[3].ID + " agent without priority",
		"  MEDIUM   " + r.Findings[2].ID + " nodes skewed"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("index:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// In a pipe (Whole) no title is cut: it wraps under itself.
	whole := strings.Join(index(Options{Whole: true}), "\n")
	if strings.Contains(whole, "…") || !strings.Contains(strings.Join(strings.Fields(whole), " "), strings.TrimSpace(r.Findings[1].Title)) {
		t.Errorf("index with Whole cut a title:\n%s", whole)
	}
	pool := func(f finding.Finding) string {
		if f.Objects[0].Kind == "Node" {
			return "node pool p1"
		}
		return FirstObject(f)
	}
	got = index(Options{Subject: pool})
	if len(got) != 6 || got[0] != "  node pool p1: 2 findings" || !strings.Contains(got[2], "nodes skewed") {
		t.Errorf("with a pool subject:\n%s", strings.Join(got, "\n"))
	}
}
