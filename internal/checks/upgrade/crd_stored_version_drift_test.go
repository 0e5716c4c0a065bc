package upgrade

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const crdDriftCase = "cert-manager-1-7-removed-apis-stored-versions-2022"

// cert-manager 1.6.3's CRDs with v1alpha2 still stored: one high finding
// naming both CRDs, quoting their storedVersions and release label, and
// citing the cert-manager 1.7 case.
func TestCRDStoredVersionDriftGap(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "crd-stored-version-drift/gap.yaml"))
	fs, _, ok := checktest.Run(t, crdStoredVersionDriftCheck(), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	if len(fs) != 1 {
		t.Fatalf("%d findings, want 1: %v", len(fs), fs)
	}
	f := fs[0]
	if f.Severity != finding.High || f.Rule != ruleOperatorRemoves || len(f.Cases) != 1 || f.Cases[0] != crdDriftCase {
		t.Errorf("finding %s %s %v, want high %s citing %s", f.Severity, f.Rule, f.Cases, ruleOperatorRemoves, crdDriftCase)
	}
	for _, name := range []string{"certificaterequests.cert-manager.io", "orders.acme.cert-manager.io"} {
		if !checktest.HasObject(fs, "CustomResourceDefinition", "", name) {
			t.Errorf("finding does not name %s: %v", name, f.Objects)
		}
	}
	text := strings.Join(f.Evidence, "\n")
	for _, want := range []string{`status.storedVersions=["v1alpha2","v1"]`, "app.kubernetes.io/version", "v1.6.3"} {
		if !strings.Contains(text, want) {
			t.Errorf("evidence lacks %q:\n%s", want, text)
		}
	}
	if !strings.Contains(f.Title, "cert-manager 1.7") || !strings.Contains(f.Remediation, `"storedVersions":["v1"]`) {
		t.Errorf("title %q / remediation %q", f.Title, f.Remediation)
	}
	if !strings.Contains(f.Remediation, "cmctl upgrade migrate-api-version") {
		t.Errorf("remediation lacks cert-manager's own migration tool: %q", f.Remediation)
	}
	checktest.EvidenceTrue(t, fs, "crd-stored-version-drift/gap.yaml")
}

// The same CRDs after the migration: storedVersions [v1] alone.
func TestCRDStoredVersionDriftClean(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "crd-stored-version-drift/clean.yaml"))
	checktest.Quiet(t, crdStoredVersionDriftCheck(), s)
}

// widget is a CRD of no listed operator with the given versions (name,
// served, deprecated; the last is the storage version) and storedVersions.
func widget(stored []string, versions ...[3]any) unstructured.Unstructured {
	var vs []any
	for i, v := range versions {
		m := map[string]any{"name": v[0], "served": v[1], "storage": i == len(versions)-1}
		if v[2] == true {
			m["deprecated"] = true
		}
		vs = append(vs, m)
	}
	st := make([]any, len(stored))
	for i, v := range stored {
		st[i] = v
	}
	obj := map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets.example.com"},
		"spec":     map[string]any{"group": "example.com", "versions": vs},
	}
	if stored != nil {
		obj["status"] = map[string]any{"storedVersions": st}
	}
	return unstructured.Unstructured{Object: obj}
}

// The rules for CRDs of no listed operator, each on its own CRD.
func TestCRDStoredVersionDriftGenericRules(t *testing.T) {
	for _, tt := range []struct {
		name     string
		crd      unstructured.Unstructured
		rule     string
		severity finding.Severity
	}{
		{"unserved", widget([]string{"v1beta1", "v1"}, [3]any{"v1beta1", false, false}, [3]any{"v1", true, false}), ruleStoredUnserved, finding.Medium},
		{"deprecated", widget([]string{"v1beta1", "v1"}, [3]any{"v1beta1", true, true}, [3]any{"v1", true, false}), ruleStoredUnserved, finding.Medium},
		{"undefined", widget([]string{"v1beta1", "v1"}, [3]any{"v1", true, false}), ruleStoredUndefined, finding.High},
		{"served", widget([]string{"v1beta1", "v1"}, [3]any{"v1beta1", true, false}, [3]any{"v1", true, false}), ruleStoredSeveral, finding.Info},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := snapshot.New(snapshot.Source{})
			s.AddCustom(snapshot.CustomResourceDefinitions, []unstructured.Unstructured{tt.crd})
			checktest.Complete(s)
			fs, _, _ := checktest.Run(t, crdStoredVersionDriftCheck(), s)
			if len(fs) != 1 || fs[0].Rule != tt.rule || fs[0].Severity != tt.severity {
				t.Fatalf("findings %v, want one %s %s", fs, tt.severity, tt.rule)
			}
		})
	}
	// Stored at the storage version alone: nothing to say.
	s := snapshot.New(snapshot.Source{})
	s.AddCustom(snapshot.CustomResourceDefinitions, []unstructured.Unstructured{
		widget([]string{"v1"}, [3]any{"v1beta1", false, true}, [3]any{"v1", true, false})})
	checktest.Quiet(t, crdStoredVersionDriftCheck(), checktest.Complete(s))
}

// A CRD from a manifest has no status: what its objects are stored in is
// unknown, never fine.
func TestCRDStoredVersionDriftNoStatusIsPartial(t *testing.T) {
	s := snapshot.New(snapshot.Source{})
	s.AddCustom(snapshot.CustomResourceDefinitions, []unstructured.Unstructured{widget(nil, [3]any{"v1", true, false})})
	fs, ctx, _ := checktest.Run(t, crdStoredVersionDriftCheck(), checktest.Complete(s))
	if len(fs) != 0 {
		t.Errorf("findings on a CRD without status: %v", fs)
	}
	if _, ok := ctx.Notes()[ruleOperatorRemoves]; !ok {
		t.Error("a CRD without status.storedVersions must leave the rules partial")
	}
}

const gatewayAPICase = "gateway-api-crd-v1alpha2-stored-version-upgrade-blocked-2023-2026"

// Gateway API's GatewayClass (v0.8.0) and GRPCRoute (v1.1.0) CRDs with
// v1alpha2 still stored: two high findings, one per release row (v1.0
// drops v1alpha2 from GatewayClass, v1.2 from GRPCRoute), each naming its
// CRD and citing the Gateway API case.
func TestCRDStoredVersionDriftGatewayAPI(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "crd-stored-version-drift/gateway-api-gap.yaml"))
	fs, _, ok := checktest.Run(t, crdStoredVersionDriftCheck(), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	if len(fs) != 2 {
		t.Fatalf("%d findings, want 2: %v", len(fs), fs)
	}
	want := map[string]string{
		"gatewayclasses.gateway.networking.k8s.io": "Gateway API 1.0",
		"grpcroutes.gateway.networking.k8s.io":     "Gateway API 1.2",
	}
	for _, f := range fs {
		if f.Severity != finding.High || f.Rule != ruleOperatorRemoves || len(f.Cases) != 1 || f.Cases[0] != gatewayAPICase {
			t.Errorf("finding %s %s %v, want high %s citing %s", f.Severity, f.Rule, f.Cases, ruleOperatorRemoves, gatewayAPICase)
		}
		if len(f.Objects) != 1 || !strings.Contains(f.Title, want[f.Objects[0].Name]) {
			t.Errorf("finding names %v with title %q", f.Objects, f.Title)
		}
		if !strings.HasPrefix(f.Title, "1 CRD of Gateway API still lists v1alpha2 as stored") {
			t.Errorf("title %q, want the singular verb for one CRD", f.Title)
		}
		// Each row's remediation is its own operator's: no cert-manager tool.
		if strings.Contains(f.Remediation, "cmctl") {
			t.Errorf("Gateway API remediation names cert-manager's tool: %q", f.Remediation)
		}
		if f.Objects[0].Name == "grpcroutes.gateway.networking.k8s.io" && !strings.Contains(f.Remediation, "v1.2 changelog") {
			t.Errorf("GRPCRoute remediation lacks the v1.2 changelog steps: %q", f.Remediation)
		}
	}
	checktest.EvidenceTrue(t, fs, "crd-stored-version-drift/gateway-api-gap.yaml")
}

// A row limited to some CRDs of a group does not match another CRD of it:
// TLSRoute keeps v1alpha2 in v1.4 (served, beside v1alpha3 as storage), so
// its stored v1alpha2 is only a pending migration.
func TestCRDStoredVersionDriftRowCRDScope(t *testing.T) {
	w := widget([]string{"v1alpha2", "v1alpha3"}, [3]any{"v1alpha2", true, false}, [3]any{"v1alpha3", true, false})
	w.SetName("tlsroutes.gateway.networking.k8s.io")
	if err := unstructured.SetNestedField(w.Object, "gateway.networking.k8s.io", "spec", "group"); err != nil {
		t.Fatal(err)
	}
	s := snapshot.New(snapshot.Source{})
	s.AddCustom(snapshot.CustomResourceDefinitions, []unstructured.Unstructured{w})
	fs, _, _ := checktest.Run(t, crdStoredVersionDriftCheck(), checktest.Complete(s))
	if len(fs) != 1 || fs[0].Rule != ruleStoredSeveral || fs[0].Severity != finding.Info {
		t.Fatalf("findings %v, want one info %s", fs, ruleStoredSeveral)
	}
	if want := "1 CRD lists more than one stored version (older: v1alpha2)"; fs[0].Title != want {
		t.Errorf("title %q, want %q", fs[0].Title, want)
	}
}

// Flux 2.6.0's HelmRelease and Alert CRDs with v2beta1 and v1beta1 still
// stored: one high finding for the Flux 2.7 row naming both CRDs.
func TestCRDStoredVersionDriftFlux(t *testing.T) {
	f := operatorRowFinding(t, "crd-stored-version-drift/flux-gap.yaml", "flux-2-7-removed-beta-apis-crd-upgrade-fails-2025",
		"helmreleases.helm.toolkit.fluxcd.io", "alerts.notification.toolkit.fluxcd.io")
	if !strings.Contains(f.Title, "2 CRDs of Flux still list ") || !strings.Contains(f.Title, "Flux 2.7") ||
		!strings.Contains(f.Title, "v2beta1") || !strings.Contains(f.Title, "v1beta1") {
		t.Errorf("title %q", f.Title)
	}
	if !strings.Contains(f.Remediation, "`flux migrate`") || strings.Contains(f.Remediation, "cmctl") {
		t.Errorf("remediation %q, want Flux's own migrate command and no cert-manager tool", f.Remediation)
	}
}

// Karpenter v1.0.8's three CRDs with v1beta1 still stored: one high
// finding for the Karpenter 1.1 row naming all three.
func TestCRDStoredVersionDriftKarpenter(t *testing.T) {
	f := operatorRowFinding(t, "crd-stored-version-drift/karpenter-gap.yaml", "karpenter-v1-migration-conversion-webhook-and-stored-versions-2024",
		"nodepools.karpenter.sh", "nodeclaims.karpenter.sh", "ec2nodeclasses.karpenter.k8s.aws")
	if !strings.Contains(f.Title, "Karpenter 1.1") || !strings.Contains(f.Remediation, `"storedVersions":["v1"]`) {
		t.Errorf("title %q / remediation %q", f.Title, f.Remediation)
	}
	if !strings.Contains(f.Remediation, "Karpenter 1.0.6 and later") || strings.Contains(f.Remediation, "cmctl") {
		t.Errorf("remediation %q, want Karpenter's migration controller and no cert-manager tool", f.Remediation)
	}
}

// external-snapshotter v8.1's group snapshot CRDs store v1alpha1, their
// only and storage version, which v8.2 drops: high on the three CRDs
// although the stored version is today's storage version, with a
// remediation that does not tell to rewrite at (or trim to) v1alpha1.
func TestCRDStoredVersionDriftStorageVersionDropped(t *testing.T) {
	f := operatorRowFinding(t, "crd-stored-version-drift/external-snapshotter-gap.yaml", "csi-snapshot-crd-version-removals-block-upgrades-2022-2025",
		"volumegroupsnapshotclasses.groupsnapshot.storage.k8s.io",
		"volumegroupsnapshotcontents.groupsnapshot.storage.k8s.io", "volumegroupsnapshots.groupsnapshot.storage.k8s.io")
	if !strings.Contains(f.Title, "external-snapshotter 8.2") {
		t.Errorf("title %q", f.Title)
	}
	if strings.Contains(f.Remediation, `"storedVersions":["v1alpha1"]`) || !strings.Contains(f.Remediation, "storage version today") ||
		!strings.Contains(f.Remediation, "rke2-charts pull request 729") {
		t.Errorf("remediation %q, want the carry-the-old-version steps and RKE2's fix, not a trim to v1alpha1", f.Remediation)
	}
	text := strings.Join(f.Evidence, "\n")
	if !strings.Contains(text, "spec.versions[name=v1alpha1].storage=true") {
		t.Errorf("evidence does not say v1alpha1 is the storage version:\n%s", text)
	}
}

// The same CRDs at v8.2.0 (v1beta1 alone, stored alone) are quiet: the
// rule matches v1alpha1, not the group.
func TestCRDStoredVersionDriftStorageVersionDroppedClean(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "crd-stored-version-drift/external-snapshotter-clean.yaml"))
	checktest.Quiet(t, crdStoredVersionDriftCheck(), s)
}

// operatorRowFinding runs the check on file, whole, and returns its one
// finding after checking that it is high, from the operator rule, cites
// caseID alone and names every CRD given; the evidence is checked
// against the file.
func operatorRowFinding(t *testing.T, file, caseID string, crds ...string) finding.Finding {
	t.Helper()
	s := checktest.Complete(checktest.Load(t, file))
	fs, _, ok := checktest.Run(t, crdStoredVersionDriftCheck(), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	if len(fs) != 1 {
		t.Fatalf("%d findings, want 1: %v", len(fs), fs)
	}
	f := fs[0]
	if f.Severity != finding.High || f.Rule != ruleOperatorRemoves || len(f.Cases) != 1 || f.Cases[0] != caseID {
		t.Errorf("finding %s %s %v", f.Severity, f.Rule, f.Cases)
	}
	for _, name := range crds {
		if !checktest.HasObject(fs, "CustomResourceDefinition", "", name) {
			t.Errorf("finding does not name %s: %v", name, f.Objects)
		}
	}
	checktest.EvidenceTrue(t, fs, file)
	return f
}
