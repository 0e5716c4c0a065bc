package versions

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
)

func TestVersionSkew(t *testing.T) {
	type want struct {
		severity finding.Severity
		nodes    []string
		title    string // substring
	}
	cases := []struct {
		name   string
		file   string
		server string
		want   []want // in report order: most severe first, then by pool
	}{
		{
			name: "offline mid-upgrade: the 1.34 pool lags",
			file: "version-skew/mid-upgrade.yaml",
			want: []want{{finding.Medium, []string{"aks-np2004-0", "aks-np2004-1"}, "Node pool kubernetes.azure.com/agentpool=np2004 lags the control plane (1.35): kubelet 1.34 (2 nodes)"}},
		},
		{
			name:   "live: too new, too old, lagging",
			file:   "version-skew/skewed.yaml",
			server: "v1.35.4",
			want: []want{
				{finding.High, []string{"canary-1"}, "newer than the API server 1.35"},
				{finding.High, []string{"legacy-1"}, "Nodes without a pool label: 1 kubelet beyond the supported version skew"},
				{finding.High, []string{"ip-10-0-2-1", "ip-10-0-2-2"}, "eks.amazonaws.com/nodegroup=ng-old"},
				{finding.Medium, []string{"gke-mid-1"}, "cloud.google.com/gke-nodepool=mid lags"},
			},
		},
		{
			name: "offline: the newest kubelet stands in for the control plane",
			file: "version-skew/skewed.yaml",
			want: []want{
				{finding.High, []string{"legacy-1"}, "without a pool label: 1 kubelet beyond"},
				{finding.High, []string{"gke-mid-1"}, "gke-nodepool=mid"},
				{finding.High, []string{"ip-10-0-2-1", "ip-10-0-2-2"}, "ng-old"},
				{finding.Medium, []string{"ip-10-0-1-1"}, "ng-new lags"},
			},
		},
		{
			name:   "live: every pool behind the control plane is low",
			file:   "version-skew/uniform.yaml",
			server: "v1.36.1-gke.100",
			want: []want{
				{finding.Low, []string{"n1", "n2"}, "agentpool=a"},
				{finding.Low, []string{"n3"}, "agentpool=b"},
			},
		},
		{name: "offline uniform: silent", file: "version-skew/uniform.yaml"},
		{name: "live uniform on the server's minor: silent", file: "version-skew/uniform.yaml", server: "v1.35.9"},
		{
			name:   "live: a pool upgraded before the control plane",
			file:   "version-skew/mid-upgrade.yaml",
			server: "v1.34.2",
			want:   []want{{finding.High, []string{"aks-np2204-0", "aks-np2204-1"}, "np2204: 2 kubelets newer than the API server 1.34"}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := checktest.Load(t, c.file)
			s.Source.ServerVersion = c.server
			fs, _, ok := checktest.Run(t, versionSkewCheck(), s)
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
					t.Errorf("finding %d: severity %v, want %v (%s)", i, f.Severity, w.severity, f.Title)
				}
				if n := checktest.NodeNames(f); !slices.Equal(n, w.nodes) {
					t.Errorf("finding %d: nodes %v, want %v", i, n, w.nodes)
				}
				if !strings.Contains(f.Title, w.title) {
					t.Errorf("finding %d: title %q lacks %q", i, f.Title, w.title)
				}
				if !slices.Equal(f.Cases, []string{"azure-cni-v2-glibc"}) {
					t.Errorf("cases %v", f.Cases)
				}
				if len(f.Evidence) < 2 || !strings.HasPrefix(f.Evidence[0], "control plane ") {
					t.Errorf("evidence %v", f.Evidence)
				}
				for _, n := range w.nodes {
					if !checktest.Quotes(f, "Node", n, "status.nodeInfo.kubeletVersion") {
						t.Errorf("no kubelet evidence for %s", n)
					}
				}
			}
		})
	}
}

func TestVersionSkewNotEvaluated(t *testing.T) {
	for _, file := range []string{"version-skew/no-versions.yaml", "../../runtime/testdata/host-binary-glibc/v2-installer.yaml"} {
		t.Run(file, func(t *testing.T) {
			if _, _, ok := checktest.Run(t, versionSkewCheck(), checktest.Load(t, file)); ok {
				t.Error("evaluated")
			}
		})
	}
}

func TestParseKubeVersion(t *testing.T) {
	cases := []struct {
		in   string
		want check.KubeVersion
		ok   bool
	}{
		{"v1.35.4", check.KubeVersion{Major: 1, Minor: 35, Patch: 4}, true},
		{"v1.30.0-eks-036c24b", check.KubeVersion{Major: 1, Minor: 30, Patch: 0}, true},
		{"v1.30.5-gke.1014001", check.KubeVersion{Major: 1, Minor: 30, Patch: 5}, true},
		{"v1.29.3+k3s1", check.KubeVersion{Major: 1, Minor: 29, Patch: 3}, true},
		{"1.28", check.KubeVersion{Major: 1, Minor: 28, Patch: 0}, true},
		{"", check.KubeVersion{}, false},
		{"v1", check.KubeVersion{}, false},
		{"v1.x.3", check.KubeVersion{}, false},
		{"v1.2.3.4", check.KubeVersion{}, false},
		{"v-1.2.3", check.KubeVersion{}, false},
	}
	for _, c := range cases {
		got, ok := check.ParseKubeVersion(c.in)
		if ok != c.ok || got != c.want {
			t.Errorf("ParseKubeVersion(%q) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
	if maxKubeletSkew(check.KubeVersion{Major: 1, Minor: 24, Patch: 0}) != 2 || maxKubeletSkew(check.KubeVersion{Major: 1, Minor: 25, Patch: 0}) != 3 {
		t.Error("maxKubeletSkew")
	}
}

// TestKubeProxySkew: kube-proxy beyond the skew policy is found from its
// image, with the control-plane version taken from a kube-apiserver static
// pod when the input has no server version; a current one is not.
func TestKubeProxySkew(t *testing.T) {
	s := checktest.Load(t, "version-skew/kube-proxy.yaml")
	ctx := &check.Context{Snapshot: s}
	fs, err := versionSkewCheck().Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 1 || !checktest.HasObject(fs, "DaemonSet", "kube-system", "kube-proxy") || fs[0].Severity != finding.High {
		t.Fatalf("findings = %+v, want one high on DaemonSet kube-system/kube-proxy", fs)
	}
	if !strings.Contains(fs[0].Title, "kube-proxy 1.30 is beyond the supported skew behind the API server 1.35") ||
		!strings.Contains(strings.Join(fs[0].Evidence, "\n"), "Pod kube-system/kube-apiserver-cp-1") {
		t.Errorf("finding = %+v", fs[0])
	}
	if len(ctx.Notes()) != 0 {
		t.Errorf("the static pod gives the server version, yet rules are noted: %+v", ctx.Notes())
	}

	// Too new: the same kube-proxy against an older control plane.
	s.Source.ServerVersion = "v1.29.3"
	fs, _ = versionSkewCheck().Run(&check.Context{Snapshot: s})
	var newer int
	for _, f := range fs {
		if strings.Contains(f.Title, "kube-proxy") && strings.Contains(f.Title, "newer than the API server 1.29") {
			newer++
		}
	}
	if newer != 2 {
		t.Errorf("want both kube-proxies newer than 1.29: %+v", fs)
	}
}

// TestVersionSkewWithoutServerVersion: offline input without any server
// version leaves the kubelet rule partial and skips kube-proxy: unknown,
// never pass.
func TestVersionSkewWithoutServerVersion(t *testing.T) {
	s := checktest.Load(t, "version-skew/uniform.yaml")
	ctx := &check.Context{Snapshot: s}
	if _, err := versionSkewCheck().Run(ctx); err != nil {
		t.Fatal(err)
	}
	n := ctx.Notes()
	if n[ruleKubeletSkew].Skipped || n[ruleKubeletSkew].Reason == "" || !n[ruleKubeProxySkew].Skipped {
		t.Errorf("notes = %+v, want kubelet-skew partial and kube-proxy-skew skipped", n)
	}
}
