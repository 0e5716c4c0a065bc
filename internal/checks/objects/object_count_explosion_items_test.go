package objects

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/evidence"
	"github.com/kubegap/kubegap/internal/finding"
)

// countItemLines is each evidence item of f as its line.
func countItemLines(f finding.Finding) []string {
	var out []string
	for _, it := range f.EvidenceItems {
		out = append(out, it.String())
	}
	return out
}

func countFindingOn(t *testing.T, fs []finding.Finding, kind, name string) finding.Finding {
	t.Helper()
	for _, f := range fs {
		if f.Objects[0].Kind == kind && f.Objects[0].Name == name {
			return f
		}
	}
	t.Fatalf("no finding on %s %s", kind, name)
	return finding.Finding{}
}

// TestObjectCountHistoryItems: the history findings quote the
// Deployment's revisionHistoryLimit as read and its old ReplicaSets'
// replicas and controller, in one group; the items resolve against the
// fixture.
func TestObjectCountHistoryItems(t *testing.T) {
	s := checktest.Load(t, "object-count-explosion/gap")
	fs, _, _ := checktest.Run(t, objectCountExplosionCheck(), s)
	web := countFindingOn(t, fs, "Deployment", "web")
	items := countItemLines(web)
	if len(items) != 2 || items[0] != "Deployment/shop/web: spec.revisionHistoryLimit=3" ||
		!strings.HasPrefix(items[1], "8 ReplicaSets (shop/web-00000, ") ||
		!strings.HasSuffix(items[1], "): spec.replicas=0, metadata.ownerReferences[controller=true].kind=Deployment, "+
			"metadata.ownerReferences[controller=true].name=web") {
		t.Errorf("web: items %q", items)
	}
	if !slices.Contains(web.Evidence, "8 ReplicaSets with spec.replicas 0 controlled by the Deployment") {
		t.Errorf("web: the count of a complete read is a plain count: %q", web.Evidence)
	}
	legacy := countFindingOn(t, fs, "Deployment", "legacy-small")
	if items := countItemLines(legacy); len(items) != 2 || items[0] != "Deployment/shop/legacy-small: spec.revisionHistoryLimit=2147483647" {
		t.Errorf("legacy-small: items %q", items)
	}
	if n := checktest.EvidenceTrue(t, fs, "object-count-explosion/gap"); n < 6 {
		t.Errorf("%d items resolved, want the limit and the ReplicaSets of each of 3 Deployments", n)
	}
}

// TestObjectCountHistoryWithoutReplicaSets: from a Deployments file alone
// the ReplicaSets are unknown, so the finding on a limit that keeps
// everything must not say the Deployment has 0 of them. (It said "0
// ReplicaSets with spec.replicas 0 controlled by the Deployment".)
func TestObjectCountHistoryWithoutReplicaSets(t *testing.T) {
	s := checktest.Load(t, "object-count-explosion/gap/deployments.apps.json")
	fs, _, _ := checktest.Run(t, objectCountExplosionCheck(), s)
	f := countFindingOn(t, fs, "Deployment", "legacy")
	text := strings.Join(append(f.Evidence, f.Message), "\n")
	if strings.Contains(text, "0 ReplicaSets with spec.replicas 0 controlled by the Deployment\n") ||
		strings.Contains(text, "(0 so far)") || !strings.Contains(text, "there may be more") {
		t.Errorf("evidence states a count of unread ReplicaSets as fact:\n%s", text)
	}
	if items := countItemLines(f); !slices.Equal(items, []string{"Deployment/shop/legacy: spec.revisionHistoryLimit=2147483647"}) {
		t.Errorf("items %q", items)
	}
}

// TestObjectCountTerminatedItems: terminated pods and finished Jobs are
// quoted in groups of equal values (phase and reason, controller;
// missing TTL and Complete condition), and the groups resolve against
// the file the pods were loaded from.
func TestObjectCountTerminatedItems(t *testing.T) {
	s, path := writeObjectsFile(t, 5200, 1100, 10)
	fs, _, _ := checktest.Run(t, objectCountExplosionCheck(), s)
	want := map[string][]string{
		"Pod": {
			": status.phase=Failed, status.reason=Evicted",
			": metadata.ownerReferences[controller=true].kind=ReplicaSet, metadata.ownerReferences[controller=true].name=spot-worker",
		},
		"Job": {": spec.ttlSecondsAfterFinished absent, status.conditions[type=Complete].status=True"},
	}
	in, err := evidence.ReadPaths([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		kind := f.Objects[0].Kind
		items := countItemLines(f)
		if len(items) != len(want[kind]) {
			t.Fatalf("%s finding: items %q, want %d", kind, items, len(want[kind]))
		}
		for i, w := range want[kind] {
			count := map[string]string{"Pod": "5200 Pods (", "Job": "1100 Jobs ("}[kind]
			if !strings.HasPrefix(items[i], count) || !strings.HasSuffix(items[i], w) {
				t.Errorf("%s item %d: %q, want %q...%q", kind, i, items[i], count, w)
			}
			if it := f.EvidenceItems[i]; len(it.Objects) != finding.MaxItemObjects || it.More != it.Count()-finding.MaxItemObjects {
				t.Errorf("%s item %d lists %d objects and %d more", kind, i, len(it.Objects), it.More)
			}
		}
		for _, it := range f.EvidenceItems {
			for _, m := range in.Resolve(it) {
				t.Errorf("%s finding: %s", kind, m)
			}
		}
	}
	if len(fs) != 2 {
		t.Errorf("%d findings, want the terminated pods and the finished Jobs", len(fs))
	}
}
