package agents

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

const brokerCase = "adevinta-kiam-sdk-credential-latency-2019"

func TestCredentialBrokerDurationGap(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "credential-broker-duration/gap.yaml"))
	fs, _, ok := checktest.Run(t, credentialBrokerDurationCheck(), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	want := map[string]finding.Severity{"kiam-server": finding.Medium, "kube2iam": finding.Low}
	got := map[string]finding.Severity{}
	for _, f := range fs {
		got[f.Objects[0].Name] = f.Severity
		if len(f.Cases) != 1 || f.Cases[0] != brokerCase {
			t.Errorf("%s cites %v", f.Title, f.Cases)
		}
	}
	for name, sev := range want {
		if got[name] != sev || !checktest.HasObject(fs, "DaemonSet", "kube-system", name) {
			t.Errorf("%s: %v, want %v (findings %v)", name, got[name], sev, got)
		}
	}
	if len(fs) != len(want) {
		t.Errorf("findings %v, want %v (the kiam agent is no server)", got, want)
	}
	for _, f := range fs {
		ev := strings.Join(f.Evidence, "\n")
		if f.Objects[0].Name == "kiam-server" && (!strings.Contains(ev, "--session-duration not set: default 15m") ||
			!strings.Contains(ev, "between 5m0s and 15m0s left") || !strings.Contains(ev, "1 pods carry")) {
			t.Errorf("kiam-server evidence: %v", f.Evidence)
		}
		if f.Objects[0].Name == "kube2iam" && !strings.Contains(f.Title, "last 5m0s of every 10m0s") {
			t.Errorf("kube2iam title: %s", f.Title)
		}
	}
}

func TestCredentialBrokerDurationClean(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "credential-broker-duration/clean.yaml"))
	checktest.Quiet(t, credentialBrokerDurationCheck(), s)
}

// An unrendered template's duration is unknown: partial, never pass.
func TestCredentialBrokerDurationTemplated(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "credential-broker-duration/templated.yaml"))
	fs, ctx, _ := checktest.Run(t, credentialBrokerDurationCheck(), s)
	if len(fs) != 0 {
		t.Errorf("findings from a templated duration: %v", fs)
	}
	if _, ok := ctx.Notes()["broker-session-lifetime"]; !ok {
		t.Error("no partial note")
	}
}

// A broker no pod asks for a role is only low.
func TestCredentialBrokerDurationUnusedIsLow(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "credential-broker-duration/gap.yaml"))
	s.Pods = nil
	fs, _, _ := checktest.Run(t, credentialBrokerDurationCheck(), s)
	for _, f := range fs {
		if f.Severity != finding.Low {
			t.Errorf("%s: %v with no pod asking for a role", f.Title, f.Severity)
		}
	}
	if len(fs) != 2 {
		t.Errorf("%d findings, want 2", len(fs))
	}
}

// TestCredentialBrokerDurationEvidenceItems: each broker's image, command
// and arguments (where its flags are set, or not) and the pods asking for
// a role are quoted as the fixture writes them and resolve against it.
func TestCredentialBrokerDurationEvidenceItems(t *testing.T) {
	const file = "credential-broker-duration/gap.yaml"
	fs, _, _ := checktest.Run(t, credentialBrokerDurationCheck(), checktest.Complete(checktest.Load(t, file)))
	pod := "Pod/shop/search-7d9f: metadata.annotations[iam.amazonaws.com/role]=search-reader"
	want := map[string][]string{
		"kiam-server": {"DaemonSet/kube-system/kiam-server: spec.template.spec.containers[name=kiam].image=quay.io/uswitch/kiam:v3.6, " +
			`spec.template.spec.containers[name=kiam].command=["/kiam"], ` +
			`spec.template.spec.containers[name=kiam].args=["server","--role-base-arn-autodetect","--sync=1m"]`, pod},
		"kube2iam": {"DaemonSet/kube-system/kube2iam: spec.template.spec.containers[name=kube2iam].image=jtblin/kube2iam:0.11.2, " +
			`spec.template.spec.containers[name=kube2iam].args=["--auto-discover-base-arn","--iam-role-session-ttl","10m"]`, pod},
	}
	if len(fs) != len(want) {
		t.Fatalf("findings %+v", fs)
	}
	for _, f := range fs {
		var got []string
		for _, it := range f.EvidenceItems {
			got = append(got, it.String())
		}
		if w := want[f.Objects[0].Name]; !slices.Equal(got, w) {
			t.Errorf("%q: items\n  %s\nwant\n  %s", f.Title, strings.Join(got, "\n  "), strings.Join(w, "\n  "))
		}
	}
	if n := checktest.EvidenceTrue(t, fs, file); n != 4 {
		t.Errorf("%d items resolved, want 4", n)
	}
}
