package ingress

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const externalDNSDir = "external-dns-routing/"

func TestExternalDNSRoutingGap(t *testing.T) {
	fs, ctx, ok := checktest.Run(t, externalDNSRoutingCheck(), checktest.Complete(checktest.Load(t, externalDNSDir+"gap.yaml")))
	if !ok || len(fs) != 1 || len(ctx.Notes()) != 0 {
		t.Fatalf("evaluated %v, findings %+v, notes %v", ok, fs, ctx.Notes())
	}
	f := fs[0]
	if f.Severity != finding.High || f.Cases[0] != caseMoJExternalDNS || !strings.Contains(f.Message, "drops a whole batch") {
		t.Errorf("%v %v %s", f.Severity, f.Cases, f.Message)
	}
	if !checktest.HasObject(fs, "Ingress", "laa", "fee-calculator") || !checktest.HasObject(fs, "Deployment", "kube-system", "external-dns") ||
		checktest.HasObject(fs, "Ingress", "other", "api-blue") {
		t.Errorf("objects %v", f.Objects)
	}

	// From v0.13.4 only the bad record is held back: medium.
	s := checktest.Complete(checktest.Load(t, externalDNSDir+"gap.yaml"))
	s.Deployments[0].Spec.Template.Spec.Containers[0].Image = "registry.k8s.io/external-dns/external-dns:v0.14.2"
	fs, _, _ = checktest.Run(t, externalDNSRoutingCheck(), s)
	if len(fs) != 1 || fs[0].Severity != finding.Medium {
		t.Errorf("v0.14.2: %+v", fs)
	}
}

func TestExternalDNSRoutingHealthy(t *testing.T) {
	checktest.Quiet(t, externalDNSRoutingCheck(), checktest.Complete(checktest.Load(t, externalDNSDir+"healthy.yaml")))
}

// Without external-dns in view, the annotations are inert or unknown: from
// plain files without Deployments the rule is partial, not passed.
func TestExternalDNSRoutingControllerNotInInput(t *testing.T) {
	s := checktest.Load(t, externalDNSDir+"gap.yaml")
	s.Deployments = nil
	fs, ctx, _ := checktest.Run(t, externalDNSRoutingCheck(), s)
	if len(fs) != 0 {
		t.Errorf("findings %+v", fs)
	}
	if _, ok := ctx.Notes()[ruleRoutingMissing]; !ok {
		t.Errorf("notes %v", ctx.Notes())
	}
}

// The snapshot must keep every annotation the check reads, under both
// prefixes; a dropped routing policy would turn a healthy object into a
// finding.
func TestExternalDNSAnnotationsKept(t *testing.T) {
	f, err := loadExternalDNSFacts()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Service\nmetadata:\n  name: svc\n  namespace: web\n  annotations:\n")
	var keys []string
	for _, p := range f.Prefixes {
		for _, k := range append([]string{f.SetIdentifier}, f.RoutingPolicies...) {
			keys = append(keys, p+k)
			b.WriteString("    " + p + k + ": \"x\"\n")
		}
	}
	path := filepath.Join(t.TempDir(), "svc.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := snapshot.LoadPaths([]string{path})
	if err != nil || len(s.Services) != 1 {
		t.Fatalf("load: %v", err)
	}
	for _, k := range keys {
		if _, ok := s.Services[0].Annotations[k]; !ok {
			t.Errorf("annotation %s is dropped on load", k)
		}
	}
}

// TestExternalDNSRoutingEvidenceItems: the finding quotes the Ingress's
// set-identifier with every routing-policy annotation absent, and the
// controller's image and --provider argument, as the fixture writes them.
func TestExternalDNSRoutingEvidenceItems(t *testing.T) {
	fs, _, _ := checktest.Run(t, externalDNSRoutingCheck(), checktest.Complete(checktest.Load(t, externalDNSDir+"gap.yaml")))
	if len(fs) != 1 {
		t.Fatalf("findings %+v", fs)
	}
	items := fs[0].EvidenceItems
	if len(items) != 2 {
		t.Fatalf("items %v, want the Ingress and the controller", items)
	}
	ing := items[0].String()
	if !strings.HasPrefix(ing, "Ingress/laa/fee-calculator: metadata.annotations[external-dns.alpha.kubernetes.io/set-identifier]=fee-calculator-green, ") ||
		!strings.Contains(ing, "metadata.annotations[external-dns.alpha.kubernetes.io/aws-weight] absent") ||
		!strings.Contains(ing, "metadata.annotations[external-dns.alpha.kubernetes.io/aws-multi-value-answer] absent") {
		t.Errorf("Ingress item %q", ing)
	}
	want := "Deployment/kube-system/external-dns: spec.template.spec.containers[name=external-dns].image=registry.k8s.io/external-dns/external-dns:v0.10.2, " +
		"spec.template.spec.containers[name=external-dns].args[1]=--provider=aws"
	if got := items[1].String(); got != want {
		t.Errorf("controller item %q, want %q", got, want)
	}
	if n := checktest.EvidenceTrue(t, fs, externalDNSDir+"gap.yaml"); n != 2 {
		t.Errorf("%d items resolved, want 2", n)
	}
}

// TestExternalDNSRoutingProviderAsTwoArguments: "--provider aws" written
// as two arguments is quoted as both elements.
func TestExternalDNSRoutingProviderAsTwoArguments(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, externalDNSDir+"gap.yaml"))
	s.Deployments[0].Spec.Template.Spec.Containers[0].Args = []string{"--source=ingress", "--provider", "aws"}
	fs, _, _ := checktest.Run(t, externalDNSRoutingCheck(), s)
	if len(fs) != 1 || len(fs[0].EvidenceItems) != 2 {
		t.Fatalf("findings %+v", fs)
	}
	want := "Deployment/kube-system/external-dns: spec.template.spec.containers[name=external-dns].image=registry.k8s.io/external-dns/external-dns:v0.10.2, " +
		"spec.template.spec.containers[name=external-dns].args[1]=--provider, spec.template.spec.containers[name=external-dns].args[2]=aws"
	if got := fs[0].EvidenceItems[1].String(); got != want {
		t.Errorf("controller item %q, want %q", got, want)
	}
}
