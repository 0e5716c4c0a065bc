package upgrade

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// kube-prometheus-stack's operator at v0.81.0 over CRDs stamped 0.75.2:
// one medium finding naming the operator's Deployment and both CRDs, with
// their stamps and the image as evidence, citing the case.
func TestCRDOperatorVersionSkewGap(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "crd-operator-version-skew/gap.yaml"))
	fs, _, ok := checktest.Run(t, crdOperatorVersionSkewCheck(), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	if len(fs) != 1 {
		t.Fatalf("%d findings, want 1: %v", len(fs), fs)
	}
	f := fs[0]
	if f.Severity != finding.Medium || f.Rule != ruleCRDsBehind || len(f.Cases) != 1 || f.Cases[0] != crdSkewPromOpCase {
		t.Errorf("finding %s %s %v, want medium %s citing %s", f.Severity, f.Rule, f.Cases, ruleCRDsBehind, crdSkewPromOpCase)
	}
	if !checktest.HasObject(fs, "Deployment", "monitoring", "kube-prometheus-stack-operator") {
		t.Errorf("finding does not name the operator: %v", f.Objects)
	}
	for _, name := range []string{"prometheuses.monitoring.coreos.com", "alertmanagers.monitoring.coreos.com"} {
		if !checktest.HasObject(fs, "CustomResourceDefinition", "", name) {
			t.Errorf("finding does not name %s: %v", name, f.Objects)
		}
	}
	text := strings.Join(f.Evidence, "\n")
	for _, want := range []string{"operator.prometheus.io/version", "0.75.2", "prometheus-operator:v0.81.0"} {
		if !strings.Contains(text, want) {
			t.Errorf("evidence lacks %q:\n%s", want, text)
		}
	}
	// A minor release behind is a risk, not a certainty: the message says
	// the operator can write undeclared fields, as it did in issue 5309.
	if !strings.Contains(f.Message, "a newer operator can write fields") {
		t.Errorf("message states the undeclared fields as certain: %q", f.Message)
	}
	if !strings.Contains(f.Title, "runs 0.81.0") || !strings.Contains(f.Title, "oldest 0.75.2") {
		t.Errorf("title %q", f.Title)
	}
	checktest.EvidenceTrue(t, fs, "crd-operator-version-skew/gap.yaml")
}

// The CRDs applied from the operator's release: nothing to report.
func TestCRDOperatorVersionSkewClean(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "crd-operator-version-skew/clean.yaml"))
	checktest.Quiet(t, crdOperatorVersionSkewCheck(), s)
}

// A patch behind, an unstamped CRD and an operator tag that is no release
// are not compared; CRDs newer than the operator are not flagged.
func TestCRDOperatorVersionSkewNotCompared(t *testing.T) {
	for name, edit := range map[string]func(s *snapshot.Snapshot){
		"patch behind": func(s *snapshot.Snapshot) { setStamp(s, "0.81.0"); setTag(s, "v0.81.2") },
		"unstamped":    func(s *snapshot.Snapshot) { setStamp(s, "") },
		"latest tag":   func(s *snapshot.Snapshot) { setTag(s, "latest") },
		"crds newer":   func(s *snapshot.Snapshot) { setStamp(s, "0.82.0") },
	} {
		t.Run(name, func(t *testing.T) {
			s := checktest.Complete(checktest.Load(t, "crd-operator-version-skew/gap.yaml"))
			edit(s)
			checktest.Quiet(t, crdOperatorVersionSkewCheck(), s)
		})
	}
}

// A partial read of the Deployments leaves the rule unjudged rather than
// passed when no operator was found.
func TestCRDOperatorVersionSkewPartialDeployments(t *testing.T) {
	s := checktest.Load(t, "crd-operator-version-skew/gap.yaml")
	s.Deployments = nil
	s = checktest.Complete(s)
	s.SetComplete(snapshot.Deployments, []string{"default"})
	fs, notes := checktest.RunNotes(t, crdOperatorVersionSkewCheck(), s)
	if len(fs) != 0 {
		t.Fatalf("findings %v, want none", fs)
	}
	if n, ok := notes[ruleCRDsBehind]; !ok || n.Reason == "" {
		t.Errorf("rule %s not marked incomplete: %v", ruleCRDsBehind, notes)
	}
}

func setStamp(s *snapshot.Snapshot, v string) {
	for _, o := range s.CustomObjects(snapshot.CustomResourceDefinitions) {
		a := o.GetAnnotations()
		if v == "" {
			delete(a, "operator.prometheus.io/version")
		} else {
			a["operator.prometheus.io/version"] = v
		}
		o.SetAnnotations(a)
	}
}

func setTag(s *snapshot.Snapshot, tag string) {
	for i := range s.Deployments {
		for j := range s.Deployments[i].Spec.Template.Spec.Containers {
			s.Deployments[i].Spec.Template.Spec.Containers[j].Image = "quay.io/prometheus-operator/prometheus-operator:" + tag
		}
	}
}
