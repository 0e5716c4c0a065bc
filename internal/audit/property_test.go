package audit_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/audit"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/demo"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// foundingFixtures are the fixture directories of the founding checks,
// judged here whole and file by file since they sat in
// internal/checks/testdata, before those checks moved to their area
// packages (the other area fixtures are judged file by file: allInputs).
var foundingFixtures = []string{
	"availability/testdata/pdb-blocks-drain", "availability/testdata/webhook-blast-radius",
	"registries/testdata/image-pull-always",
	"runtime/testdata/containerd-chained-cni", "runtime/testdata/host-binary-glibc", "runtime/testdata/pod-sandbox-failures",
	"versions/testdata/node-os-lifecycle", "versions/testdata/version-skew",
}

// inputs are the demo cluster and the fixtures of internal/checks/testdata
// and of the founding checks, each directory whole and each file alone.
func inputs(t *testing.T) map[string]func() (*snapshot.Snapshot, error) {
	t.Helper()
	out := map[string]func() (*snapshot.Snapshot, error){"demo": demo.Snapshot}
	dirs, err := filepath.Glob(filepath.Join("..", "checks", "testdata", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range foundingFixtures {
		if st, err := os.Stat(filepath.Join("..", "checks", d)); err != nil || !st.IsDir() {
			t.Fatalf("founding fixture directory %s: %v", d, err)
		}
		dirs = append(dirs, filepath.Join("..", "checks", d))
	}
	// Each managed-cluster fixture is a cluster of its own.
	managed, _ := filepath.Glob(filepath.Join("..", "checks", "testdata", "managed", "*"))
	managed = slices.DeleteFunc(managed, func(d string) bool { return filepath.Base(d) == "gen" })
	dirs = append(slices.DeleteFunc(dirs, func(d string) bool { return filepath.Base(d) == "managed" }), managed...)
	for _, dir := range dirs {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		out[filepath.Base(dir)] = func() (*snapshot.Snapshot, error) { return snapshot.LoadPaths([]string{dir}) }
		files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
		for _, f := range files {
			out[filepath.Base(dir)+"/"+filepath.Base(f)] = func() (*snapshot.Snapshot, error) { return snapshot.LoadPaths([]string{f}) }
		}
	}
	return out
}

// allInputs are inputs and the area packages' fixtures, each file alone:
// several of them are halves of one cluster (nodes.yaml and gap.yaml),
// and a half is the partial dump a user pastes.
func allInputs(t *testing.T) map[string]func() (*snapshot.Snapshot, error) {
	t.Helper()
	out := inputs(t)
	areaFiles, _ := filepath.Glob(filepath.Join("..", "checks", "*", "testdata", "*", "*.*"))
	top, _ := filepath.Glob(filepath.Join("..", "checks", "*", "testdata", "*.*"))
	for _, f := range append(areaFiles, top...) {
		if ext := filepath.Ext(f); ext != ".yaml" && ext != ".json" {
			continue
		}
		rel, _ := filepath.Rel(filepath.Join("..", "checks"), f)
		if slices.Contains(foundingFixtures, filepath.ToSlash(filepath.Dir(rel))) {
			continue // in inputs already, by its directory's name
		}
		out[rel] = func() (*snapshot.Snapshot, error) { return snapshot.LoadPaths([]string{f}) }
	}
	return out
}

// involves reports whether a finding's objects or evidence touch r: then
// losing it when r is gone is right.
func involves(f finding.Finding, r snapshot.Resource) bool {
	for _, o := range f.Objects {
		if o.Kind == r.Kind {
			return true
		}
	}
	for _, e := range f.Evidence {
		if strings.Contains(e, r.Kind) || strings.Contains(strings.ToLower(e), r.Resource) {
			return true
		}
	}
	return false
}

// key names what a finding is about: its check and its first object. With
// less input the same gap may be told with less detail (no crash loop seen
// without the ReplicaSets that tie pods to their Deployment), which is not
// a lost finding.
func key(f finding.Finding) string {
	return f.Check + "|" + f.Objects[0].String()
}

// TestRemovingAKindNeverPassesOrHidesFindings is the acceptance property of
// the evidence model: removing any one resource kind from the input never
// turns a fail into a pass, and never loses a finding whose objects and
// evidence do not involve the removed kind.
func TestRemovingAKindNeverPassesOrHidesFindings(t *testing.T) {
	all := checks.All()
	for name, load := range inputs(t) {
		s, err := load()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		base := audit.Run(s, all, audit.Options{})
		for _, r := range snapshot.Known() {
			if s.Count(r) == 0 {
				continue
			}
			cut, err := load()
			if err != nil {
				t.Fatal(err)
			}
			cut.Drop(r)
			got := audit.Run(cut, all, audit.Options{})
			for i, c := range base.Checks {
				if c.Status == report.Fail && got.Checks[i].Status == report.Pass {
					t.Errorf("%s without %s: %s turned from fail to pass", name, r, c.ID)
				}
				if got.Checks[i].Status == report.Pass && c.Status != report.Pass {
					t.Errorf("%s without %s: %s passes, but %s with it", name, r, c.ID, c.Status)
				}
			}
			var kept []string
			for _, f := range got.Findings {
				kept = append(kept, key(f))
			}
			for _, f := range base.Findings {
				if !slices.Contains(kept, key(f)) && !involves(f, r) {
					t.Errorf("%s without %s: lost %s finding %q on %s", name, r, f.Check, f.Title, f.Objects[0])
				}
			}
		}
	}
}

// TestAddingAKindNeverRemovesFindings is the other half: what present
// objects prove stays proven when more objects of the same cluster come.
// For every input and every kind it holds, the findings of the input
// without that kind are all among the findings of the whole input (by
// check and first object): adding the kind back, as a fuller dump of the
// same cluster would, never takes a finding away. The inferences of
// issue 22 (a pod tied to its Deployment without its ReplicaSet, the
// scheduler's verdict without the Nodes, status counts without pods) are
// what keep findings made from the smaller input true of the larger.
func TestAddingAKindNeverRemovesFindings(t *testing.T) {
	all := checks.All()
	used := map[string]bool{}
	for name, load := range allInputs(t) {
		s, err := load()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		whole := audit.Run(s, all, audit.Options{}).Findings
		for _, r := range snapshot.Known() {
			if s.Count(r) == 0 {
				continue
			}
			less, err := load()
			if err != nil {
				t.Fatal(err)
			}
			less.Drop(r)
			for _, f := range audit.Run(less, all, audit.Options{}).Findings {
				if sameGap(f, whole) {
					continue
				}
				if _, known := lessIsMore[f.Check+"|"+r.String()]; known {
					used[f.Check+"|"+r.String()] = true
					continue
				}
				t.Errorf("%s: adding its %s removes %s finding %q on %s", name, r, f.Check, f.Title, f.Objects[0])
			}
		}
	}
	for k := range lessIsMore {
		if !used[k] {
			t.Errorf("lessIsMore lists %s, which no fixture shows any more: remove it", k)
		}
	}
}

// lessIsMore are the checks that, by design, judge an open world from
// what is there and say so: the kind they are reported without can clear
// the finding when it comes. Each is a finding on partial input that the
// kind's objects may disprove, by check and kind, with why.
var lessIsMore = map[string]string{
	"ingress-controller-resilience|autoscaling/v2/horizontalpodautoscalers": "spec.replicas=1 is judged without the HPAs; an HPA with minReplicas 2 or more in the input (a manifest the HPA has not scaled yet) clears it",
	"api-heavy-node-agents|apps/v1/deployments":                             "without Deployments no Typha is seen, so calico-node is reported as one that may list cluster-wide; a Typha Deployment clears it",
	"webhook-blast-radius|v1/namespaces":                                    "without Namespaces a webhook's exclusion of kube-system is judged from its selector alone; the namespaces' labels may show it excluded",
	"unrequested-memory|v1/nodes":                                           "without Nodes every pod counts in one no-pool group; the nodes split the pods into pools that may each stay under the threshold",
	"image-pull-always|v1/nodes":                                            "without Nodes a DaemonSet without status is reported on an unknown number of nodes; the Nodes may show that its selection matches none, and a DaemonSet on no node pulls nothing",
	"version-skew|v1/pods":                                                  "its fixture directory holds several clusters: without their kube-apiserver pods the newest kubelet stands in for the control plane, with them the oldest apiserver image does",
	"ingress-nginx-legacy-tls|v1/configmaps":                                "without the ConfigMap a controller before 0.27.0 names, whether it pins ssl-ciphers is unknown and the finding says so (title and evidence); the ConfigMap, when it sets ssl-ciphers, clears it",
}

// sameGap reports whether fs holds a finding of f's check about one of
// f's objects: with more input a gap may be told of more objects, or
// under the workload its pods were tied to (a ReplicaSet's Deployment),
// which is not a lost finding.
func sameGap(f finding.Finding, fs []finding.Finding) bool {
	for _, g := range fs {
		if g.Check != f.Check {
			continue
		}
		for _, o := range f.Objects {
			if slices.Contains(g.Objects, o) {
				return true
			}
		}
	}
	return false
}

// TestRemovingAnUnreadKindNeverRemovesFindings: a kind is unrelated to a
// finding when its check does not read it (Check.Reads, required or
// optional) and none of the finding's objects is of that kind; removing
// it, from any fixture, never removes the finding. A check whose finding
// hangs on a kind it does not declare would lose it in a live audit that
// reads only the enabled checks' Reads (--checks), so this holds the
// declarations true, including the kinds shared helpers consult
// (snapshot.Index.WorkloadVia reads ReplicaSets, Jobs and CronJobs).
func TestRemovingAnUnreadKindNeverRemovesFindings(t *testing.T) {
	all := checks.All()
	reads := map[string][]snapshot.Resource{}
	for _, c := range all {
		for _, in := range c.Reads {
			reads[c.ID] = append(reads[c.ID], in.Resource)
		}
	}
	for name, load := range allInputs(t) {
		s, err := load()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		base := audit.Run(s, all, audit.Options{}).Findings
		for _, r := range snapshot.Known() {
			if s.Count(r) == 0 {
				continue
			}
			cut, err := load()
			if err != nil {
				t.Fatal(err)
			}
			cut.Drop(r)
			got := audit.Run(cut, all, audit.Options{}).Findings
			for _, f := range base {
				unrelated := !slices.Contains(reads[f.Check], r) && !slices.ContainsFunc(f.Objects, func(o finding.ObjectRef) bool { return o.Kind == r.Kind })
				if unrelated && !sameGap(f, got) {
					t.Errorf("%s without %s, which %s does not read: lost finding %q on %s", name, r, f.Check, f.Title, f.Objects[0])
				}
			}
		}
	}
}
