package ingress

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

const defaultCertGap = "default-certificate-hosts/gap.yaml"

// The MoJ state: both live-1 hosts that fall back to a default
// certificate issued for *.apps.manager are named, high, citing the case;
// the Ingress with its own Secret is not.
func TestDefaultCertificateHostsGap(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, defaultCertGap))
	fs, ctx, ok := checktest.Run(t, defaultCertificateHostsCheck(), s)
	if !ok || len(fs) != 1 {
		t.Fatalf("evaluated %v, findings %+v", ok, fs)
	}
	f := fs[0]
	if f.Severity != finding.High || !slices.Contains(f.Cases, caseMoJDefault) {
		t.Errorf("severity %v cases %v", f.Severity, f.Cases)
	}
	for _, o := range [][3]string{{"Certificate", "ingress-controllers", "default"}, {"Deployment", "ingress-controllers", "nginx-ingress-controller"},
		{"Ingress", "court", "court-app"}, {"Ingress", "prisons", "prison-visits"}} {
		if !checktest.HasObject(fs, o[0], o[1], o[2]) {
			t.Errorf("%v not named: %v", o, f.Objects)
		}
	}
	if checktest.HasObject(fs, "Ingress", "shop", "own-cert") || !strings.Contains(f.Message, "cover 0 of the 2 hosts") {
		t.Errorf("objects %v message %s", f.Objects, f.Message)
	}
	if n := checktest.EvidenceTrue(t, fs, defaultCertGap); n != 4 {
		t.Errorf("%d evidence items, want the Certificate, the controller and the two Ingresses", n)
	}
	if len(ctx.Notes()) != 0 {
		t.Errorf("notes %v", ctx.Notes())
	}
}

func TestDefaultCertificateHostsClean(t *testing.T) {
	checktest.Quiet(t, defaultCertificateHostsCheck(), checktest.Complete(checktest.Load(t, "default-certificate-hosts/clean.yaml")))
}

// A default certificate no Certificate issues is unknown, never pass.
func TestDefaultCertificateHostsUnissuedSecret(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "default-certificate-hosts/clean.yaml"))
	args := s.Deployments[0].Spec.Template.Spec.Containers[0].Args
	args[len(args)-1] = "--default-ssl-certificate=$(POD_NAMESPACE)/hand-made-wildcard"
	fs, ctx, _ := checktest.Run(t, defaultCertificateHostsCheck(), s)
	if len(fs) != 0 {
		t.Errorf("findings %+v", fs)
	}
	if n, ok := ctx.Notes()[ruleDefaultCert]; !ok || !strings.Contains(n.Reason, "never read") {
		t.Errorf("notes %v, want the rule partial", ctx.Notes())
	}
}

func TestCovered(t *testing.T) {
	names := []string{"*.apps.example.org", "example.org"}
	for host, want := range map[string]bool{"a.apps.example.org": true, "A.Apps.Example.org.": true, "example.org": true,
		"b.a.apps.example.org": false, "apps.example.org": false, "x.example.org": false} {
		if got := covered(host, names); got != want {
			t.Errorf("covered(%q) = %v, want %v", host, got, want)
		}
	}
}
