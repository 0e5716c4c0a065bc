package checks

import (
	"github.com/kubegap/kubegap/internal/check/checktest"
	"testing"
	"time"

	"github.com/kubegap/kubegap/internal/checks/versions"
	"github.com/kubegap/kubegap/internal/demo"
	"github.com/kubegap/kubegap/internal/finding"
)

// TestFindingsStableAcrossDays audits the same cluster (the demo, which
// shows every check's gaps) on two days: every finding keeps its ID, title
// and message. Values that grow by themselves, such as ages, may change
// only in the evidence.
func TestFindingsStableAcrossDays(t *testing.T) {
	s, err := demo.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	audit := func(now time.Time) map[string]finding.Finding {
		out := map[string]finding.Finding{}
		for _, c := range All() {
			if c.ID == "node-os-lifecycle" {
				c = versions.NodeOSLifecycleAt(func() time.Time { return now })
			}
			fs, _, _ := checktest.Run(t, c, s)
			for _, f := range fs {
				if f.Check == "" {
					f.Check = c.ID
				}
				id := finding.StableID(f)
				if _, dup := out[id]; dup {
					t.Errorf("two findings share ID %s: %q", id, f.Title)
				}
				out[id] = f
			}
		}
		return out
	}
	first, next := audit(day), audit(day.AddDate(0, 0, 1))
	if len(first) < 10 {
		t.Fatalf("the demo gave %d findings", len(first))
	}
	evidenceMoved := false
	for id, a := range first {
		b, ok := next[id]
		if !ok {
			t.Errorf("finding %s (%q) has another ID a day later", id, a.Title)
			continue
		}
		if a.Title != b.Title || a.Message != b.Message {
			t.Errorf("finding %s changed by itself:\n%q\n%q\n%q\n%q", id, a.Title, b.Title, a.Message, b.Message)
		}
		for i := range a.Evidence {
			evidenceMoved = evidenceMoved || i < len(b.Evidence) && a.Evidence[i] != b.Evidence[i]
		}
	}
	if len(next) != len(first) {
		t.Errorf("%d findings, then %d", len(first), len(next))
	}
	if !evidenceMoved {
		t.Error("no age moved in the evidence: the test no longer covers what changes by itself")
	}
}
