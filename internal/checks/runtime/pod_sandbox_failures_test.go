package runtime

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
	"github.com/kubegap/kubegap/library"
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
	// A required regression must exist in containerd-regressions.yaml.
	facts, err := loadContainerdFacts()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sigs {
		if s.Requires == nil || s.Requires.Regression == "" {
			continue
		}
		if !slices.ContainsFunc(facts.Regressions, func(r runtimeRegression) bool { return r.ID == s.Requires.Regression }) {
			t.Errorf("signature %s requires unknown regression %q", s.ID, s.Requires.Regression)
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
	// The AWS VPC CNI out of addresses (kubernetes/kubernetes#131071) is a
	// CNI failure without its own signature, and cites the MoJ case.
	vpc := `failed to setup network for sandbox "40d7": plugin type="aws-cni" name="aws-cni" failed (add): add cmd: failed to assign an IP address to container`
	for _, s := range sigs {
		if _, _, ok := s.match(vpc); ok {
			if s.ID != "cni-other" || !slices.Contains(s.Cases, "moj-cloud-platform-vpc-cni-prefix-delegation-missing-2023") {
				t.Errorf("VPC CNI address failure matched %s citing %v", s.ID, s.Cases)
			}
			break
		}
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
		{"bad unless", "signatures:\n- {id: a, title: t, remediation: r, cases: [c], sources: [s], patterns: [x], unless: ['(']}\n- {id: b, title: t, remediation: r, cases: [c], sources: [s]}\n"},
		{"empty requires", "signatures:\n- {id: a, title: t, remediation: r, cases: [c], sources: [s], patterns: [x], requires: {}}\n- {id: b, title: t, remediation: r, cases: [c], sources: [s]}\n"},
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
	fs, _, ok := checktest.Run(t, c, checktest.Load(t, "pod-sandbox-failures/gap.yaml"))
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
		if !checktest.HasObject(fs, o.kind, o.ns, o.name) {
			t.Errorf("%s %s/%s not named", o.kind, o.ns, o.name)
		}
	}
	if checktest.HasObject(fs, "Pod", "shop", "web-7d9f-c1") || checktest.HasObject(fs, "Node", "", "aks-np-3") {
		t.Error("the running pod on the upgraded node is reported")
	}
	if !checktest.EvidenceHas(f, "Node aks-np-1: 2 pods") || !checktest.EvidenceHas(f, "aks-np-1", "status.nodeInfo.osImage=Ubuntu 20.04.6 LTS") {
		t.Errorf("evidence lacks the per-node line with the OS: %q", f.Evidence)
	}
	if !checktest.EvidenceHas(f, "FailedCreatePodSandBox", "GLIBC_2.32") {
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
	fs, _, _ := checktest.Run(t, podSandboxFailuresCheck(), checktest.Load(t, "pod-sandbox-failures/other-signatures.yaml"))
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
			if !checktest.HasObject([]finding.Finding{*got}, "Node", "", tc.node) {
				t.Errorf("node %s not named", tc.node)
			}
		})
	}
	if len(fs) != 3 {
		t.Errorf("got %d findings, want 3", len(fs))
	}
	if checktest.HasObject(fs, "Pod", "data", "db-0") {
		t.Error("an event of an earlier pod with the same name is attributed to the new one")
	}
}

func TestPodSandboxFailuresSilent(t *testing.T) {
	fs, _, ok := checktest.Run(t, podSandboxFailuresCheck(), checktest.Load(t, "pod-sandbox-failures/healthy.yaml"))
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
	q := check.QuoteMessage(long, at, 200)
	if !strings.Contains(q, "GLIBC_2.34") {
		t.Errorf("window lost the match: %q", q)
	}
	if !strings.HasPrefix(q, "…") || !strings.HasSuffix(q, "…") {
		t.Errorf("cuts not marked: %q", q)
	}
	if got := check.QuoteMessage("a\n  b\tc", -1, 100); got != "a b c" {
		t.Errorf("whitespace not collapsed: %q", got)
	}
	if got := check.QuoteMessage("ünïcödé "+strings.Repeat("é", 300), -1, 51); !strings.HasPrefix(got, "ünïcödé") || !isValidUTF8(got) {
		t.Errorf("bad cut: %q", got)
	}
}

func isValidUTF8(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

func TestPodSandboxFailuresNotEvaluatedWithoutEvents(t *testing.T) {
	fs, notes := checktest.RunNotes(t, podSandboxFailuresCheck(), checktest.Load(t, "pod-sandbox-failures/no-events.yaml"))
	if n := notes[ruleStuckSandboxes]; len(fs) != 0 || !n.Skipped || !strings.Contains(n.Reason, "events are not in the input") {
		t.Errorf("stuck pods without any event in the input: findings %d, notes %+v", len(fs), notes)
	}
	// Nothing stuck: the answer is known without events.
	if _, _, ok := checktest.Run(t, podSandboxFailuresCheck(), checktest.Load(t, "../../availability/testdata/pdb-blocks-drain/healthy.yaml")); !ok {
		t.Error("not evaluated although no pod is stuck")
	}
}

// TestPodSandboxFailuresLinkNotFound: "Link not found" is the containerd
// chained-CNI regression only on an affected containerd with a chained
// attachment; a missing macvlan master is another CNI failure (issue 12,
// false finding 4).
func TestPodSandboxFailuresLinkNotFound(t *testing.T) {
	fs, notes := checktest.RunNotes(t, podSandboxFailuresCheck(), checktest.Load(t, "pod-sandbox-failures/link-not-found.yaml"))
	if len(fs) != 1 {
		for _, f := range fs {
			t.Logf("%v %s", f.Severity, f.Title)
		}
		t.Fatalf("%d findings, want one other CNI failure", len(fs))
	}
	f := fs[0]
	if f.Severity != finding.Medium || !strings.Contains(f.Title, "4 pods cannot start on 3 nodes: the CNI plugin failed in a way without a known signature") {
		t.Errorf("finding %v %q", f.Severity, f.Title)
	}
	if strings.Contains(f.Remediation, "Pin containerd") {
		t.Errorf("remediation blames containerd: %s", f.Remediation)
	}
	if len(notes) != 0 {
		t.Errorf("every part of the context was in the input, yet noted: %+v", notes)
	}
	for _, want := range []string{
		`says "failed to lookup master", which rules out`,
		"containerRuntimeVersion=containerd://1.7.27 is outside the range",
		"NetworkAttachmentDefinition edge/ipvlan-net spec.config has no plugin consuming",
	} {
		if !checktest.EvidenceHas(f, want) {
			t.Errorf("evidence lacks %q: %q", want, f.Evidence)
		}
	}

	// The regression itself, with its context: cited with the evidence.
	fs, _ = checktest.RunNotes(t, podSandboxFailuresCheck(), checktest.Load(t, "pod-sandbox-failures/other-signatures.yaml"))
	var chained *finding.Finding
	for i := range fs {
		if checktest.HasObject(fs[i:i+1], "Pod", "telco", "dpdk-app-0") {
			chained = &fs[i]
		}
	}
	if chained == nil || chained.Severity != finding.High {
		t.Fatalf("the chained regression is not reported high: %+v", chained)
	}
	if !checktest.EvidenceHas(*chained, "containerd://1.7.31 is in the affected range") ||
		!checktest.EvidenceHas(*chained, "NetworkAttachmentDefinition telco/bond-net spec.config plugins[0].type=sriov then plugins[1].type=bond") {
		t.Errorf("evidence lacks the runtime or the chain: %q", chained.Evidence)
	}

	// Without the nodes, the runtime is unknown: another failure, and the
	// rule says why.
	raw, err := os.ReadFile(filepath.Join("testdata", "pod-sandbox-failures", "other-signatures.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var docs []string
	for _, d := range strings.Split(string(raw), "\n---\n") {
		if !strings.Contains(d, "kind: Node\n") {
			docs = append(docs, d)
		}
	}
	noNodes := filepath.Join(t.TempDir(), "no-nodes.yaml")
	if err := os.WriteFile(noNodes, []byte(strings.Join(docs, "\n---\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := snapshot.LoadPaths([]string{noNodes})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Nodes) != 0 {
		t.Fatal("the node is still in the input")
	}
	fs, notes = checktest.RunNotes(t, podSandboxFailuresCheck(), s)
	for _, f := range fs {
		if !checktest.HasObject([]finding.Finding{f}, "Pod", "telco", "dpdk-app-0") {
			continue
		}
		if f.Severity == finding.High {
			t.Errorf("blamed on the regression without the node's runtime: %s", f.Title)
		}
		if !strings.HasSuffix(f.Title, "(perhaps cni-link-not-found; node not in the input)") {
			t.Errorf("title does not say what could not be told: %s", f.Title)
		}
	}
	if n := notes[ruleStuckSandboxes]; !strings.Contains(n.Reason, "cni-link-not-found only in part (their nodes are not in the input") {
		t.Errorf("notes: %+v", notes)
	}
}

// TestPodSandboxFailuresSandboxExists: a pod whose sandbox exists is not
// counted because of an older sandbox event (issue 12, false finding 5).
func TestPodSandboxFailuresSandboxExists(t *testing.T) {
	fs, notes := checktest.RunNotes(t, podSandboxFailuresCheck(), checktest.Load(t, "pod-sandbox-failures/sandbox-exists.yaml"))
	for _, f := range fs {
		t.Errorf("finding on pods whose sandbox exists: %s %v", f.Title, f.Objects)
	}
	if len(notes) != 0 {
		t.Errorf("notes: %+v", notes)
	}
}

// The finding names the DaemonSet whose init container writes into the
// host's /opt/cni/bin, where the failing azure-vnet lies, when it has a
// pod on a failing node, from complete input and from files without Nodes
// or ReplicaSets; a DaemonSet writing there only on other nodes is not
// named, nor is any without the installer in the input.
func TestPodSandboxFailuresInstaller(t *testing.T) {
	for name, s := range map[string]*snapshot.Snapshot{
		"files":           checktest.Load(t, "pod-sandbox-failures/gap.yaml", "pod-sandbox-failures/installer.yaml"),
		"files, no Nodes": checktest.Without(checktest.Load(t, "pod-sandbox-failures/gap.yaml", "pod-sandbox-failures/installer.yaml"), snapshot.Nodes, snapshot.ReplicaSets),
		"complete":        checktest.Complete(checktest.Load(t, "pod-sandbox-failures/gap.yaml", "pod-sandbox-failures/installer.yaml")),
	} {
		fs, _, ok := checktest.Run(t, podSandboxFailuresCheck(), s)
		if !ok || len(fs) != 1 {
			t.Fatalf("%s: want one finding, got %d (evaluated %v)", name, len(fs), ok)
		}
		f := fs[0]
		if !checktest.HasObject(fs, "DaemonSet", "kube-system", "azure-cns") || !strings.Contains(f.Message, "DaemonSet kube-system/azure-cns writes into") {
			t.Errorf("%s: the installer is not named: %s %v", name, f.Message, f.Objects)
		}
		if !checktest.EvidenceHas(f, "initContainers[0] can write into /opt/cni/bin", "/opt/cni/bin/azure-vnet") ||
			!checktest.EvidenceHas(f, "azure-cns has a pod on failing node aks-np-1") {
			t.Errorf("%s: evidence lacks the installer's mount: %q", name, f.Evidence)
		}
		if !checktest.EvidenceHas(f, "azure-cns initContainers[0] runs", "which names azure-vnet") {
			t.Errorf("%s: evidence should say the installer's command names the binary: %q", name, f.Evidence)
		}
		if checktest.HasObject(fs, "DaemonSet", "gpu", "gpu-cni") {
			t.Errorf("%s: gpu-cni runs only on aks-np-3, which does not fail", name)
		}
		if checktest.HasObject(fs, "DaemonSet", "ops", "node-tools") {
			t.Errorf("%s: node-tools only shares the directory, while azure-cns's command names the binary", name)
		}
	}
	fs, _, _ := checktest.Run(t, podSandboxFailuresCheck(), checktest.Load(t, "pod-sandbox-failures/gap.yaml"))
	for _, f := range fs {
		for _, o := range f.Objects {
			if o.Kind == "DaemonSet" {
				t.Errorf("no DaemonSet in the input, but %v named", o)
			}
		}
	}
}

// TestSandboxSignaturesCiteLibraryCases keeps the case IDs each sandbox
// signature cites in step with the library: a finding citing a missing
// case is a bug. (The check's own case list is TestChecksAndCasesCiteEachOther's.)
func TestSandboxSignaturesCiteLibraryCases(t *testing.T) {
	sigs, err := loadSandboxSignatures()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sigs {
		for _, id := range s.Cases {
			if _, err := fs.Stat(library.FS, "cases/"+id+".yaml"); err != nil {
				t.Errorf("sandbox signature %s cites %s, which the library lacks", s.ID, id)
			}
		}
	}
}
