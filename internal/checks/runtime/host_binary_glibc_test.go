package runtime

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

func TestHostBinaryGlibc(t *testing.T) {
	cases := []struct {
		name      string
		files     []string
		images    map[string]check.ImageFacts
		wantDS    []string // namespace/name of DaemonSets with a finding
		severity  finding.Severity
		wantNodes []string
		evidence  []string
	}{
		{
			name:      "v2 installer on Ubuntu 20.04 nodes",
			files:     []string{"host-binary-glibc/nodes.yaml", "host-binary-glibc/v2-installer.yaml"},
			wantDS:    []string{"kube-system/azure-cns"},
			severity:  finding.High,
			wantNodes: []string{"aks-np2004-0", "aks-np2004-1"},
			evidence: []string{
				"spec.template.spec.initContainers[0].image=mcr.microsoft.com/containernetworking/v2/azure-cni:v1.8.11",
				"hostPath.path=/opt/cni/bin",
				"aks-np2004-0", `osImage "Ubuntu 20.04.6 LTS" → glibc 2.31`,
				"azure-container-networking/issues/4793",
			},
		},
		{
			name:   "static installer",
			files:  []string{"host-binary-glibc/nodes.yaml", "host-binary-glibc/static-installer.yaml"},
			wantDS: nil,
		},
		{
			name:      "unknown installer on a mixed fleet",
			files:     []string{"host-binary-glibc/nodes.yaml", "host-binary-glibc/unknown-installer.yaml"},
			wantDS:    []string{"kube-system/cilium"},
			severity:  finding.Medium,
			wantNodes: []string{"aks-gpu-0", "aks-np2004-0", "aks-np2004-1", "talos-0"},
			evidence:  []string{"volumes[0].hostPath.path=/opt (reaches /opt/cni/bin)", "initContainers[0].volumeMounts[0]"},
		},
		{
			name:   "unknown installer on a uniform fleet",
			files:  []string{"host-binary-glibc/uniform-nodes.yaml", "host-binary-glibc/unknown-installer.yaml"},
			wantDS: nil,
		},
		{
			name:      "inspected image needs a newer glibc than a uniform fleet has",
			files:     []string{"host-binary-glibc/uniform-nodes.yaml", "host-binary-glibc/unknown-installer.yaml"},
			images:    map[string]check.ImageFacts{"quay.io/cilium/cilium:v1.18.2": {LayersRead: true, Image: "quay.io/cilium/cilium:v1.18.2", MaxGlibc: "GLIBC_2.36", Executables: []string{"/cni/cilium-cni: GLIBC_2.36"}}},
			wantDS:    []string{"kube-system/cilium"},
			severity:  finding.High,
			wantNodes: []string{"n1", "n2"},
			evidence:  []string{"--inspect-images: quay.io/cilium/cilium:v1.18.2 needs GLIBC_2.36", "/cni/cilium-cni: GLIBC_2.36"},
		},
		{
			name:   "inspection says static: it takes precedence over the data file",
			files:  []string{"host-binary-glibc/nodes.yaml", "host-binary-glibc/v2-installer.yaml"},
			images: map[string]check.ImageFacts{"mcr.microsoft.com/containernetworking/v2/azure-cni:v1.8.11": {LayersRead: true, Image: "mcr.microsoft.com/containernetworking/v2/azure-cni:v1.8.11"}},
			wantDS: nil,
		},
		{
			name:  "inspected image installs a musl binary: every glibc node lacks the loader",
			files: []string{"host-binary-glibc/uniform-nodes.yaml", "host-binary-glibc/unknown-installer.yaml"},
			images: map[string]check.ImageFacts{"quay.io/cilium/cilium:v1.18.2": {LayersRead: true, Image: "quay.io/cilium/cilium:v1.18.2",
				Musl: []string{"/cni/cilium-cni: musl, loader /lib/ld-musl-x86_64.so.1"}, Interpreters: []string{"/lib/ld-musl-x86_64.so.1"}}},
			wantDS:    []string{"kube-system/cilium"},
			severity:  finding.High,
			wantNodes: []string{"n1", "n2"},
			evidence:  []string{"installs musl-linked binaries, whose loader a glibc host does not have", "/lib/ld-musl-x86_64.so.1"},
		},
		{
			name:  "inspected image needs libstdc++ whose presence node data cannot confirm",
			files: []string{"host-binary-glibc/uniform-nodes.yaml", "host-binary-glibc/unknown-installer.yaml"},
			images: map[string]check.ImageFacts{"quay.io/cilium/cilium:v1.18.2": {LayersRead: true, Image: "quay.io/cilium/cilium:v1.18.2",
				MaxGlibc: "2.17", MaxGlibcxx: "3.4.30", MaxCxxabi: "1.3.13", Executables: []string{"/cni/cilium-cni: GLIBC_2.17, GLIBCXX_3.4.30, CXXABI_1.3.13"}}},
			wantDS:    []string{"kube-system/cilium"},
			severity:  finding.Medium,
			wantNodes: []string{"n1", "n2"},
			evidence:  []string{"libstdc++.so.6 with GLIBCXX_3.4.30, CXXABI_1.3.13 from the host"},
		},
		{
			name:  "inspected image's binaries name a loader outside /lib and /lib64",
			files: []string{"host-binary-glibc/uniform-nodes.yaml", "host-binary-glibc/unknown-installer.yaml"},
			images: map[string]check.ImageFacts{"quay.io/cilium/cilium:v1.18.2": {LayersRead: true, Image: "quay.io/cilium/cilium:v1.18.2",
				MaxGlibc: "2.17", Interpreters: []string{"/lib64/ld-linux-x86-64.so.2", "/nix/store/x-glibc-2.40/lib/ld-linux-x86-64.so.2"}}},
			wantDS:    []string{"kube-system/cilium"},
			severity:  finding.Medium,
			wantNodes: []string{"n1", "n2"},
			evidence:  []string{"whose loader is /nix/store/x-glibc-2.40/lib/ld-linux-x86-64.so.2"},
		},
		{
			name:  "usual loaders and a met glibc need: no finding",
			files: []string{"host-binary-glibc/uniform-nodes.yaml", "host-binary-glibc/unknown-installer.yaml"},
			images: map[string]check.ImageFacts{"quay.io/cilium/cilium:v1.18.2": {LayersRead: true, Image: "quay.io/cilium/cilium:v1.18.2",
				MaxGlibc: "2.17", Interpreters: []string{"/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1"}}},
			wantDS: nil,
		},
		{
			name:  "C++ binary whose glibc need already fails: high, with the C++ need in evidence",
			files: []string{"host-binary-glibc/uniform-nodes.yaml", "host-binary-glibc/unknown-installer.yaml"},
			images: map[string]check.ImageFacts{"quay.io/cilium/cilium:v1.18.2": {LayersRead: true, Image: "quay.io/cilium/cilium:v1.18.2",
				MaxGlibc: "2.99", MaxGlibcxx: "3.4.30"}},
			wantDS:    []string{"kube-system/cilium"},
			severity:  finding.High,
			wantNodes: []string{"n1", "n2"},
			evidence:  []string{"needs GLIBC_2.99", "GLIBCXX_3.4.30"},
		},
		{
			name:      "inspection failed: the data file still answers",
			files:     []string{"host-binary-glibc/nodes.yaml", "host-binary-glibc/v2-installer.yaml"},
			images:    map[string]check.ImageFacts{"mcr.microsoft.com/containernetworking/v2/azure-cni:v1.8.11": {Err: "unauthorized"}},
			wantDS:    []string{"kube-system/azure-cns"},
			severity:  finding.High,
			wantNodes: []string{"aks-np2004-0", "aks-np2004-1"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := checktest.Load(t, c.files...)
			chk := hostBinaryGlibcCheck()
			fs, err := chk.Run(&check.Context{Snapshot: s, Images: c.images})
			if err != nil {
				t.Fatal(err)
			}
			// Reuse runCheck's invariants on the same findings.
			if c.images == nil {
				fs2, _, ok := checktest.Run(t, chk, s)
				if !ok || len(fs2) != len(fs) {
					t.Fatalf("runCheck disagrees: %d findings, evaluated %v", len(fs2), ok)
				}
			}
			var got []string
			for _, f := range fs {
				for _, o := range f.Objects {
					if o.Kind == "DaemonSet" {
						got = append(got, o.Namespace+"/"+o.Name)
					}
				}
			}
			if !slices.Equal(got, c.wantDS) {
				t.Fatalf("DaemonSets with findings = %v, want %v", got, c.wantDS)
			}
			if len(fs) == 0 {
				return
			}
			f := fs[0]
			if f.Severity != c.severity {
				t.Errorf("severity %v, want %v", f.Severity, c.severity)
			}
			if n := checktest.NodeNames(f); !slices.Equal(n, c.wantNodes) {
				t.Errorf("nodes %v, want %v", n, c.wantNodes)
			}
			if !slices.Contains(f.Cases, "azure-cni-v2-glibc") {
				t.Errorf("cases %v", f.Cases)
			}
			for _, e := range c.evidence {
				if !checktest.AnyEvidence(f, e) {
					t.Errorf("no evidence containing %q in\n%s", e, strings.Join(f.Evidence, "\n"))
				}
			}
			if f.Message == "" || f.Remediation == "" || f.Title == "" {
				t.Errorf("empty title, message or remediation: %+v", f)
			}
		})
	}
}

func TestHostBinaryGlibcMessage(t *testing.T) {
	s := checktest.Load(t, "host-binary-glibc/nodes.yaml", "host-binary-glibc/v2-installer.yaml")
	fs, _, _ := checktest.Run(t, hostBinaryGlibcCheck(), s)
	if len(fs) != 1 {
		t.Fatalf("%d findings", len(fs))
	}
	for _, want := range []string{"GLIBC_2.34", "2 of the 4 Linux nodes", "2 on Ubuntu 20.04 (glibc 2.31)"} {
		if !strings.Contains(fs[0].Message+fs[0].Title, want) {
			t.Errorf("message lacks %q: %s", want, fs[0].Message)
		}
	}
	if !strings.Contains(fs[0].Remediation, "mcr.microsoft.com/containernetworking/azure-cni") {
		t.Errorf("remediation does not name the static repository: %s", fs[0].Remediation)
	}
}

func TestHostBinaryGlibcNotEvaluatedWithoutNodes(t *testing.T) {
	s := checktest.Load(t, "host-binary-glibc/v2-installer.yaml")
	if _, _, ok := checktest.Run(t, hostBinaryGlibcCheck(), s); ok {
		t.Error("evaluated without nodes")
	}
	_, err := hostBinaryGlibcCheck().Run(&check.Context{Snapshot: s})
	if !errors.Is(err, check.ErrNotEvaluated) {
		t.Errorf("err = %v", err)
	}
}

// TestHostBinaryGlibcLargeFleet checks the node cap and that a large fleet
// is handled without per-pod work.
func TestHostBinaryGlibcLargeFleet(t *testing.T) {
	base := checktest.Load(t, "host-binary-glibc/nodes.yaml", "host-binary-glibc/v2-installer.yaml")
	s := snapshot.New(snapshot.Source{Type: snapshot.SourceFiles})
	s.DaemonSets = base.DaemonSets
	tmpl := base.Index().Node("aks-np2004-0") // Ubuntu 20.04
	for i := range 5000 {
		n := *tmpl.DeepCopy()
		n.Name = fmt.Sprintf("node-%04d", i)
		s.Nodes = append(s.Nodes, n)
	}
	s.Finish()
	fs, _, ok := checktest.Run(t, hostBinaryGlibcCheck(), s)
	if !ok || len(fs) != 1 {
		t.Fatalf("evaluated %v, %d findings", ok, len(fs))
	}
	if n := len(checktest.NodeNames(fs[0])); n != check.MaxListedObjects {
		t.Errorf("%d nodes named, want the cap %d", n, check.MaxListedObjects)
	}
	if len(fs[0].Evidence) > 10+check.MaxEvidence {
		t.Errorf("%d evidence lines", len(fs[0].Evidence))
	}
	if !strings.Contains(fs[0].Message, "4950 more") {
		t.Errorf("message does not count the nodes left off: %s", fs[0].Message)
	}
}

func TestHostBinaryFacts(t *testing.T) {
	f, err := loadHostBinaryFacts()
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Images) == 0 || len(f.HostBinaryPaths) == 0 {
		t.Fatal("empty facts")
	}
	dirs := []struct {
		path string
		ok   bool
	}{
		{"/opt/cni/bin", true}, {"/opt/cni/bin/", true}, {"/opt/cni", true}, {"/opt", true}, {"/", true},
		{"/usr/lib/x86_64-linux-gnu", true}, {"/home/kubernetes/bin", true},
		{"/var/log", false}, {"/etc/cni/net.d", false}, {"/var/lib/kubelet", false}, {"/optional", false},
		{"/run/containerd", false},
		// Kernel modules are not userland binaries; their parents still count.
		{"/lib/modules", false}, {"/lib/modules/6.8.0-1015-azure/extra", false}, {"/usr/lib/modules", false},
		{"/lib", true}, {"/usr/lib", true}, {"/lib/modules-extra", true},
	}
	for _, d := range dirs {
		if _, ok := f.hostBinaryDir(d.path); ok != d.ok {
			t.Errorf("hostBinaryDir(%q) = %v, want %v", d.path, ok, d.ok)
		}
	}
	refs := map[string]string{
		"mcr.microsoft.com/containernetworking/v2/azure-cni:v1.8.11":         "mcr.microsoft.com/containernetworking/v2/azure-cni",
		"mcr.microsoft.com/containernetworking/azure-cni@sha256:abc":         "mcr.microsoft.com/containernetworking/azure-cni",
		"localhost:5000/cni:v1@sha256:abc":                                   "localhost:5000/cni",
		"localhost:5000/cni":                                                 "localhost:5000/cni",
		"MCR.microsoft.com/containernetworking/v2/azure-cni:v1.7.17":         "mcr.microsoft.com/containernetworking/v2/azure-cni",
		"mcr.microsoft.com/containernetworking/v2/azure-cni:v1.8.11@sha256:": "mcr.microsoft.com/containernetworking/v2/azure-cni",
	}
	for in, want := range refs {
		if got := check.ImageRepository(in); got != want {
			t.Errorf("check.ImageRepository(%q) = %q, want %q", in, got, want)
		}
	}
	bad := map[string]string{
		"noPaths":       `images: []`,
		"relativePath":  "hostBinaryPaths: [opt/cni/bin]",
		"root":          "hostBinaryPaths: [/]",
		"tagInRepo":     "hostBinaryPaths: [/opt/cni/bin]\nimages: [{repository: a/b:v1, linkage: static, sources: [x]}]",
		"noSources":     "hostBinaryPaths: [/opt/cni/bin]\nimages: [{repository: a/b, linkage: static}]",
		"badLinkage":    "hostBinaryPaths: [/opt/cni/bin]\nimages: [{repository: a/b, linkage: maybe, sources: [x]}]",
		"dynamicNoVer":  "hostBinaryPaths: [/opt/cni/bin]\nimages: [{repository: a/b, linkage: dynamic, sources: [x]}]",
		"staticWithVer": "hostBinaryPaths: [/opt/cni/bin]\nimages: [{repository: a/b, linkage: static, glibc: '2.34', sources: [x]}]",
		"duplicate":     "hostBinaryPaths: [/opt/cni/bin]\nimages: [{repository: a/b, linkage: static, sources: [x]}, {repository: a/b, linkage: static, sources: [x]}]",
		"unknownField":  "hostBinaryPaths: [/opt/cni/bin]\ncolour: red",
	}
	for name, doc := range bad {
		t.Run(name, func(t *testing.T) {
			if _, err := parseHostBinaryFacts([]byte(doc)); err == nil {
				t.Errorf("accepted %q", doc)
			}
		})
	}
}

// TestHostBinaryGlibcKernelModules: a writable /lib/modules (Falco's driver
// loader, GPU driver installers) holds kernel modules, not binaries that
// run against the host's glibc (issue 12, false finding 12).
func TestHostBinaryGlibcKernelModules(t *testing.T) {
	fs, notes := checktest.RunNotes(t, hostBinaryGlibcCheck(), checktest.Load(t, "host-binary-glibc/nodes.yaml", "host-binary-glibc/kernel-modules.yaml"))
	for _, f := range fs {
		t.Errorf("kernel module writer reported: %s", f.Title)
	}
	if len(notes) != 0 {
		t.Errorf("notes: %+v", notes)
	}
}

// TestHostBinaryGlibcUnknownNodes: nodes whose glibc is unknown leave the
// rule partial: an installer needing a newer glibc may break them.
func TestHostBinaryGlibcUnknownNodes(t *testing.T) {
	_, notes := checktest.RunNotes(t, hostBinaryGlibcCheck(), checktest.Load(t, "host-binary-glibc/unknown-os-nodes.yaml", "host-binary-glibc/v2-installer.yaml"))
	n, ok := notes[ruleHostBinaryGlibc]
	if !ok || n.Skipped || !strings.Contains(n.Reason, "kube-system/azure-cns can write into a host binary directory on 2 nodes whose glibc is unknown") {
		t.Errorf("notes: %+v", notes)
	}
}

func TestUsualLoader(t *testing.T) {
	for p, want := range map[string]bool{
		"/lib64/ld-linux-x86-64.so.2":       true,
		"/lib/ld-linux-aarch64.so.1":        true,
		"/lib64/ld64.so.2":                  true,
		"/lib/ld-musl-x86_64.so.1":          true,
		"/opt/app/lib/ld-linux-x86-64.so.2": false,
		"/lib64/ld-custom.so":               false,
		"ld-linux-x86-64.so.2":              false,
	} {
		if got := usualLoader(p); got != want {
			t.Errorf("usualLoader(%q) = %v, want %v", p, got, want)
		}
	}
}

// TestHostBinaryGlibcUnknownImageUniformFleet is issue 28's defect 3: on
// a uniform Ubuntu 20.04 fleet, a DaemonSet writing into /opt/cni/bin from
// an image whose glibc need kubegap does not know (not inspected, the
// inspection failed, only its manifest read) gives no finding, but the
// rule is partial and names the image and the commands that would tell.
// Once an inspection knows the need, and the nodes meet it, it passes.
func TestHostBinaryGlibcUnknownImageUniformFleet(t *testing.T) {
	const image = "quay.io/cilium/cilium:v1.18.2"
	load := func() *snapshot.Snapshot {
		return checktest.Complete(checktest.Load(t, "host-binary-glibc/ubuntu2004-nodes.yaml", "host-binary-glibc/unknown-installer.yaml"))
	}
	for _, tc := range []struct {
		name   string
		images map[string]check.ImageFacts
		why    string
	}{
		{"not inspected", nil, "not inspected, and not in kubegap's data"},
		{"inspection failed", map[string]check.ImageFacts{image: {Image: image, Err: "GET https://quay.io/v2/: unauthorized"}}, "could not read it: GET https://quay.io/v2/: unauthorized"},
		{"manifest only", map[string]check.ImageFacts{image: {Image: image, MediaType: "application/vnd.docker.distribution.manifest.v1+prettyjws"}}, "read only its manifest"},
		{"another image inspected", map[string]check.ImageFacts{"registry.k8s.io/pause:3.10": {Image: "registry.k8s.io/pause:3.10", LayersRead: true}}, "did not inspect it"},
	} {
		fs, ctx, ok := checktest.RunImages(t, hostBinaryGlibcCheck(), load(), tc.images)
		n, noted := ctx.Notes()[ruleHostBinaryGlibc]
		if !ok || len(fs) != 0 || !noted || n.Skipped {
			t.Errorf("%s: evaluated %v, findings %+v, notes %v; want no finding and the rule partial", tc.name, ok, fs, ctx.Notes())
			continue
		}
		for _, want := range []string{"DaemonSet kube-system/cilium", image + " (initContainers[0])", tc.why,
			"--inspect-images", "`kubegap image inspect " + image + "`"} {
			if !strings.Contains(n.Reason, want) {
				t.Errorf("%s: the note %q does not say %q", tc.name, n.Reason, want)
			}
		}
	}
	met := map[string]check.ImageFacts{image: {Image: image, LayersRead: true, MaxGlibc: "2.17", Executables: []string{"/cni/cilium-cni: GLIBC_2.17"}}}
	checktest.QuietImages(t, hostBinaryGlibcCheck(), load(), met)
}
