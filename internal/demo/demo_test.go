package demo

import (
	"testing"

	"github.com/kubegap/kubegap/internal/snapshot"
)

// TestSnapshot: the demo loads through the offline loader, stands for a
// whole live read, and holds the objects of the founding Azure report.
func TestSnapshot(t *testing.T) {
	s, err := Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if s.Source.Type != snapshot.SourceDemo || s.Source.ServerVersion != ServerVersion {
		t.Errorf("source = %+v", s.Source)
	}
	for _, r := range snapshot.Known() {
		if c := s.Status(r); c.Status != snapshot.StatusRead {
			t.Errorf("%s coverage = %s, want read", r, c.Status)
		}
	}
	ix := s.Index()
	if ix.Node("aks-fips2004-10000001") == nil || len(s.CustomObjects(snapshot.NetworkAttachmentDefinitions)) == 0 {
		t.Error("the demo lacks its Ubuntu 20.04 nodes or its NetworkAttachmentDefinition")
	}
	found := false
	for _, ds := range s.DaemonSets {
		found = found || ds.Namespace == "kube-system" && ds.Name == "azure-cns"
	}
	if !found {
		t.Error("the demo lacks DaemonSet kube-system/azure-cns")
	}
}

// TestImageFacts: the demo's stand-in inspection parses and says what it
// read. That it covers every workload image is TestFailOnUnknown's (cli):
// an image without facts leaves the image checks partial on the demo.
func TestImageFacts(t *testing.T) {
	facts, err := ImageFacts()
	if err != nil {
		t.Fatal(err)
	}
	if len(facts) == 0 {
		t.Fatal("no demo image facts")
	}
	for img, f := range facts {
		if f.MediaType == "" {
			t.Errorf("%s: facts %+v, want a media type", img, f)
		}
	}
}

// TestWriteLatency: the demo's /metrics holds single-object write latency
// as a real API server exports it, enough writes of a pair for
// api-write-latency to judge (its floor is 1,000) and every pair inside the
// 1s SLO, so the demo report has the check pass rather than unknown (that
// it passes, and no check is unknown, is TestFailOnUnknown's in cli).
func TestWriteLatency(t *testing.T) {
	s, err := Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	judged := 0
	for _, w := range s.WriteLatency {
		if w.Count >= 1000 {
			judged++
		}
		if w.Within1s > w.Count || w.Count-w.Within1s > w.Count/100 {
			t.Errorf("%s: %v of %v within 1s, want at least 99%%", w.SeriesName(), w.Within1s, w.Count)
		}
	}
	if judged == 0 {
		t.Errorf("%d write-latency series, none with 1,000 writes", len(s.WriteLatency))
	}
}
