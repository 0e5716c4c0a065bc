package objects

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

func TestRegistered(t *testing.T) { checktest.Registered(t, Checks()) }

func TestFactsSourced(t *testing.T) { checktest.FactsSourced(t) }

func severities(fs []finding.Finding) map[string]finding.Severity {
	out := map[string]finding.Severity{}
	for _, f := range fs {
		o := f.Objects[0]
		out[o.Kind+"/"+o.Namespace+"/"+o.Name] = f.Severity
	}
	return out
}

// The gap fixture is a recipe dump: counts from limit=1 LIST pages with
// remainingItemCount, Deployments and ReplicaSets listed whole.
func TestObjectCountExplosionGap(t *testing.T) {
	s := checktest.Load(t, "object-count-explosion/gap")
	if c := s.Status(snapshot.DexAuthRequests); !c.Complete || c.Count != 42000 {
		t.Fatalf("AuthRequests coverage = %+v", c)
	}
	fs, _, ok := checktest.Run(t, objectCountExplosionCheck(), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	want := map[string]finding.Severity{
		"CustomResourceDefinition//authrequests.dex.coreos.com": finding.High,
		"APIService//v1.events.k8s.io":                          finding.Medium,
		"Deployment/shop/web":                                   finding.Medium, // 8 old against a limit of 3: stuck
		"Deployment/shop/legacy":                                finding.Medium, // keeps everything, 12 so far
		"Deployment/shop/legacy-small":                          finding.Low,    // keeps everything, 1 so far
	}
	got := severities(fs)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %v, want %v", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("findings on %v, want %v", got, want)
	}
	for _, f := range fs {
		if f.Objects[0].Name == "web" && !checktest.HasObject([]finding.Finding{f}, "ReplicaSet", "shop", "web-00000") {
			t.Error("the stuck-history finding does not name the old ReplicaSets")
		}
	}
}

func TestObjectCountExplosionClean(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "object-count-explosion/clean"))
	checktest.Quiet(t, objectCountExplosionCheck(), s)
}

// writeObjects writes n terminated pods (and running ones) and Jobs as a
// kubectl List, loaded through the real loader.
func writeObjects(t *testing.T, terminated, finishedJobs, cronJobs int) *snapshot.Snapshot {
	t.Helper()
	s, _ := writeObjectsFile(t, terminated, finishedJobs, cronJobs)
	return s
}

// writeObjectsFile is writeObjects, and the file it wrote.
func writeObjectsFile(t *testing.T, terminated, finishedJobs, cronJobs int) (*snapshot.Snapshot, string) {
	t.Helper()
	var b strings.Builder
	b.WriteString(`{"apiVersion":"v1","kind":"List","items":[`)
	sep := ""
	add := func(format string, args ...any) {
		b.WriteString(sep)
		fmt.Fprintf(&b, format, args...)
		sep = ",\n"
	}
	for i := 0; i < terminated; i++ {
		add(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"evicted-%d","namespace":"batch","ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"spot-worker","uid":"rs1","controller":true}]},"spec":{"containers":[{"name":"c","image":"x"}]},"status":{"phase":"Failed","reason":"Evicted"}}`, i)
	}
	for i := 0; i < 50; i++ {
		add(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"running-%d","namespace":"batch"},"spec":{"containers":[{"name":"c","image":"x"}]},"status":{"phase":"Running"}}`, i)
	}
	for i := 0; i < finishedJobs; i++ {
		add(`{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"report-%d","namespace":"reports"},"spec":{"template":{"spec":{"containers":[{"name":"c","image":"x"}],"restartPolicy":"Never"}}},"status":{"conditions":[{"type":"Complete","status":"True"}]}}`, i)
	}
	for i := 0; i < cronJobs; i++ {
		add(`{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"nightly-%d","namespace":"reports","ownerReferences":[{"apiVersion":"batch/v1","kind":"CronJob","name":"nightly","uid":"cj","controller":true}]},"spec":{"template":{"spec":{"containers":[{"name":"c","image":"x"}],"restartPolicy":"Never"}}},"status":{"conditions":[{"type":"Complete","status":"True"}]}}`, i)
	}
	b.WriteString("]}\n")
	p := filepath.Join(t.TempDir(), "objects.json")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := snapshot.LoadPaths([]string{p})
	if err != nil {
		t.Fatal(err)
	}
	return s, p
}

func TestTerminatedPodsAndFinishedJobs(t *testing.T) {
	cases := []struct {
		name                  string
		terminated, jobs, cjs int
		pods, jobSev          finding.Severity
	}{
		{"below", 4999, 999, 3000, -1, -1},
		{"warn", 5200, 1100, 0, finding.Medium, finding.Medium},
		{"past PodGC default", 12600, 0, 0, finding.High, -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := writeObjects(t, tc.terminated, tc.jobs, tc.cjs)
			fs, _, _ := checktest.Run(t, objectCountExplosionCheck(), s)
			var pods, jobs finding.Severity = -1, -1
			for _, f := range fs {
				switch f.Objects[0].Kind {
				case "Pod":
					pods = f.Severity
					if !strings.Contains(strings.Join(f.Evidence, "\n"), "status.reason=Evicted") {
						t.Errorf("evidence does not break terminated pods down by reason: %v", f.Evidence)
					}
				case "Job":
					jobs = f.Severity
				}
			}
			if pods != tc.pods || jobs != tc.jobSev {
				t.Errorf("pods %v jobs %v, want %v %v", pods, jobs, tc.pods, tc.jobSev)
			}
		})
	}
}

// Before the dictionary attack of the SSO case, Dex already kept its
// AuthRequests in the cluster, a dozen of them: low, naming the CRD; the
// same count with the CRD not served is quiet (the clean fixture).
func TestObjectCountDexStorageBeforeThePileUp(t *testing.T) {
	s := checktest.Load(t, "object-count-explosion/dex-before")
	fs, _, ok := checktest.Run(t, objectCountExplosionCheck(), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	got := severities(fs)
	if len(fs) != 1 || got["CustomResourceDefinition//authrequests.dex.coreos.com"] != finding.Low {
		t.Fatalf("findings %v, want one low on the AuthRequest CRD", got)
	}
	if !strings.Contains(fs[0].Title, "(12 now)") || len(fs[0].Cases) != 1 || fs[0].Cases[0] != "sso-dex-authrequests-flux-apiserver-2020" {
		t.Errorf("title %q, cases %v", fs[0].Title, fs[0].Cases)
	}
}

// The CiliumIdentity count is judged against the cluster-wide range
// (256 to 65535): 54,000 is high, the clean fixture's 412 is quiet, and a
// count between the two thresholds is medium.
func TestCiliumIdentitiesCounted(t *testing.T) {
	s := checktest.Load(t, "object-count-explosion/cilium-identities-gap")
	if c := s.Status(snapshot.CiliumIdentities); !c.Complete || c.Count != 54000 {
		t.Fatalf("CiliumIdentities coverage = %+v", c)
	}
	fs, _, ok := checktest.Run(t, objectCountExplosionCheck(), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	got := severities(fs)
	if got["CustomResourceDefinition//ciliumidentities.cilium.io"] != finding.High || len(got) != 1 {
		t.Fatalf("findings %v, want one high on the CiliumIdentity CRD", got)
	}
	if !strings.Contains(fs[0].Evidence[0], "54000") {
		t.Errorf("evidence %q does not quote the count", fs[0].Evidence)
	}

	mid := snapshot.New(snapshot.Source{})
	mid.AddCount(snapshot.CiliumIdentities, 40000)
	mid.SetCoverage(snapshot.CiliumIdentities, snapshot.StatusRead, "")
	fs, _, _ = checktest.Run(t, objectCountExplosionCheck(), mid)
	if got := severities(fs); got["CustomResourceDefinition//ciliumidentities.cilium.io"] != finding.Medium {
		t.Errorf("40,000 identities: %v, want medium", got)
	}

	clean := checktest.Load(t, "object-count-explosion/clean")
	if c := clean.Status(snapshot.CiliumIdentities); c.Count != 412 {
		t.Fatalf("clean CiliumIdentities coverage = %+v", c)
	}
}

// Kyverno's AdmissionReports piling up (kyverno/kyverno#8974): counted,
// reported per kind with the case; a count in the range Kyverno expects
// is not. The fixtures are recipe dumps of a cluster on Kyverno 1.10
// (kubectl get --raw '/apis/kyverno.io/v1alpha2/admissionreports?limit=1'),
// which serves AdmissionReports but not yet EphemeralReports (1.12): gap
// holds 400,000 AdmissionReports, a quarter of the 1.6 million the issue's
// EKS cluster held when etcd turned read-only, so the cluster months
// before (the count is ours); clean holds 1,200, about one aggregated
// report per matched resource (Kyverno's design notes) on a cluster of
// that size.
func TestObjectCountExplosionKyvernoReports(t *testing.T) {
	s := checktest.Load(t, "object-count-explosion/kyverno-reports/gap")
	if c := s.Status(snapshot.KyvernoAdmissionReports); !c.Complete || c.Count != 400000 {
		t.Fatalf("AdmissionReports coverage = %+v", c)
	}
	fs, _, ok := checktest.Run(t, objectCountExplosionCheck(), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	got := severities(fs)
	want := map[string]finding.Severity{"CustomResourceDefinition//admissionreports.kyverno.io": finding.High}
	if len(got) != len(want) || got["CustomResourceDefinition//admissionreports.kyverno.io"] != finding.High {
		t.Errorf("findings on %v, want %v", got, want)
	}
	if len(fs) == 1 && (fs[0].Cases[0] != caseKyvernoReports || !strings.Contains(fs[0].Title, "400000 Kyverno AdmissionReports")) {
		t.Errorf("finding %q cites %v", fs[0].Title, fs[0].Cases)
	}

	clean := checktest.Load(t, "object-count-explosion/kyverno-reports/clean")
	fs, ctx, _ := checktest.Run(t, objectCountExplosionCheck(), clean)
	if len(fs) != 0 {
		t.Errorf("1,200 AdmissionReports reported: %v", severities(fs))
	}
	// Counted, or not served by Kyverno 1.10: the rule's silence holds.
	for _, r := range kyvernoReports {
		if !ctx.Complete(r) {
			t.Errorf("%s not complete on the clean dump: %+v", r, clean.Status(r))
		}
	}
}

// A served report kind whose count is not in the input leaves the rule
// unknown, not passed: a Kyverno 1.12 cluster serves EphemeralReports,
// and the dump holds only the AdmissionReports count.
func TestObjectCountExplosionKyvernoReportsUncounted(t *testing.T) {
	dir := t.TempDir()
	src := "testdata/object-count-explosion/kyverno-reports/clean/"
	count, err := os.ReadFile(src + "admissionreports.kyverno.io.count.json")
	if err != nil {
		t.Fatal(err)
	}
	served := "admissionreports.kyverno.io\nephemeralreports.reports.kyverno.io\n"
	if err := os.WriteFile(filepath.Join(dir, "admissionreports.kyverno.io.count.json"), count, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "api-resources.txt"), []byte(served), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := snapshot.LoadPaths([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	fs, ctx, _ := checktest.Run(t, objectCountExplosionCheck(), s)
	if len(fs) != 0 {
		t.Errorf("findings: %v", severities(fs))
	}
	// The rule needs both kinds; the audit reports it partial, not passed.
	if !ctx.Complete(snapshot.KyvernoAdmissionReports) || ctx.Complete(snapshot.KyvernoEphemeralReports) {
		t.Errorf("coverage: AdmissionReports %+v, EphemeralReports %+v; want the first complete, the second not",
			s.Status(snapshot.KyvernoAdmissionReports), s.Status(snapshot.KyvernoEphemeralReports))
	}
}
