package objects

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// TestCustomResourceSizeGap: the deployKF Application at about 906,000
// bytes (57 % of etcd's 1.5 MiB) is medium with its unset history limit
// quoted; an ApplicationSet at 1.2 MiB (80 %) is high.
func TestCustomResourceSizeGap(t *testing.T) {
	fs, _, ok := checktest.Run(t, customResourceSizeCheck(), checktest.Complete(checktest.Load(t, "custom-resource-size/gap.yaml")))
	if !ok || len(fs) != 2 {
		t.Fatalf("findings %+v (evaluated %v)", fs, ok)
	}
	sev := map[string]finding.Severity{}
	for _, f := range fs {
		sev[f.Objects[0].Kind] = f.Severity
		if f.Cases[0] != caseArgoCRs {
			t.Errorf("cases %v", f.Cases)
		}
	}
	if sev["Application"] != finding.Medium || sev["ApplicationSet"] != finding.High {
		t.Errorf("severities %v", sev)
	}
	if !checktest.HasObject(fs, "Application", "argocd", "dkf-core--deploykf-profiles-generator") {
		t.Errorf("objects %+v", fs)
	}
	app := fs[0]
	if app.Objects[0].Kind != "Application" {
		app = fs[1]
	}
	ev := strings.Join(app.Evidence, "\n")
	if !strings.Contains(app.Title, "885 KiB (906000 bytes), 57%") || !strings.Contains(ev, "https://etcd.io/docs/v3.4/dev-guide/limit/") ||
		!strings.Contains(ev, "revisionHistoryLimit is not set") {
		t.Errorf("title %q evidence %v", app.Title, app.Evidence)
	}
}

// TestCustomResourceSizeClean: the same objects measured small by the
// loader are quiet with the rule judged.
func TestCustomResourceSizeClean(t *testing.T) {
	checktest.Quiet(t, customResourceSizeCheck(), checktest.Complete(checktest.Load(t, "custom-resource-size/clean.yaml")))
}

// TestCustomResourceSizeUnknown: an object with no recorded size (a
// snapshot saved by an older kubegap) leaves the rule partial, never quiet
// as if small.
func TestCustomResourceSizeUnknown(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "custom-resource-size/clean.yaml"))
	apps := s.CustomObjects(snapshot.ArgoApplications)
	if _, ok := snapshot.SerializedBytes(&apps[0]); !ok {
		t.Fatal("the loader recorded no size")
	}
	a := apps[0].GetAnnotations()
	delete(a, snapshot.AnnotationSerializedBytes)
	apps[0].SetAnnotations(a)
	fs, ctx, _ := checktest.Run(t, customResourceSizeCheck(), s)
	if n := ctx.Notes()[ruleCRSize]; len(fs) != 0 || !strings.Contains(n.Reason, "without a recorded size (1: ") {
		t.Errorf("findings %+v, note %+v", fs, n)
	}
}

// A CustomResourceDefinition as large as Kueue's Workload CRD (674,520
// bytes, 42% of etcd's limit, in the real-manifests corpus) is a vendor's
// fixed schema, not a custom resource that grows: not judged.
func TestCustomResourceSizeSkipsCRDs(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "custom-resource-size/clean.yaml"))
	crd := unstructured.Unstructured{Object: map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "workloads.kueue.x-k8s.io", "annotations": map[string]any{snapshot.AnnotationSerializedBytes: "674520"}}}}
	s.Custom[snapshot.CustomResourceDefinitions.APIVersion()+"/"+snapshot.CustomResourceDefinitions.Kind] = []unstructured.Unstructured{crd}
	fs, _, _ := checktest.Run(t, customResourceSizeCheck(), s)
	if len(fs) != 0 {
		t.Errorf("a large CRD was judged: %+v", fs)
	}
}
