package versions

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubegap/kubegap/internal/check/checktest"

	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
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
	monoCases := []string{"ubuntu-systemd-dns-2022", "datadog-systemd-networkd-cilium-2023", "ubuntu-hwe-5-13-kernel-container-panic", "pgmac-simultaneous-three-node-reboot-2026"}
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
			evidence: []string{"bionic-0", "status.nodeInfo.osImage=Ubuntu 18.04.6 LTS", "Ubuntu 18.04: standard support ended 2023-05-31"},
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
			evidence: []string{"Node/aks-npa-0: metadata.labels[kubernetes.azure.com/node-image-version]=AKSUbuntu-2204gen2containerd-202606.15.0, metadata.creationTimestamp=2026-06-20T08:00:00Z"},
		},
		{name: "fresh AKS node images", files: []string{"fresh-image.yaml", "daemonsets.yaml"}, now: auditDay()},
		{
			name:  "one image and kernel everywhere, nothing staging updates",
			files: []string{"monoculture-nodes.yaml", "daemonsets.yaml"},
			now:   auditDay(),
			want: []want{{finding.Low, []string{"worker-0", "worker-1", "worker-2", "worker-3"},
				`4 of 4 nodes run one OS image and kernel (Ubuntu 22.04.5 LTS, 5.15.0-1089-azure)`, monoCases}},
			evidence: []string{"status.nodeInfo.osImage=Ubuntu 22.04.5 LTS, status.nodeInfo.kernelVersion=5.15.0-1089-azure", "4 of the 4 nodes in the input", "none of the DaemonSets in the input matches a patch coordinator"},
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
			fs, _, ok := checktest.Run(t, NodeOSLifecycleAt(clockAt(c.now)), checktest.Load(t, files...))
			if !ok {
				t.Fatal("not evaluated")
			}
			if len(fs) != len(c.want) {
				for _, f := range fs {
					t.Logf("%v %s %v", f.Severity, f.Title, checktest.NodeNames(f))
				}
				t.Fatalf("%d findings, want %d", len(fs), len(c.want))
			}
			for i, w := range c.want {
				f := fs[i]
				if f.Severity != w.severity {
					t.Errorf("finding %d: severity %v, want %v", i, f.Severity, w.severity)
				}
				if n := checktest.NodeNames(f); !slices.Equal(n, w.nodes) {
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
					found = found || checktest.AnyEvidence(f, e)
				}
				if !found {
					t.Errorf("no evidence containing %q", e)
				}
			}
		})
	}
}

func TestNodeOSLifecycleMessages(t *testing.T) {
	fs, _, _ := checktest.Run(t, NodeOSLifecycleAt(clockAt(auditDay())), checktest.Load(t, "node-os-lifecycle/eol.yaml"))
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
	if ev := strings.Join(fs[1].Evidence, "\n"); !strings.Contains(ev, "support ended 1279 days before this audit") ||
		strings.Contains(bionic, "1279") {
		t.Errorf("age not in the evidence only:\n%s\n%s", ev, bionic)
	}
	// Debian 12's LTS has not ended on the audit day either.
	if !strings.Contains(fs[0].Message, "until 2028-06-30") {
		t.Errorf("Debian message: %s", fs[0].Message)
	}
	late, _, _ := checktest.Run(t, NodeOSLifecycleAt(clockAt(time.Date(2029, 1, 1, 0, 0, 0, 0, time.UTC))), checktest.Load(t, "node-os-lifecycle/eol.yaml"))
	for _, f := range late {
		if strings.Contains(f.Title, "Ubuntu 18.04") && !strings.Contains(f.Message, "Extended support ended too, on 2028-04-30") {
			t.Errorf("after Pro support: %s", f.Message)
		}
	}
}

func TestNodeOSLifecycleNotEvaluated(t *testing.T) {
	for _, f := range []string{"node-os-lifecycle/no-os.yaml", "node-os-lifecycle/daemonsets.yaml"} {
		if _, _, ok := checktest.Run(t, NodeOSLifecycleAt(clockAt(auditDay())), checktest.Load(t, f)); ok {
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
		"ubuntu-20.04": true, "amazon-linux-2": true, "amazon-linux-2023": false, "cbl-mariner-2.0": true, "cbl-mariner": true,
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

// TestNodeOSLifecycleOpenWorld: "no patch coordinator" is said only when
// every DaemonSet and Deployment was read; else the finding says what was
// looked at and the rule is partial (issue 12, false finding 9).
func TestNodeOSLifecycleOpenWorld(t *testing.T) {
	c := NodeOSLifecycleAt(clockAt(auditDay()))
	load := func() *snapshot.Snapshot {
		return checktest.Load(t, "node-os-lifecycle/monoculture-nodes.yaml", "node-os-lifecycle/daemonsets.yaml")
	}
	fs, notes := checktest.RunNotes(t, c, load())
	if len(fs) != 1 {
		t.Fatalf("%d findings, want the monoculture", len(fs))
	}
	for _, e := range fs[0].Evidence {
		if strings.Contains(e, "no DaemonSet or Deployment matches") {
			t.Errorf("evidence claims every Deployment was looked at, but none were in the input: %q", e)
		}
	}
	if !checktest.AnyEvidence(fs[0], "Deployments (not in the input)") {
		t.Errorf("evidence does not say Deployments are unknown: %q", fs[0].Evidence)
	}
	if n, ok := notes[rulePatchMonoculture]; !ok || n.Skipped || !strings.Contains(n.Reason, "Deployments") {
		t.Errorf("patch-monoculture not noted partial for the missing Deployments: %+v", notes)
	}

	s := load()
	s.SetComplete(snapshot.DaemonSets, nil)
	s.SetComplete(snapshot.Deployments, nil)
	fs, notes = checktest.RunNotes(t, c, s)
	if len(fs) != 1 || !checktest.AnyEvidence(fs[0], "no DaemonSet or Deployment matches a patch coordinator") {
		t.Fatalf("complete input: %+v", fs)
	}
	if _, ok := notes[rulePatchMonoculture]; ok {
		t.Errorf("complete input, yet the rule is noted: %+v", notes)
	}
}

// TestNodeOSLifecycleLockedRelease: Amazon Linux 2023 AMIs are locked to a
// release (AWS deterministic upgrades), so a fleet of them is not "updated
// in place" (issue 12, false finding 10).
func TestNodeOSLifecycleLockedRelease(t *testing.T) {
	s := checktest.Load(t, "node-os-lifecycle/al2023-nodes.yaml", "node-os-lifecycle/daemonsets.yaml")
	s.SetComplete(snapshot.DaemonSets, nil)
	s.SetComplete(snapshot.Deployments, nil)
	fs, notes := checktest.RunNotes(t, NodeOSLifecycleAt(clockAt(auditDay())), s)
	for _, f := range fs {
		t.Errorf("finding on an AL2023 fleet: %s", f.Title)
	}
	if len(notes) != 0 {
		t.Errorf("notes on a known, supported OS: %+v", notes)
	}
}

// TestNodeOSLifecycleProviderWindows: the managed service's node image
// window decides where one is tabled, Windows nodes included (issue 12,
// false finding 11).
func TestNodeOSLifecycleProviderWindows(t *testing.T) {
	fs, notes := checktest.RunNotes(t, NodeOSLifecycleAt(clockAt(auditDay())), checktest.Load(t, "node-os-lifecycle/provider-windows.yaml"))
	var titles []string
	for _, f := range fs {
		titles = append(titles, f.Title)
	}
	want := []struct {
		title string
		nodes []string
	}{
		{"2 EKS nodes run Amazon Linux 2, past EKS's support for its node images (2025-11-26)", []string{"ip-10-0-2-0.ec2.internal", "ip-10-0-2-1.ec2.internal"}},
		{"1 AKS node runs Windows Server 2019, past AKS's support for its node images (2026-03-01)", []string{"akswin19000000"}},
	}
	if len(fs) != len(want) {
		t.Fatalf("findings %q, want %d", titles, len(want))
	}
	for i, w := range want {
		if fs[i].Title != w.title {
			t.Errorf("finding %d: %q, want %q", i, fs[i].Title, w.title)
		}
		if got := checktest.NodeNames(fs[i]); !slices.Equal(got, w.nodes) {
			t.Errorf("finding %d: nodes %v, want %v", i, got, w.nodes)
		}
	}
	// The EKS finding cites the Amazon Linux 2 AMI case; the AKS Windows
	// one does not cite the case about AKS's Linux images.
	if !slices.Contains(fs[0].Cases, caseEKSAL2Retired) || slices.Contains(fs[1].Cases, caseAKSNodeOSRetired) {
		t.Errorf("cases: EKS AL2 %v, AKS Windows %v", fs[0].Cases, fs[1].Cases)
	}
	if checktest.HasObject(fs, "Node", "", "aks-np2004-1234567-vmss000000") {
		t.Error("AKS Ubuntu 20.04 reported past support although AKS supports its images until 2027-03-17")
	}
	if !strings.Contains(fs[1].Message, "removes the node images on 2027-04-01") {
		t.Errorf("Windows 2019 message lacks the image removal: %s", fs[0].Message)
	}
	if checktest.HasObject(fs, "Node", "", "win22-selfmanaged") {
		t.Error("Windows Server 2022 reported past support; Microsoft's security updates run to 2031")
	}
	n := notes[ruleOSEndOfSupport]
	if !strings.Contains(n.Reason, "no support end is tabled for Windows Server 2025 (1 node)") || strings.Contains(n.Reason, "2022") {
		t.Errorf("want only the self-managed Windows Server 2025 node noted as unjudged: %+v", notes)
	}
	// Self-managed Windows is judged by Microsoft's dates.
	later, _ := checktest.RunNotes(t, NodeOSLifecycleAt(clockAt(time.Date(2032, 1, 1, 0, 0, 0, 0, time.UTC))), checktest.Load(t, "node-os-lifecycle/provider-windows.yaml"))
	found := false
	for _, f := range later {
		if slices.Equal(checktest.NodeNames(f), []string{"win22-selfmanaged"}) {
			found = strings.Contains(f.Title, "1 node runs Windows Server 2022, past end of standard support (2031-10-14)")
		}
	}
	if !found {
		t.Error("self-managed Windows Server 2022 not reported after 2031-10-14")
	}
}

// TestNodeOSLifecycleUnknownImages: images the table does not know are
// partial, never pass (issue 12, false finding 16).
func TestNodeOSLifecycleUnknownImages(t *testing.T) {
	fs, notes := checktest.RunNotes(t, NodeOSLifecycleAt(clockAt(auditDay())), checktest.Load(t, "node-os-lifecycle/unknown-images.yaml"))
	if len(fs) != 0 {
		t.Errorf("findings on unknown images: %+v", fs)
	}
	n, ok := notes[ruleOSEndOfSupport]
	if !ok || n.Skipped {
		t.Fatalf("end-of-support not noted partial: %+v", notes)
	}
	// Each image is on one node, and the note says so (it said "(0 nodes)"
	// when the count was looked up by the quoted name).
	for _, img := range []string{`"Ubuntu 20.10"`, `"Ubuntu Questing Quokka (development branch)"`, `"Debian GNU/Linux 7 (wheezy)"`} {
		if !strings.Contains(n.Reason, img+" (1 node)") {
			t.Errorf("note does not name %s: %s", img, n.Reason)
		}
	}
}

// TestNodeOSLifecycleAKSRetiredImage: an AKS pool on Ubuntu 18.04 is past
// AKS's window for its node images, and the finding cites the AKS case.
func TestNodeOSLifecycleAKSRetiredImage(t *testing.T) {
	fs, _ := checktest.RunNotes(t, NodeOSLifecycleAt(clockAt(auditDay())), checktest.Load(t, "node-os-lifecycle/aks-1804.yaml"))
	var eos []finding.Finding
	for _, f := range fs {
		if strings.Contains(f.Title, "past AKS's support") {
			eos = append(eos, f)
		}
	}
	if len(eos) != 1 || !checktest.HasObject(eos, "Node", "", "aks-np1804-1234567-vmss000000") {
		t.Fatalf("want one AKS end-of-support finding naming the node, got %+v", fs)
	}
	if !slices.Contains(eos[0].Cases, caseAKSNodeOSRetired) || slices.Contains(eos[0].Cases, caseEKSAL2Retired) {
		t.Errorf("cases %v, want the AKS retirement case and not the EKS one", eos[0].Cases)
	}
}
