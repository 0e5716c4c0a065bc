package upgrade

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

func TestRegistered(t *testing.T) { checktest.Registered(t, Checks()) }

func TestFactsParse(t *testing.T) {
	f, err := loadFacts()
	if err != nil {
		t.Fatal(err)
	}
	if r := f.removedAs("policy/v1beta1", "PodSecurityPolicy"); r == nil || r.removedIn.MinorString() != "1.25" {
		t.Errorf("PodSecurityPolicy row = %+v", r)
	}
	for name, doc := range map[string]string{
		"unsourced": "removedAPIs: [{groupVersion: a/v1, kinds: [X], removedIn: '1.2', replacement: a/v2}]\nkubeletRefusesCgroupV1From: {minor: '1.35', sources: [https://x]}",
		"http":      "removedAPIs: [{groupVersion: a/v1, kinds: [X], removedIn: '1.2', replacement: a/v2, sources: [http://x]}]\nkubeletRefusesCgroupV1From: {minor: '1.35', sources: [https://x]}",
		"unknown":   "colour: red",
	} {
		if _, err := parseFacts([]byte(doc)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func at(s *snapshot.Snapshot, server string) *snapshot.Snapshot {
	s.Source.ServerVersion = server
	return s
}

func target(v string) *check.KubeVersion {
	k, _ := check.ParseKubeVersion(v)
	return &k
}

func runWith(t *testing.T, c check.Check, s *snapshot.Snapshot, tv *check.KubeVersion) ([]finding.Finding, *check.Context) {
	t.Helper()
	ctx := &check.Context{Snapshot: s, Target: tv}
	fs, err := c.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return fs, ctx
}

// TestSkewAtTarget: kubelets at 1.34 and 1.32; an upgrade to 1.36 names the
// 1.32 nodes as outside the policy and not the 1.34 ones.
func TestSkewAtTarget(t *testing.T) {
	s := at(checktest.Complete(checktest.Load(t, "skew-134-132.yaml")), "v1.34.4-eks-1a2b3c4")
	fs, _ := runWith(t, upgradePreflightCheck(), s, target("1.36"))
	var skew []finding.Finding
	for _, f := range fs {
		if strings.Contains(f.Title, "outside the version skew") {
			skew = append(skew, f)
		}
	}
	if len(skew) != 1 || !checktest.HasObject(skew, "Node", "", "old-1") || !checktest.HasObject(skew, "Node", "", "old-2") ||
		checktest.HasObject(skew, "Node", "", "new-1") || skew[0].Severity != finding.High {
		t.Errorf("skew findings = %+v", skew)
	}
	// Two minors up: the control plane goes one minor at a time.
	if !slices.ContainsFunc(fs, func(f finding.Finding) bool { return strings.Contains(f.Title, "pass through 2 minor versions") }) {
		t.Errorf("no control-plane path finding: %+v", fs)
	}
	// One minor up: 1.32 kubelets are three behind 1.35, still inside.
	fs, _ = runWith(t, upgradePreflightCheck(), s, target("1.35"))
	for _, f := range fs {
		if strings.Contains(f.Title, "outside the version skew") {
			t.Errorf("1.35 keeps 1.32 kubelets within three minors: %s", f.Title)
		}
	}
}

// TestPreflightWithoutServerVersion: files without a server version leave
// the path rule skipped (the kubelets bound the version, they do not state
// it) but judge the provider changes between the bound and the target;
// with nothing bounding it from below, the provider rule is skipped too:
// unknown, not pass.
func TestPreflightWithoutServerVersion(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "skew-134-132.yaml"))
	_, ctx := runWith(t, upgradePreflightCheck(), s, target("1.36"))
	n := ctx.Notes()
	if !n[ruleControlPlanePath].Skipped || n[ruleProviderChanges].Skipped ||
		!strings.Contains(n[ruleControlPlanePath].Reason, "1.34 to 1.35") {
		t.Errorf("bounded by the kubelets: notes = %+v", n)
	}
	s = checktest.Complete(checktest.Load(t, "skew-134-132.yaml"))
	for i := range s.Nodes {
		s.Nodes[i].Status.NodeInfo.KubeletVersion = ""
	}
	s.DaemonSets, s.Pods = nil, nil
	_, ctx = runWith(t, upgradePreflightCheck(), s, target("1.36"))
	if n := ctx.Notes(); !n[ruleControlPlanePath].Skipped || !n[ruleProviderChanges].Skipped {
		t.Errorf("nothing bounds the version: notes = %+v", n)
	}
}

// TestRemovedAPIsInManifests: old manifests are found by the version they
// are written in, whatever kubegap converted them to.
func TestRemovedAPIsInManifests(t *testing.T) {
	s := at(checktest.Load(t, "old-manifests.yaml"), "v1.33.2")
	fs, _ := runWith(t, removedAPIsCheck(), s, nil)
	want := map[string]bool{
		"networking.k8s.io/v1beta1 Ingress": false, "policy/v1beta1 PodSecurityPolicy": false,
		"flowcontrol.apiserver.k8s.io/v1beta3 FlowSchema": false, "apps/v1beta1 Deployment": false,
	}
	for _, f := range fs {
		for k := range want {
			if strings.Contains(f.Title, k) {
				want[k] = true
				if f.Severity != finding.High || f.Preflight != "" {
					t.Errorf("%s: %v %q", k, f.Severity, f.Preflight)
				}
			}
		}
		if checktest.HasObject([]finding.Finding{f}, "Ingress", "web", "current") {
			t.Errorf("a networking.k8s.io/v1 Ingress reported: %s", f.Title)
		}
	}
	for k, seen := range want {
		if !seen {
			t.Errorf("%s not reported: %+v", k, fs)
		}
	}

	// Against 1.31 with a target of 1.32, v1beta3 FlowSchemas are a
	// preflight finding; PodSecurityPolicy (gone since 1.25) is not.
	s = at(checktest.Load(t, "old-manifests.yaml"), "v1.31.5")
	fs, _ = runWith(t, removedAPIsCheck(), s, target("1.32"))
	var flow, psp *finding.Finding
	for i, f := range fs {
		if strings.Contains(f.Title, "FlowSchema") {
			flow = &fs[i]
		}
		if strings.Contains(f.Title, "PodSecurityPolicy") {
			psp = &fs[i]
		}
	}
	if flow == nil || flow.Preflight != finding.PreflightBefore || flow.Severity != finding.High {
		t.Errorf("FlowSchema at target: %+v", flow)
	}
	if psp == nil || psp.Preflight != "" {
		t.Errorf("PodSecurityPolicy: %+v", psp)
	}
}

// TestRemovedAPIsWrittenThrough: a live object whose managedFields record
// a write through a removed version is reported low; without a server
// version the check is partial.
func TestRemovedAPIsWrittenThrough(t *testing.T) {
	s := checktest.Complete(snapshot.New(snapshot.Source{Type: snapshot.SourceCluster, ServerVersion: "v1.35.1"}))
	s.Deployments = append(s.Deployments, deploymentWrittenAs("api", "extensions/v1beta1"))
	s.Finish()
	fs, ctx := runWith(t, removedAPIsCheck(), s, nil)
	if len(fs) != 1 || fs[0].Severity != finding.Low || !checktest.HasObject(fs, "Deployment", "web", "api") {
		t.Errorf("findings = %+v", fs)
	}
	if len(ctx.Notes()) != 0 {
		t.Errorf("notes = %+v", ctx.Notes())
	}
	s.Source.ServerVersion = ""
	_, ctx = runWith(t, removedAPIsCheck(), s, nil)
	if n := ctx.Notes(); n[ruleWrittenThrough].Reason == "" {
		t.Errorf("no server version, yet no partial note: %+v", n)
	}
}

// deploymentWrittenAs is a Deployment as kubegap keeps one read live whose
// managedFields showed a write through apiVersion.
func deploymentWrittenAs(name, apiVersion string) appsv1.Deployment {
	return appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "web",
		Annotations: map[string]string{snapshot.AnnotationWrittenAs: apiVersion}}}
}
