package runtime

import (
	"github.com/kubegap/kubegap/internal/check/checktest"
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

func TestContainerdChainedCNI(t *testing.T) {
	const dir = "containerd-chained-cni/"
	cases := []struct {
		name      string
		files     []string
		wantDS    string // namespace/name; "" = silent
		wantNodes []string
		evidence  []string
		// unchecked: the attachments are not all in the input, so only
		// the two other conditions are reported, at medium.
		unchecked bool
	}{
		{
			name:      "thick Multus in chroot mode, sriov then bond, containerd 1.7.29+",
			files:     []string{"nodes.yaml", "multus-thick.yaml", "nads.yaml"},
			wantDS:    "kube-system/kube-multus-ds",
			wantNodes: []string{"worker-0", "worker-1"},
			evidence: []string{
				"volumes[2].hostPath.path=/ is mounted at containers[0].volumeMounts[1].mountPath=/hostroot",
				"containers[0].image=ghcr.io/k8snetworkplumbingwg/multus-cni:v4.1.0-thick",
				"NetworkAttachmentDefinition telco/sriov-bond spec.config plugins[0].type=sriov then plugins[1].type=bond",
				"Node/worker-0: status.nodeInfo.containerRuntimeVersion=containerd://1.7.31",
				"Node/worker-1: status.nodeInfo.containerRuntimeVersion=containerd://1.7.29-1",
				"no fixed release known",
			},
		},
		{
			name:      "inline daemon config with chrootDir, recognised by image",
			files:     []string{"nodes.yaml", "multus-inline-config.yaml", "nads.yaml"},
			wantDS:    "networking/multus",
			wantNodes: []string{"worker-0", "worker-1"},
			evidence:  []string{`command/args[1] sets chrootDir`},
		},
		{
			name: "no chained attachment among those in the input", files: []string{"nodes.yaml", "multus-thick.yaml", "nads-unchained.yaml"},
			wantDS: "kube-system/kube-multus-ds", wantNodes: []string{"worker-0", "worker-1"}, unchecked: true,
			evidence: []string{"chained attachment not checked: none of the 4 NetworkAttachmentDefinitions in the input chains plugins"},
		},
		{
			name: "attachments not in the input", files: []string{"nodes.yaml", "multus-thick.yaml"},
			wantDS: "kube-system/kube-multus-ds", wantNodes: []string{"worker-0", "worker-1"}, unchecked: true,
			evidence: []string{
				"chained attachment not checked: NetworkAttachmentDefinitions are not in the input",
				"Node/worker-0: status.nodeInfo.containerRuntimeVersion=containerd://1.7.31",
				"containers[0].image=ghcr.io/k8snetworkplumbingwg/multus-cni:v4.1.0-thick",
			},
		},
		{name: "thin Multus, no chroot", files: []string{"nodes.yaml", "multus-thin.yaml", "nads.yaml"}},
		{name: "containerd before 1.7.29", files: []string{"nodes-clean.yaml", "multus-thick.yaml", "nads.yaml"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files := make([]string, len(c.files))
			for i, f := range c.files {
				files[i] = dir + f
			}
			s := checktest.Load(t, files...)
			fs, _, ok := checktest.Run(t, containerdChainedCNICheck(), s)
			if !ok {
				t.Fatal("not evaluated")
			}
			_, notes := checktest.RunNotes(t, containerdChainedCNICheck(), s)
			if _, noted := notes[ruleChainedCNI]; noted != c.unchecked {
				t.Errorf("rule noted partial: %v, want %v (%+v)", noted, c.unchecked, notes)
			}
			if c.wantDS == "" {
				if len(fs) != 0 {
					t.Fatalf("want silence, got %q", fs[0].Title)
				}
				return
			}
			if len(fs) != 1 {
				t.Fatalf("%d findings, want 1", len(fs))
			}
			f := fs[0]
			ns, name, _ := strings.Cut(c.wantDS, "/")
			sev := finding.High
			if c.unchecked {
				sev = finding.Medium
				if !strings.Contains(f.Title, "chained attachments could not be checked") {
					t.Errorf("title %q does not say the attachments were not checked", f.Title)
				}
			} else if !checktest.HasObject(fs, "NetworkAttachmentDefinition", "telco", "sriov-bond") {
				t.Errorf("the chained NAD is not named: %v", f.Objects)
			}
			if f.Severity != sev || !checktest.HasObject(fs, "DaemonSet", ns, name) {
				t.Errorf("severity %v (want %v), objects %v", f.Severity, sev, f.Objects)
			}
			for _, other := range []string{"sriov-net", "macvlan-tuned", "bond-first", "broken"} {
				if checktest.HasObject(fs, "NetworkAttachmentDefinition", "telco", other) {
					t.Errorf("NAD %s is not a creator-then-consumer chain but is named", other)
				}
			}
			if n := checktest.NodeNames(f); !slices.Equal(n, c.wantNodes) {
				t.Errorf("nodes %v, want %v", n, c.wantNodes)
			}
			if !slices.Equal(f.Cases, []string{"containerd-chained-cni-regression"}) {
				t.Errorf("cases %v", f.Cases)
			}
			for _, e := range c.evidence {
				if !checktest.AnyEvidence(f, e) {
					t.Errorf("no evidence containing %q in\n%s", e, strings.Join(f.Evidence, "\n"))
				}
			}
			if strings.Contains(f.Message+f.Remediation, "1.7.32") {
				t.Errorf("claims something about 1.7.32, which no source shows fixed: %s", f.Message)
			}
		})
	}
}

// TestContainerdChainedCNIAttachments: silence only on complete
// attachments; unreadable or absent ones give the two proven conditions at
// medium and a partial rule, never a pass (issue 12, false finding 13).
func TestContainerdChainedCNIAttachments(t *testing.T) {
	const dir = "containerd-chained-cni/"
	c := containerdChainedCNICheck()

	s := checktest.Load(t, dir+"nodes.yaml", dir+"multus-thick.yaml")
	s.SetCoverage(snapshot.NetworkAttachmentDefinitions, snapshot.StatusForbidden, "RBAC")
	fs, notes := checktest.RunNotes(t, c, s)
	if len(fs) != 1 || fs[0].Severity != finding.Medium || !checktest.AnyEvidence(fs[0], "could not be read (forbidden: RBAC)") {
		t.Errorf("forbidden attachments: %+v", fs)
	}
	if n, ok := notes[ruleChainedCNI]; !ok || n.Skipped {
		t.Errorf("forbidden attachments: rule not partial: %+v", notes)
	}

	// Not served: no CRD, so no attachments and nothing to report.
	s.SetCoverage(snapshot.NetworkAttachmentDefinitions, snapshot.StatusNotServed, "")
	s.SetComplete(snapshot.NetworkAttachmentDefinitions, nil)
	if fs, notes := checktest.RunNotes(t, c, s); len(fs) != 0 || len(notes) != 0 {
		t.Errorf("not served: %d findings, notes %+v", len(fs), notes)
	}

	// Every attachment read, none a chain: silence.
	s = checktest.Load(t, dir+"nodes.yaml", dir+"multus-thick.yaml", dir+"nads-unchained.yaml")
	s.SetComplete(snapshot.NetworkAttachmentDefinitions, nil)
	if fs, notes := checktest.RunNotes(t, c, s); len(fs) != 0 || len(notes) != 0 {
		t.Errorf("complete unchained attachments: %d findings, notes %+v", len(fs), notes)
	}

	if _, _, ok := checktest.Run(t, c, checktest.Load(t, dir+"multus-thick.yaml")); ok {
		t.Error("evaluated without nodes")
	}
}

func TestContainerdRegressionRange(t *testing.T) {
	f, err := loadContainerdFacts()
	if err != nil {
		t.Fatal(err)
	}
	reg := &f.Regressions[0]
	if reg.Case != "containerd-chained-cni-regression" || reg.hasFix {
		t.Fatalf("data: %+v", reg)
	}
	for v, want := range map[string]bool{
		"containerd://1.7.28":        false,
		"containerd://1.7.29":        true,
		"containerd://1.7.29-1":      true,
		"containerd://1.7.31":        true,
		"containerd://1.7.32":        true, // no fix known: not claimed fixed
		"containerd://1.7.40+azure":  true,
		"containerd://1.6.39":        false,
		"containerd://2.0.5":         false,
		"containerd://2.1.29":        false,
		"cri-o://1.7.31":             false,
		"docker://1.7.31":            false,
		"containerd://":              false,
		"containerd://not-a-version": false,
		"":                           false,
	} {
		if got := reg.affects(v); got != want {
			t.Errorf("affects(%q) = %v, want %v", v, got, want)
		}
	}
	withFix, err := parseContainerdFacts([]byte(strings.Replace(string(containerdRegressionsYAML), `fixedIn: ""`, `fixedIn: "1.7.35"`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if r := &withFix.Regressions[0]; !r.affects("containerd://1.7.34") || r.affects("containerd://1.7.35") {
		t.Error("fixedIn is not honoured")
	}
	bad := map[string]string{
		"fixBeforeStart": strings.Replace(string(containerdRegressionsYAML), `fixedIn: ""`, `fixedIn: "1.7.20"`, 1),
		"otherLine":      strings.Replace(string(containerdRegressionsYAML), `affectedFrom: "1.7.29"`, `affectedFrom: "2.0.1"`, 1),
		"noSources":      strings.Replace(string(containerdRegressionsYAML), "  sources:\n  - https://github.com/containerd/containerd/issues/13545\n", "", 1),
		"unknownField":   string(containerdRegressionsYAML) + "\ncolour: red\n",
		"noChains":       strings.Replace(string(containerdRegressionsYAML), "consumers: [bond]", "consumers: []", 1),
	}
	for name, doc := range bad {
		t.Run(name, func(t *testing.T) {
			if doc == string(containerdRegressionsYAML) {
				t.Fatal("replacement did not apply")
			}
			if _, err := parseContainerdFacts([]byte(doc)); err == nil {
				t.Error("accepted")
			}
		})
	}
}
