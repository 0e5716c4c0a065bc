package checks

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/finding"
)

func TestSandboxSignaturesData(t *testing.T) {
	sigs, err := loadSandboxSignatures()
	if err != nil {
		t.Fatalf("embedded table: %v", err)
	}
	for _, s := range sigs {
		for _, src := range s.Sources {
			if !strings.HasPrefix(src, "https://") {
				t.Errorf("signature %s: source %q is not an https URL", s.ID, src)
			}
		}
	}
	// Each known signature must recognise the error text its source shows.
	samples := map[string]string{
		"glibc-version-not-found": "libc.so.6: version `GLIBC_2.34' not found (required by /opt/cni/bin/azure-vnet)",
		"cni-link-not-found":      `error adding container to network "bond-net": Link not found`,
		"name-resolution":         "dial tcp: lookup mcr.microsoft.com: Temporary failure in name resolution",
		"cni-other":               `plugin type="calico" failed (add): connection refused`,
		"other":                   "context deadline exceeded",
	}
	for id, msg := range samples {
		t.Run(id, func(t *testing.T) {
			for _, s := range sigs {
				if _, _, ok := s.match(msg); ok {
					if s.ID != id {
						t.Errorf("%q matched %s first, want %s", msg, s.ID, id)
					}
					return
				}
			}
			t.Errorf("%q matched nothing", msg)
		})
	}

	bad := []struct{ name, doc string }{
		{"bad regexp", "signatures:\n- {id: a, title: t, remediation: r, cases: [c], sources: [s], patterns: ['(']}\n- {id: b, title: t, remediation: r, cases: [c], sources: [s]}\n"},
		{"no catch-all", "signatures:\n- {id: a, title: t, remediation: r, cases: [c], sources: [s], patterns: [x]}\n"},
		{"catch-all not last", "signatures:\n- {id: a, title: t, remediation: r, cases: [c], sources: [s]}\n- {id: b, title: t, remediation: r, cases: [c], sources: [s], patterns: [x]}\n"},
		{"no case", "signatures:\n- {id: a, title: t, remediation: r, sources: [s]}\n"},
		{"unknown field", "signatures:\n- {id: a, title: t, remediation: r, cases: [c], sources: [s], pattern: x}\n"},
		{"duplicate id", "signatures:\n- {id: a, title: t, remediation: r, cases: [c], sources: [s], patterns: [x]}\n- {id: a, title: t, remediation: r, cases: [c], sources: [s]}\n"},
	}
	for _, tc := range bad {
		if _, err := parseSandboxSignatures([]byte(tc.doc)); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}

func TestPodSandboxFailuresGlibc(t *testing.T) {
	c := podSandboxFailuresCheck()
	fs, ok := runCheck(t, c, loadFixture(t, "pod-sandbox-failures/gap.yaml"))
	if !ok {
		t.Fatal("not evaluated")
	}
	if len(fs) != 1 {
		t.Fatalf("want one finding (one signature), got %d: %+v", len(fs), fs)
	}
	f := fs[0]
	if f.Severity != finding.High {
		t.Errorf("severity %v, want high for a known signature", f.Severity)
	}
	if !slices.Equal(f.Cases, []string{"azure-cni-v2-glibc"}) {
		t.Errorf("cases %v", f.Cases)
	}
	for _, o := range []struct{ kind, ns, name string }{
		{"Pod", "shop", "web-7d9f-a1"}, {"Pod", "shop", "web-7d9f-a2"}, {"Pod", "kube-system", "coredns-5d78-b1"},
		{"Node", "", "aks-np-1"}, {"Node", "", "aks-np-2"},
	} {
		if !hasObject(fs, o.kind, o.ns, o.name) {
			t.Errorf("%s %s/%s not named", o.kind, o.ns, o.name)
		}
	}
	if hasObject(fs, "Pod", "shop", "web-7d9f-c1") || hasObject(fs, "Node", "", "aks-np-3") {
		t.Error("the running pod on the upgraded node is reported")
	}
	if !evidenceHas(f, "Node aks-np-1: 2 pods", `osImage="Ubuntu 20.04.6 LTS"`) {
		t.Errorf("evidence lacks the per-node line with the OS: %q", f.Evidence)
	}
	if !evidenceHas(f, "FailedCreatePodSandBox", "GLIBC_2.32") {
		t.Errorf("evidence does not quote the event: %q", f.Evidence)
	}
	for _, e := range f.Evidence {
		if len(e) > 600 {
			t.Errorf("evidence line of %d bytes is not trimmed", len(e))
		}
		if strings.Contains(e, "\n") {
			t.Errorf("evidence line keeps newlines: %q", e)
		}
	}
	for _, want := range []string{"3 pods", "2 nodes", "GLIBC_2.32", "GLIBC_2.34"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message lacks %q: %s", want, f.Message)
		}
	}
}

func TestPodSandboxFailuresSignatures(t *testing.T) {
	fs, _ := runCheck(t, podSandboxFailuresCheck(), loadFixture(t, "pod-sandbox-failures/other-signatures.yaml"))
	tests := []struct {
		pod, node string
		sev       finding.Severity
		cases     []string
	}{
		{"dpdk-app-0", "worker-sriov-1", finding.High, []string{"containerd-chained-cni-regression"}},
		{"api-0", "bionic-node-7", finding.High, []string{"ubuntu-systemd-dns-2022"}},
		{"batch-1", "node-x", finding.Medium, []string{"azure-cni-v2-glibc", "containerd-chained-cni-regression"}},
	}
	for _, tc := range tests {
		t.Run(tc.pod, func(t *testing.T) {
			var got *finding.Finding
			for i := range fs {
				for _, o := range fs[i].Objects {
					if o.Kind == "Pod" && o.Name == tc.pod {
						got = &fs[i]
					}
				}
			}
			if got == nil {
				t.Fatalf("no finding names pod %s", tc.pod)
			}
			if got.Severity != tc.sev {
				t.Errorf("severity %v, want %v", got.Severity, tc.sev)
			}
			if !slices.Equal(got.Cases, tc.cases) {
				t.Errorf("cases %v, want %v", got.Cases, tc.cases)
			}
			if !hasObject([]finding.Finding{*got}, "Node", "", tc.node) {
				t.Errorf("node %s not named", tc.node)
			}
		})
	}
	if len(fs) != 3 {
		t.Errorf("got %d findings, want 3", len(fs))
	}
	if hasObject(fs, "Pod", "data", "db-0") {
		t.Error("an event of an earlier pod with the same name is attributed to the new one")
	}
}

func TestPodSandboxFailuresSilent(t *testing.T) {
	fs, ok := runCheck(t, podSandboxFailuresCheck(), loadFixture(t, "pod-sandbox-failures/healthy.yaml"))
	if !ok {
		t.Fatal("not evaluated")
	}
	if len(fs) != 0 {
		t.Errorf("findings on a cluster with no stuck sandbox: %+v", fs)
	}
}

func TestQuoteMessage(t *testing.T) {
	long := strings.Repeat("a", 400) + " version `GLIBC_2.34' not found " + strings.Repeat("b", 400)
	at := strings.Index(long, "version")
	q := quoteMessage(long, at, 200)
	if !strings.Contains(q, "GLIBC_2.34") {
		t.Errorf("window lost the match: %q", q)
	}
	if !strings.HasPrefix(q, "…") || !strings.HasSuffix(q, "…") {
		t.Errorf("cuts not marked: %q", q)
	}
	if got := quoteMessage("a\n  b\tc", -1, 100); got != "a b c" {
		t.Errorf("whitespace not collapsed: %q", got)
	}
	if got := quoteMessage("ünïcödé "+strings.Repeat("é", 300), -1, 51); !strings.HasPrefix(got, "ünïcödé") || !isValidUTF8(got) {
		t.Errorf("bad cut: %q", got)
	}
}

func isValidUTF8(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

func TestPodSandboxFailuresNotEvaluatedWithoutEvents(t *testing.T) {
	if _, ok := runCheck(t, podSandboxFailuresCheck(), loadFixture(t, "pod-sandbox-failures/no-events.yaml")); ok {
		t.Error("evaluated stuck pods without any event in the input")
	}
	// Nothing stuck: the answer is known without events.
	if _, ok := runCheck(t, podSandboxFailuresCheck(), loadFixture(t, "pdb-blocks-drain/healthy.yaml")); !ok {
		t.Error("not evaluated although no pod is stuck")
	}
}
