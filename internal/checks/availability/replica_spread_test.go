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

// A `kubectl get nodes,deploy,pods -o yaml` dump holds no ReplicaSets:
// the pods reach their Deployment through the ReplicaSet's name and their
// pod-template-hash label, so the finding stands, and says how the pods
// were tied. Complete input without ReplicaSets, and files without
// ReplicaSets or Events, give the same findings; the spread fixture stays
// quiet on each.
func TestReplicaSpreadWithoutReplicaSets(t *testing.T) {
	inputs := map[string]func(string) *snapshot.Snapshot{
		"files, no ReplicaSets": func(f string) *snapshot.Snapshot {
			return checktest.Without(loadFiles(t, f), snapshot.ReplicaSets)
		},
		"files, no ReplicaSets or Events": func(f string) *snapshot.Snapshot {
			return checktest.Without(loadFiles(t, f), snapshot.ReplicaSets, snapshot.Events)
		},
		"complete, no ReplicaSets": func(f string) *snapshot.Snapshot {
			return checktest.Without(checktest.Complete(loadFiles(t, f)), snapshot.ReplicaSets)
		},
	}
	for name, load := range inputs {
		t.Run(name, func(t *testing.T) {
			fs, _ := runOn(t, replicaSpreadCheck(), load("replica-spread/gap.json"))
			expect(t, fs, []want{
				{"Deployment", "shop", "api", "runs on node node-a", finding.Medium, caseMoonlight},
				{"StatefulSet", "db", "pg", "runs in zone zone-1", finding.Low, caseMoonlight},
			})
			for _, f := range fs {
				ev := strings.Join(f.Evidence, "\n")
				if f.Objects[0].Name == "api" && !strings.Contains(ev, "ReplicaSet api-7d9f is not in the input") {
					t.Errorf("api evidence should say how its pods were tied without the ReplicaSet: %s", ev)
				}
			}
			fs, _ = runOn(t, replicaSpreadCheck(), load("replica-spread/clean.json"))
			expect(t, fs, nil)
		})
	}
}

// critical-addon-colocation ties pods by the workload's selector, so the
// issue's repro (both CoreDNS replicas on one node, from a dump with no
// ReplicaSets) is reported from files as from complete input.
func TestColocationWithoutReplicaSets(t *testing.T) {
	for _, complete := range []bool{false, true} {
		s := loadFiles(t, "replica-spread/gap.json")
		if complete {
			checktest.Complete(s)
		}
		fs, _ := runOn(t, criticalAddonColocationCheck(), checktest.Without(s, snapshot.ReplicaSets, snapshot.Events))
		if !checktest.HasObject(fs, "Deployment", "kube-system", "coredns") {
			t.Errorf("complete %v: CoreDNS on one node not reported without ReplicaSets: %v", complete, fs)
		}
	}
}

// status.readyReplicas stands in for the pods a dump lacks: the
// controllers of CoreDNS and shop/api count 2 ready of 3, and both ready
// pods are in the input, so their placement is known and judged; shop/web
// carries no status, so its missing pod may be ready elsewhere and it
// stays unknown. The spread fixture is quiet.
func TestStatusReadyStandsInForPods(t *testing.T) {
	// Complete input without its ReplicaSets: the pods are complete, so
	// CoreDNS is judged either way.
	fs, _ := runOn(t, criticalAddonColocationCheck(), checktest.Without(checktest.Complete(loadFiles(t, "status-counts/gap.yaml")), snapshot.ReplicaSets))
	expect(t, fs, []want{{"Deployment", "kube-system", "coredns", "runs on node node-0", finding.High, caseOrbos}})
	for _, drop := range [][]snapshot.Resource{{snapshot.ReplicaSets}, {snapshot.ReplicaSets, snapshot.Events}} {
		s := checktest.Without(loadFiles(t, "status-counts/gap.yaml"), drop...)
		fs, ctx := runOn(t, criticalAddonColocationCheck(), s)
		expect(t, fs, []want{{"Deployment", "kube-system", "coredns", "runs on node node-0", finding.High, caseOrbos}})
		if !strings.Contains(strings.Join(fs[0].Evidence, "\n"), "status.readyReplicas 2") {
			t.Errorf("coredns evidence should say the status count stood in: %v", fs[0].Evidence)
		}
		if len(ctx.Notes()) != 0 {
			t.Errorf("colocation notes %v", ctx.Notes())
		}
		fs, ctx = runOn(t, replicaSpreadCheck(), checktest.Without(loadFiles(t, "status-counts/gap.yaml"), drop...))
		expect(t, fs, []want{{"Deployment", "shop", "api", "runs on node node-1", finding.Medium, caseMoonlight}})
		if n, ok := ctx.Notes()[ruleSpreadNode]; !ok || !strings.Contains(n.Reason, "shop/web") || strings.Contains(n.Reason, "shop/api") {
			t.Errorf("want shop/web unknown and shop/api judged, got %v", ctx.Notes())
		}
		for _, c := range []func() (string, []finding.Finding){
			func() (string, []finding.Finding) {
				fs, _ := runOn(t, criticalAddonColocationCheck(), checktest.Without(loadFiles(t, "status-counts/clean.yaml"), drop...))
				return "colocation", fs
			},
			func() (string, []finding.Finding) {
				fs, _ := runOn(t, replicaSpreadCheck(), checktest.Without(loadFiles(t, "status-counts/clean.yaml"), drop...))
				return "spread", fs
			},
		} {
			if name, fs := c(); len(fs) != 0 {
				t.Errorf("%s on the spread fixture: %v", name, fs)
			}
		}
	}
}
