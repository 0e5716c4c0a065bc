package availability

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// testdata/replica-spread: three nodes in two zones. gap.json: Deployment
// shop/api's three replicas (no CPU request) all on node-a, StatefulSet
// db/pg's two on node-a and node-b of zone-1, CoreDNS on node-a (left to
// critical-addon-colocation). clean.json: the same, spread.

func TestReplicaSpreadGap(t *testing.T) {
	fs, ctx := run(t, replicaSpreadCheck(), "replica-spread/gap.json", true)
	expect(t, fs, []want{
		{"Deployment", "shop", "api", "runs on node node-a", finding.Medium, caseMoonlight},
		{"StatefulSet", "db", "pg", "runs in zone zone-1", finding.Low, caseMoonlight},
	})
	for _, f := range fs {
		ev := strings.Join(f.Evidence, "\n")
		if f.Objects[0].Name == "api" && (!strings.Contains(ev, "without a CPU request") || !strings.Contains(ev, "api-7d9f-2")) {
			t.Errorf("api evidence should name the pods and the missing CPU request: %s", ev)
		}
	}
	if n := ctx.Notes(); len(n) != 0 {
		t.Errorf("notes %v", n)
	}
}

func TestReplicaSpreadClean(t *testing.T) {
	checktest.Quiet(t, replicaSpreadCheck(), checktest.Complete(checktest.Load(t, "replica-spread/clean.json")))
}

// From files, workloads whose ready pods reach spec.replicas are still
// judged; one with a pod missing is unknown, never spread.
func TestReplicaSpreadFiles(t *testing.T) {
	s := loadFiles(t, "replica-spread/gap.json")
	s.Pods = slices.DeleteFunc(s.Pods, func(p snapshot.Pod) bool { return p.Name == "api-7d9f-0" })
	s.Finish() // rebuild the index over the shortened list
	fs, ctx := runOn(t, replicaSpreadCheck(), s)
	expect(t, fs, []want{{"StatefulSet", "db", "pg", "runs in zone zone-1", finding.Low, caseMoonlight}})
	if n, ok := ctx.Notes()[ruleSpreadNode]; !ok || !strings.Contains(n.Reason, "shop/api") {
		t.Errorf("want the one-node rule partial for shop/api, got %v", ctx.Notes())
	}
}
