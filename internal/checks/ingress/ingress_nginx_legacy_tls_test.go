package ingress

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

const legacyDir = "ingress-nginx-legacy-tls/"

func TestIngressNginxLegacyTLSGap(t *testing.T) {
	fs, ctx, ok := checktest.Run(t, ingressNginxLegacyTLSCheck(), checktest.Complete(checktest.Load(t, legacyDir+"gap.yaml")))
	if !ok || len(fs) != 1 {
		t.Fatalf("evaluated %v, findings %+v", ok, fs)
	}
	f := fs[0]
	if f.Severity != finding.Medium || f.Cases[0] != caseMoJTLS || !strings.Contains(f.Message, "TLSv1 and TLSv1.1") {
		t.Errorf("%v %v %s", f.Severity, f.Cases, f.Message)
	}
	if !checktest.HasObject(fs, "Deployment", "ingress-nginx", "ingress-nginx-controller") ||
		!checktest.HasObject(fs, "ConfigMap", "ingress-nginx", "ingress-nginx-controller") {
		t.Errorf("objects %v", f.Objects)
	}
	// The second controller's ConfigMap is not one kubegap reads: unknown.
	if n, ok := ctx.Notes()[ruleLegacyDropped]; !ok || !strings.Contains(n.Reason, "internal/internal-nginx") {
		t.Errorf("notes %v", ctx.Notes())
	}
}

func TestIngressNginxLegacyTLSBeforeUpgrade(t *testing.T) {
	fs, _, _ := checktest.Run(t, ingressNginxLegacyTLSCheck(), checktest.Complete(checktest.Load(t, legacyDir+"upgrade.yaml")))
	if len(fs) != 1 || fs[0].Severity != finding.Low || !strings.Contains(fs[0].Message, "TLSv1.1") {
		t.Fatalf("findings %+v", fs)
	}
}

func TestIngressNginxLegacyTLSHealthy(t *testing.T) {
	checktest.Quiet(t, ingressNginxLegacyTLSCheck(), checktest.Complete(checktest.Load(t, legacyDir+"healthy.yaml")))
}

// From plain files without the ConfigMap, its settings are unknown: the
// rules are partial, not passed.
func TestIngressNginxLegacyTLSConfigMapNotInInput(t *testing.T) {
	s := checktest.Load(t, legacyDir+"gap.yaml")
	s.ConfigMaps = nil
	fs, ctx, _ := checktest.Run(t, ingressNginxLegacyTLSCheck(), s)
	if len(fs) != 0 {
		t.Errorf("findings %+v", fs)
	}
	if n := ctx.Notes()[ruleLegacyDropped]; !strings.Contains(n.Reason, "not in the input") {
		t.Errorf("notes %v", ctx.Notes())
	}
}

// TestIngressNginxLegacyTLSEvidenceItems: the finding quotes the
// controller's image and --configmap argument and the ConfigMap's two
// settings as the fixture writes them, and each resolves against it.
func TestIngressNginxLegacyTLSEvidenceItems(t *testing.T) {
	fs, _, _ := checktest.Run(t, ingressNginxLegacyTLSCheck(), checktest.Complete(checktest.Load(t, legacyDir+"gap.yaml")))
	if len(fs) != 1 {
		t.Fatalf("findings %+v", fs)
	}
	want := []string{
		"Deployment/ingress-nginx/ingress-nginx-controller: " +
			"spec.template.spec.containers[name=controller].image=registry.k8s.io/ingress-nginx/controller:v1.11.3@sha256:d56f135b6462cfc476447cfe564b83a45e8bb7da2774963b00d12161112270b7, " +
			"spec.template.spec.containers[name=controller].args[2]=--configmap=$(POD_NAMESPACE)/ingress-nginx-controller",
		"ConfigMap/ingress-nginx/ingress-nginx-controller: data[ssl-protocols]=TLSv1 TLSv1.1 TLSv1.2, " +
			"data[ssl-ciphers]=ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-SHA:AES128-SHA",
	}
	var got []string
	for _, it := range fs[0].EvidenceItems {
		got = append(got, it.String())
	}
	if !slices.Equal(got, want) {
		t.Errorf("items\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if n := checktest.EvidenceTrue(t, fs, legacyDir+"gap.yaml"); n != len(want) {
		t.Errorf("%d items resolved, want %d", n, len(want))
	}
}

// MoJ before the upgrade: controller 0.26.1 whose ConfigMap kubegap does
// not read. The finding reports the version hazard and says ssl-ciphers is
// not known, with the command that shows it; it never says it is unset.
func TestIngressNginxDefaultCiphersMoJBeforeUpgrade(t *testing.T) {
	fs, ctx, _ := checktest.Run(t, ingressNginxLegacyTLSCheck(), checktest.Complete(checktest.Load(t, legacyDir+"moj-before-upgrade.yaml")))
	if len(fs) != 1 {
		t.Fatalf("findings %+v", fs)
	}
	if n := ctx.Notes()[ruleDefaultCiphers]; !strings.Contains(n.Reason, "ingress-controllers/nginx-ingress-acme-controller is not known") {
		t.Errorf("notes %v", ctx.Notes())
	}
	f := fs[0]
	if f.Severity != finding.Low || f.Cases[0] != caseMoJTLS || !strings.Contains(f.Message, "is not known") ||
		strings.Contains(f.Message, "does not set ssl-ciphers, so") {
		t.Errorf("%v %v %s", f.Severity, f.Cases, f.Message)
	}
	joined := strings.Join(f.Evidence, "\n")
	if !strings.Contains(joined, "kubectl get configmap nginx-ingress-acme-controller -n ingress-controllers -o yaml") ||
		!strings.Contains(joined, "ingress-nginx 0.26.1, from the image tag, is before 0.27.0") {
		t.Errorf("evidence %q", f.Evidence)
	}
	want := "Deployment/ingress-controllers/nginx-ingress-acme-controller: " +
		"spec.template.spec.containers[name=nginx-ingress-controller].image=quay.io/kubernetes-ingress-controller/nginx-ingress-controller:0.26.1, " +
		"spec.template.spec.containers[name=nginx-ingress-controller].args[4]=--configmap=ingress-controllers/nginx-ingress-acme-controller"
	if len(f.EvidenceItems) != 1 || f.EvidenceItems[0].String() != want {
		t.Errorf("items %v", f.EvidenceItems)
	}
	if n := checktest.EvidenceTrue(t, fs, legacyDir+"moj-before-upgrade.yaml"); n != 1 {
		t.Errorf("%d items resolved, want 1", n)
	}
}

// The same controller with its read ConfigMap lacking ssl-ciphers is a
// definite finding naming the ConfigMap's keys.
func TestIngressNginxDefaultCiphersReadConfigMapUnset(t *testing.T) {
	s := checktest.Load(t, legacyDir+"ciphers-pinned.yaml")
	s.ConfigMaps[0].Data = map[string]string{"use-proxy-protocol": "true"}
	fs, _, _ := checktest.Run(t, ingressNginxLegacyTLSCheck(), checktest.Complete(s))
	if len(fs) != 1 || !strings.Contains(fs[0].Message, "does not set ssl-ciphers") ||
		!checktest.HasObject(fs, "ConfigMap", "ingress-nginx", "ingress-nginx-controller") {
		t.Fatalf("findings %+v", fs)
	}
	if !slices.Contains(fs[0].Evidence, "ConfigMap ingress-nginx/ingress-nginx-controller has no ssl-ciphers key (its data keys: use-proxy-protocol)") {
		t.Errorf("evidence %q", fs[0].Evidence)
	}
}

// ssl-ciphers pinned in the ConfigMap: no finding.
func TestIngressNginxDefaultCiphersPinned(t *testing.T) {
	checktest.Quiet(t, ingressNginxLegacyTLSCheck(), checktest.Complete(checktest.Load(t, legacyDir+"ciphers-pinned.yaml")))
}

// MoJ's controller after the upgrade, on 0.30.0: past the change, so the
// rule has nothing to flag even with the ConfigMap unread (the other two
// rules stay partial for that ConfigMap).
func TestIngressNginxDefaultCiphersPastTheChange(t *testing.T) {
	s := checktest.Load(t, legacyDir+"moj-before-upgrade.yaml")
	c := &s.Deployments[0].Spec.Template.Spec.Containers[0]
	c.Image = strings.Replace(c.Image, ":0.26.1", ":0.30.0", 1)
	fs, ctx, _ := checktest.Run(t, ingressNginxLegacyTLSCheck(), checktest.Complete(s))
	if len(fs) != 0 {
		t.Errorf("findings %+v", fs)
	}
	if n, ok := ctx.Notes()[ruleDefaultCiphers]; ok {
		t.Errorf("note %v", n)
	}
	if _, ok := ctx.Notes()[ruleLegacyDropped]; !ok {
		t.Errorf("notes %v", ctx.Notes())
	}
}
