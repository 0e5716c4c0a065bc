package runtime

import (
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	tunCase    = "runc-1-2-drops-tun-tap-default-allow-2024"
	noFileCase = "eks-ami-v20231220-containerd-nofile-1024-2023"
)

// Before the updates: the three tun users are medium (no node on a listed
// runtime yet), the Envoy pods on the Amazon Linux 2 node low, each citing
// its case, and every evidence item is true of the fixture.
func TestRuntimeDefaultChangeGap(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "runtime-default-change-exposure/gap.yaml"))
	fs, _, ok := checktest.Run(t, runtimeDefaultChangeExposureCheck(), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	tun := byRule(fs, ruleTunTap)
	if len(tun) != 1 || tun[0].Severity != finding.Medium || tun[0].Cases[0] != tunCase {
		t.Fatalf("tun findings %v, want one medium citing %s", tun, tunCase)
	}
	for _, o := range []struct{ kind, ns, name string }{{"StatefulSet", "tailscale", "ts-web-abcde"},
		{"Deployment", "media", "myapp"}, {"Deployment", "vpn", "openvpn"}} {
		if !checktest.HasObject(tun, o.kind, o.ns, o.name) {
			t.Errorf("tun finding does not name %s/%s/%s", o.kind, o.ns, o.name)
		}
	}
	if len(tun[0].Objects) != 3 {
		t.Errorf("tun finding names %v, want the three users only", tun[0].Objects)
	}
	nofile := byRule(fs, ruleNoFile)
	if len(nofile) != 1 || nofile[0].Severity != finding.Low || nofile[0].Cases[0] != noFileCase {
		t.Fatalf("nofile findings %v, want one low citing %s", nofile, noFileCase)
	}
	if !strings.Contains(nofile[0].Message, "inference") || len(nofile[0].Objects) != 2 {
		t.Errorf("nofile finding must name the two Envoy pods and say it is an inference: %v %q", nofile[0].Objects, nofile[0].Message)
	}
	if len(fs) != 2 {
		t.Errorf("%d findings, want 2", len(fs))
	}
	checktest.EvidenceTrue(t, fs, "runtime-default-change-exposure/gap.yaml")
}

// The trigger: the workers move to a runtime the table lists, and the tun
// users become high, with the nodes quoted.
func TestRuntimeDefaultChangeOnListedRuntimeIsHigh(t *testing.T) {
	for field, value := range map[string]string{"containerd": "containerd://1.7.24-1", "containerd2": "containerd://2.0.1",
		"kubelet": "v1.31.3+k3s1", "os": "Talos (v1.8.3)"} {
		s := checktest.Complete(checktest.Load(t, "runtime-default-change-exposure/gap.yaml"))
		for i := range s.Nodes {
			if strings.HasPrefix(s.Nodes[i].Name, "worker-") {
				switch field {
				case "containerd", "containerd2":
					s.Nodes[i].Status.NodeInfo.ContainerRuntimeVersion = value
				case "kubelet":
					s.Nodes[i].Status.NodeInfo.KubeletVersion = value
				case "os":
					s.Nodes[i].Status.NodeInfo.OSImage = value
				}
			}
		}
		fs, _, _ := checktest.Run(t, runtimeDefaultChangeExposureCheck(), s)
		tun := byRule(fs, ruleTunTap)
		if len(tun) != 1 || tun[0].Severity != finding.High || !strings.Contains(strings.Join(tun[0].Evidence, "\n"), "worker-0") {
			t.Errorf("%s %s: %v, want one high quoting the workers", field, value, tun)
		}
	}
	// Releases past the fix, and before the change, are not listed.
	for _, rt := range []string{"containerd://1.7.25", "containerd://2.0.2", "containerd://1.7.23"} {
		s := checktest.Complete(checktest.Load(t, "runtime-default-change-exposure/gap.yaml"))
		for i := range s.Nodes {
			s.Nodes[i].Status.NodeInfo.ContainerRuntimeVersion = rt
		}
		fs, _, _ := checktest.Run(t, runtimeDefaultChangeExposureCheck(), s)
		if tun := byRule(fs, ruleTunTap); len(tun) != 1 || tun[0].Severity != finding.Medium {
			t.Errorf("%s: %v, want the medium finding only", rt, tun)
		}
	}
}

// A workload the table's placement keeps off the changed nodes stays
// medium: the join is by the nodes it can run on.
func TestRuntimeDefaultChangePlacement(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "runtime-default-change-exposure/gap.yaml"))
	for i := range s.Nodes {
		if s.Nodes[i].Name == "worker-0" {
			s.Nodes[i].Status.NodeInfo.ContainerRuntimeVersion = "containerd://1.7.24"
			s.Nodes[i].Labels["pool"] = "new"
		}
	}
	for i := range s.Deployments {
		if s.Deployments[i].Name == "openvpn" {
			s.Deployments[i].Spec.Template.Spec.NodeSelector = map[string]string{"pool": "old"}
		}
	}
	fs, _, _ := checktest.Run(t, runtimeDefaultChangeExposureCheck(), s)
	for _, f := range byRule(fs, ruleTunTap) {
		vpn := checktest.HasObject([]finding.Finding{f}, "Deployment", "vpn", "openvpn")
		if vpn != (f.Severity == finding.Medium) {
			t.Errorf("%s finding names %v: openvpn, pinned off the changed node, must be medium and only it", f.Severity, f.Objects)
		}
	}
}

// After the workarounds (privileged) and on Amazon Linux 2023: quiet.
func TestRuntimeDefaultChangeClean(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "runtime-default-change-exposure/clean.yaml"))
	checktest.Quiet(t, runtimeDefaultChangeExposureCheck(), s)
}

// Open world: a bare pod mounting the device cannot be judged (pods keep
// no security context), so the tun rule is partial, never pass.
func TestRuntimeDefaultChangeBarePodIsPartial(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "runtime-default-change-exposure/clean.yaml"))
	s.Pods = append(s.Pods, snapshot.Pod{})
	p := &s.Pods[len(s.Pods)-1]
	p.Own()
	p.Name, p.Namespace = "vpn-debug", "vpn"
	p.Spec.Own()
	p.Spec.Volumes = []snapshot.HostPathVolume{{Name: "tun", Path: "/dev/net/tun"}}
	_, ctx, _ := checktest.Run(t, runtimeDefaultChangeExposureCheck(), s)
	if _, ok := ctx.Notes()[ruleTunTap]; !ok {
		t.Error("a bare pod mounting /dev/net/tun must leave the tun rule partial")
	}
}

// Every row of the data table has a source, and every change a case the
// check cites.
func TestRuntimeDefaultChangeRowsSourced(t *testing.T) {
	raw, err := os.ReadFile("data/runtime-default-change-exposure.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string][]map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for _, list := range []string{"changes", "nodes", "images"} {
		if len(doc[list]) == 0 {
			t.Errorf("no %s rows", list)
		}
		for _, row := range doc[list] {
			src, _ := row["sources"].([]any)
			if len(src) == 0 {
				t.Errorf("%s row %v has no sources", list, row["id"])
			}
			for _, u := range src {
				if s, _ := u.(string); !strings.HasPrefix(s, "https://") {
					t.Errorf("%s row %v: source %v is not an https URL", list, row["id"], u)
				}
			}
		}
	}
	c := runtimeDefaultChangeExposureCheck()
	for _, row := range doc["changes"] {
		if _, ok := c.Relation(row["case"].(string)); !ok {
			t.Errorf("change %v cites %v, which the check does not link", row["id"], row["case"])
		}
	}
}

const containerdConfigCase = "containerd-2-registry-mirrors-break-node-patching-daemonsets-2024-2026"

// Before the move to containerd 2: the GKE sample's private-registry
// DaemonSet mounts the host's /etc writable from a privileged init
// container on containerd 1.7 nodes. Its script is in a ConfigMap, so the
// finding is low and says what was not read; it cites the case.
func TestContainerdConfigPatcherBeforeContainerd2(t *testing.T) {
	const file = "runtime-default-change-exposure/containerd-config-gap.yaml"
	s := checktest.Complete(checktest.Load(t, file))
	fs, _, ok := checktest.Run(t, runtimeDefaultChangeExposureCheck(), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	got := byRule(fs, ruleContainerdConfig)
	if len(got) != 1 || got[0].Severity != finding.Low || got[0].Cases[0] != containerdConfigCase {
		t.Fatalf("findings %v, want one low citing %s", got, containerdConfigCase)
	}
	if !checktest.HasObject(got, "DaemonSet", "default", "cert-daemonset") || !strings.Contains(got[0].Message, "ConfigMap") {
		t.Errorf("finding must name the DaemonSet and say its script was not read: %v %q", got[0].Objects, got[0].Message)
	}
	if len(fs) != 1 {
		t.Errorf("%d findings, want 1", len(fs))
	}
	checktest.EvidenceTrue(t, fs, file)
}

// The severity follows the nodes' containerd major and whether the pod
// spec itself spells an inline registry table.
func TestContainerdConfigPatcherSeverity(t *testing.T) {
	for _, tc := range []struct {
		name, runtime string
		inline        bool
		want          finding.Severity
	}{
		{"containerd 2, script in a ConfigMap", "containerd://2.0.4", false, finding.Medium},
		{"containerd 1.7, tables in the arguments", "containerd://1.7.27", true, finding.Medium},
		{"containerd 2, tables in the arguments", "containerd://2.0.4", true, finding.High},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := checktest.Complete(checktest.Load(t, "runtime-default-change-exposure/containerd-config-gap.yaml"))
			for i := range s.Nodes {
				s.Nodes[i].Status.NodeInfo.ContainerRuntimeVersion = tc.runtime
			}
			if tc.inline {
				s.DaemonSets[0].Spec.Template.Spec.InitContainers[0].Args = []string{
					`[plugins."io.containerd.grpc.v1.cri".registry.mirrors."registry.mycompany.com"]`}
			}
			fs, _, _ := checktest.Run(t, runtimeDefaultChangeExposureCheck(), s)
			got := byRule(fs, ruleContainerdConfig)
			if len(got) != 1 || got[0].Severity != tc.want {
				t.Fatalf("findings %v, want one %v", got, tc.want)
			}
			if tc.inline && !strings.Contains(strings.Join(got[0].Evidence, " "), "registry.mirrors") {
				t.Errorf("evidence %q does not quote the argument", got[0].Evidence)
			}
		})
	}
}

// CNI installers, read-only /etc mounts and unprivileged readers are not
// configuration patchers, on containerd 2 nodes either.
func TestContainerdConfigPatcherClean(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "runtime-default-change-exposure/containerd-config-clean.yaml"))
	fs, _, ok := checktest.Run(t, runtimeDefaultChangeExposureCheck(), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	if got := byRule(fs, ruleContainerdConfig); len(got) != 0 {
		t.Errorf("findings %v, want none", got)
	}
}
