package checks

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubegap/kubegap/internal/finding"
)

// auditDay is the clock the node-os-lifecycle tests run at.
func auditDay() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) }

func clockAt(t time.Time) func() time.Time { return func() time.Time { return t } }

func TestNodeOSLifecycle(t *testing.T) {
	const dir = "node-os-lifecycle/"
	type want struct {
		severity finding.Severity
		nodes    []string
		title    string
		cases    []string
	}
	eolCases := []string{"ubuntu-systemd-dns-2022", "azure-cni-v2-glibc"} // glibc below 2.34
	eolNewGlibc := []string{"ubuntu-systemd-dns-2022"}
	staleCases := []string{"ubuntu-systemd-dns-2022", "ubuntu-hwe-5-13-kernel-container-panic"}
	monoCases := []string{"ubuntu-systemd-dns-2022", "datadog-systemd-networkd-cilium-2023", "ubuntu-hwe-5-13-kernel-container-panic"}
	cases := []struct {
		name     string
		files    []string
		now      time.Time
		want     []want
		evidence []string
	}{
		{
			name:  "releases past standard support",
			files: []string{"eol.yaml"},
			now:   auditDay(),
			want: []want{
				{finding.Medium, []string{"bookworm-0", "bookworm-1"}, "2 nodes run Debian 12, past end of standard support (2026-06-10)", eolNewGlibc},
				{finding.Medium, []string{"bionic-0", "bionic-1"}, "2 nodes run Ubuntu 18.04, past end of standard support (2023-05-31)", eolCases},
			},
			evidence: []string{`Node bionic-0 status.nodeInfo.osImage="Ubuntu 18.04.6 LTS" → Ubuntu 18.04, standard support ended 2023-05-31`},
		},
		{
			name:  "an earlier clock: Debian 12 still supported",
			files: []string{"eol.yaml"},
			now:   time.Date(2026, 6, 10, 23, 0, 0, 0, time.UTC),
			want:  []want{{finding.Medium, []string{"bionic-0", "bionic-1"}, "Ubuntu 18.04", eolCases}},
		},
		{
			name:  "AKS node images months old",
			files: []string{"stale-image.yaml"},
			now:   auditDay(),
			want: []want{
				{finding.Low, []string{"aks-npa-0", "aks-npa-1"}, "Node pool agentpool=npa runs a node image from 2026-06", staleCases},
				{finding.Low, []string{"aks-npb-0"}, "agentpool=npb runs a node image from 2026-08", staleCases},
				{finding.Medium, []string{"aks-npc-0"}, "agentpool=npc runs a node image from 2026-03", staleCases},
			},
			evidence: []string{"Node aks-npa-0 metadata.labels[kubernetes.azure.com/node-image-version]=AKSUbuntu-2204gen2containerd-202606.15.0 (image date 2026-06-15), metadata.creationTimestamp=2026-06-20T08:00:00Z"},
		},
		{name: "fresh AKS node images", files: []string{"fresh-image.yaml", "daemonsets.yaml"}, now: auditDay()},
		{
			name:  "one image and kernel everywhere, nothing staging updates",
			files: []string{"monoculture-nodes.yaml", "daemonsets.yaml"},
			now:   auditDay(),
			want: []want{{finding.Low, []string{"worker-0", "worker-1", "worker-2", "worker-3"},
				`4 of 4 nodes run one OS image and kernel (Ubuntu 22.04.5 LTS, 5.15.0-1089-azure)`, monoCases}},
			evidence: []string{`4 of 4 nodes report status.nodeInfo.osImage="Ubuntu 22.04.5 LTS", kernelVersion="5.15.0-1089-azure"`, "no DaemonSet or Deployment matches a patch coordinator"},
		},
		{name: "monoculture with kured", files: []string{"monoculture-nodes.yaml", "daemonsets.yaml", "kured.yaml"}, now: auditDay()},
		{name: "monoculture of nodes replaced last week", files: []string{"young-nodes.yaml", "daemonsets.yaml"}, now: auditDay()},
		{name: "image-based OS", files: []string{"cos-nodes.yaml", "daemonsets.yaml"}, now: auditDay()},
		{name: "monoculture without DaemonSets in the input: cannot tell", files: []string{"monoculture-nodes.yaml"}, now: auditDay()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files := make([]string, len(c.files))
			for i, f := range c.files {
				files[i] = dir + f
			}
			fs, ok := runCheck(t, nodeOSLifecycleCheckAt(clockAt(c.now)), loadFixture(t, files...))
			if !ok {
				t.Fatal("not evaluated")
			}
			if len(fs) != len(c.want) {
				for _, f := range fs {
					t.Logf("%v %s %v", f.Severity, f.Title, nodeNames(f))
				}
				t.Fatalf("%d findings, want %d", len(fs), len(c.want))
			}
			for i, w := range c.want {
				f := fs[i]
				if f.Severity != w.severity {
					t.Errorf("finding %d: severity %v, want %v", i, f.Severity, w.severity)
				}
				if n := nodeNames(f); !slices.Equal(n, w.nodes) {
					t.Errorf("finding %d: nodes %v, want %v", i, n, w.nodes)
				}
				if !strings.Contains(f.Title, w.title) {
					t.Errorf("finding %d: title %q lacks %q", i, f.Title, w.title)
				}
				if !slices.Equal(f.Cases, w.cases) {
					t.Errorf("finding %d: cases %v, want %v", i, f.Cases, w.cases)
				}
				if f.Message == "" || f.Remediation == "" || len(f.Evidence) == 0 {
					t.Errorf("finding %d incomplete: %+v", i, f)
				}
			}
			for _, e := range c.evidence {
				found := false
				for _, f := range fs {
					found = found || anyEvidence(f, e)
				}
				if !found {
					t.Errorf("no evidence containing %q", e)
				}
			}
		})
	}
}

func TestNodeOSLifecycleMessages(t *testing.T) {
	fs, _ := runCheck(t, nodeOSLifecycleCheckAt(clockAt(auditDay())), loadFixture(t, "node-os-lifecycle/eol.yaml"))
	if len(fs) != 2 {
		t.Fatalf("%d findings", len(fs))
	}
	bionic := fs[1].Message
	for _, want := range []string{"2023-05-31", "until 2028-04-30", "glibc 2.27"} {
		if !strings.Contains(bionic, want) {
			t.Errorf("message lacks %q: %s", want, bionic)
		}
	}
	// The age grows by itself, so it is evidence, not message.
	if ev := strings.Join(fs[1].Evidence, "\n"); !strings.Contains(ev, "standard support ended 1279 days before this audit") ||
		strings.Contains(bionic, "1279") {
		t.Errorf("age not in the evidence only:\n%s\n%s", ev, bionic)
	}
	// Debian 12's LTS has not ended on the audit day either.
	if !strings.Contains(fs[0].Message, "until 2028-06-30") {
		t.Errorf("Debian message: %s", fs[0].Message)
	}
	late, _ := runCheck(t, nodeOSLifecycleCheckAt(clockAt(time.Date(2029, 1, 1, 0, 0, 0, 0, time.UTC))), loadFixture(t, "node-os-lifecycle/eol.yaml"))
	for _, f := range late {
		if strings.Contains(f.Title, "Ubuntu 18.04") && !strings.Contains(f.Message, "Extended support ended too, on 2028-04-30") {
			t.Errorf("after Pro support: %s", f.Message)
		}
	}
}

func TestNodeOSLifecycleNotEvaluated(t *testing.T) {
	for _, f := range []string{"node-os-lifecycle/no-os.yaml", "node-os-lifecycle/daemonsets.yaml"} {
		if _, ok := runCheck(t, nodeOSLifecycleCheckAt(clockAt(auditDay())), loadFixture(t, f)); ok {
			t.Errorf("%s: evaluated", f)
		}
	}
}

func TestParseAKSImageDate(t *testing.T) {
	cases := map[string]string{
		"AKSUbuntu-2204gen2containerd-202509.23.0": "2025-09-23",
		"AKSUbuntu-1804gen2containerd-2022.01.19":  "2022-01-19",
		"AKSCBLMariner-V2katagen2-202503.13.0":     "2025-03-13",
		"AKSAzureLinux-V3gen2-202609.15.0":         "2026-09-15",
		"AKSWindows-23H2-gen2":                     "",
		"AKSUbuntu-2204gen2containerd-202502.30.0": "",
		"AKSUbuntu-2204gen2containerd-202513.01.0": "",
		"AKSUbuntu-2204gen2containerd-20250x.01.0": "",
		"202509.23.0": "",
		"":            "",
	}
	for in, want := range cases {
		d, ok := parseAKSImageDate(in)
		got := ""
		if ok {
			got = d.Format(time.DateOnly)
		}
		if got != want {
			t.Errorf("parseAKSImageDate(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLifecycleFacts(t *testing.T) {
	f, err := loadLifecycleFacts()
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]bool{
		"ubuntu-20.04": true, "amazon-linux-2023": true, "cbl-mariner-2.0": true, "cbl-mariner": true,
		"cos": false, "bottlerocket": false, "talos": false, "flatcar": false, "windows-server": false, "rhcos-rhel9": false,
	} {
		if got := f.updatesInPlace(id); got != want {
			t.Errorf("updatesInPlace(%q) = %v, want %v", id, got, want)
		}
	}
	base := string(nodeOSLifecycleYAML)
	bad := map[string]string{
		"share":        strings.Replace(base, "monocultureShare: 0.9", "monocultureShare: 1.5", 1),
		"days":         strings.Replace(base, "staleDays: 90", "staleDays: 0", 1),
		"source":       strings.Replace(base, "source: https://github.com/kubereboot/kured", "source: kured.dev", 1),
		"unknownField": base + "\ncolour: red\n",
	}
	for name, doc := range bad {
		t.Run(name, func(t *testing.T) {
			if doc == base {
				t.Fatal("replacement did not apply")
			}
			if _, err := parseLifecycleFacts([]byte(doc)); err == nil {
				t.Error("accepted")
			}
		})
	}
}
