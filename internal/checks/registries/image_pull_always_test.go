package registries

import (
	"github.com/kubegap/kubegap/internal/check/checktest"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
)

func TestPullRateLimitData(t *testing.T) {
	rl, err := loadPullRateLimit()
	if err != nil {
		t.Fatalf("embedded table: %v", err)
	}
	for _, src := range rl.Sources {
		if !strings.HasPrefix(src, "https://") {
			t.Errorf("source %q is not an https URL", src)
		}
	}
	tests := []struct {
		msg  string
		want bool
	}{
		{`Failed to pull image "nginx": toomanyrequests: You have reached your pull rate limit.`, true},
		{`Failed to pull image "x": unexpected status code 429 Too Many Requests`, true},
		{`Error: ErrImagePull: pull access denied, repository does not exist`, false},
		{`Readiness probe failed: HTTP probe failed with statuscode: 429`, false},
		{`Failed to pull image "ghcr.io/acme/x:1.0": rpc error: code = Unknown desc = failed to resolve reference "ghcr.io/acme/x:1.0": unexpected status from HEAD request: 429 Too Many Requests`, true},
		{`Failed to pull image "quay.io/a/b:2": failed to do request: HTTP/1.1 429 returned by registry`, true},
		// Issue 12, false finding 3: the digits of a tag, or a repository
		// name, inside the quoted reference are not the registry's answer.
		{`Failed to pull image "registry.acme.io/api:1.0.429": rpc error: code = NotFound desc = failed to pull and unpack image "registry.acme.io/api:1.0.429": failed to resolve reference "registry.acme.io/api:1.0.429": registry.acme.io/api:1.0.429: not found`, false},
		{`Failed to pull image "registry.acme.io/api:429": rpc error: code = NotFound desc = failed to resolve reference \"registry.acme.io/api:429\": registry.acme.io/api:429: not found`, false},
		{`Failed to pull image "ghcr.io/acme/rate-limiter:2.0": rpc error: code = Unknown desc = failed to resolve reference "ghcr.io/acme/rate-limiter:2.0": ghcr.io/acme/rate-limiter:2.0: not found`, false},
	}
	for _, tc := range tests {
		if _, got := rl.matches(tc.msg); got != tc.want {
			t.Errorf("matches(%q) = %v, want %v", tc.msg, got, tc.want)
		}
	}
	if _, err := parsePullRateLimit([]byte("pullContext: ['(']\nrateLimited: [x]\npublicRegistries: [docker.io]\nsources: [s]\n")); err == nil {
		t.Error("accepted a bad regexp")
	}
	if _, err := parsePullRateLimit([]byte("pullContext: [x]\nsources: [s]\n")); err == nil {
		t.Error("accepted a table without rate-limit patterns")
	}
}

func TestEffectivePullPolicy(t *testing.T) {
	tests := []struct {
		image  string
		policy corev1.PullPolicy
		want   corev1.PullPolicy
		reg    string
	}{
		{"nginx", "", corev1.PullAlways, "docker.io"},
		{"nginx:latest", "", corev1.PullAlways, "docker.io"},
		{"acme/agent:1.2", "", corev1.PullIfNotPresent, "docker.io"},
		{"registry.example.com:5000/a/b", "", corev1.PullAlways, "registry.example.com:5000"},
		{"registry.example.com:5000/a/b:1.0", "", corev1.PullIfNotPresent, "registry.example.com:5000"},
		{"localhost/b@sha256:abc", "", corev1.PullIfNotPresent, "localhost"},
		{"ghcr.io/a/b:latest", corev1.PullNever, corev1.PullNever, "ghcr.io"},
	}
	for _, tc := range tests {
		got, _ := effectivePullPolicy(&corev1.Container{Image: tc.image, ImagePullPolicy: tc.policy})
		if got != tc.want {
			t.Errorf("effectivePullPolicy(%q, %q) = %s, want %s", tc.image, tc.policy, got, tc.want)
		}
		if r := check.ImageRegistry(tc.image); r != tc.reg {
			t.Errorf("check.ImageRegistry(%q) = %s, want %s", tc.image, r, tc.reg)
		}
	}
}

func TestImagePullAlwaysFires(t *testing.T) {
	fs, _, ok := checktest.Run(t, imagePullAlwaysCheck(), checktest.Load(t, "image-pull-always/gap.yaml"))
	if !ok {
		t.Fatal("not evaluated")
	}
	tests := []struct {
		kind, ns, name string
		sev            finding.Severity
		objects        []string // kind/ns/name
		evidence       []string
		cases          []string
	}{
		{
			kind: "DaemonSet", ns: "kube-system", name: "log-agent", sev: finding.High,
			evidence: []string{"containers[0].image=acme/log-agent:latest, spec.template.spec.containers[0].imagePullPolicy absent", "status.desiredNumberScheduled=1000"},
			cases:    []string{"daemonset-pull-always-nat-ratelimit", "github-sidecar-oom-pull-always-registry", "docker-hub-pull-rate-limits"},
		},
		{
			kind: "DaemonSet", ns: "monitoring", name: "node-exporter", sev: finding.High,
			objects:  []string{"Pod/monitoring/node-exporter-a", "Node//node-a"},
			evidence: []string{"containers[0].imagePullPolicy=Always", "CrashLoopBackOff restartCount=57"},
			cases:    []string{"daemonset-pull-always-nat-ratelimit", "github-sidecar-oom-pull-always-registry"},
		},
		{
			kind: "DaemonSet", ns: "security", name: "scanner", sev: finding.Medium,
			evidence: []string{"containers[0].image=registry.example.com:5000/sec/scanner:2.1, spec.template.spec.containers[0].imagePullPolicy=Always"},
		},
		{
			kind: "DaemonSet", ns: "kube-system", name: "cni-helper", sev: finding.Low,
			evidence: []string{"image example.azurecr.io/cni-helper has no version tag"},
			cases:    []string{"daemonset-pull-always-nat-ratelimit"},
		},
		{
			kind: "Deployment", ns: "shop", name: "frontend", sev: finding.High,
			objects:  []string{"Pod/shop/frontend-6f7d-q1", "Node//node-c"},
			evidence: []string{"containers[1].image=ghcr.io/acme/proxy:1.0, spec.template.spec.containers[1].imagePullPolicy=Always", "runs 40 replicas (spec.replicas", "containerStatuses[sidecar]"},
		},
		{
			kind: "StatefulSet", ns: "data", name: "cassandra", sev: finding.Medium,
			evidence: []string{"runs 30 replicas (spec.replicas"},
			cases:    []string{"daemonset-pull-always-nat-ratelimit", "github-sidecar-oom-pull-always-registry", "docker-hub-pull-rate-limits"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, ok := checktest.FindingAbout(fs, tc.kind, tc.ns, tc.name)
			if !ok {
				t.Fatalf("no finding about %s %s/%s", tc.kind, tc.ns, tc.name)
			}
			if f.Severity != tc.sev {
				t.Errorf("severity %v, want %v", f.Severity, tc.sev)
			}
			for _, o := range tc.objects {
				parts := strings.SplitN(o, "/", 3)
				if !checktest.HasObject([]finding.Finding{f}, parts[0], parts[1], parts[2]) {
					t.Errorf("%s not named; objects %v", o, f.Objects)
				}
			}
			for _, e := range tc.evidence {
				if !checktest.EvidenceHas(f, e) {
					t.Errorf("no evidence has %q: %q", e, f.Evidence)
				}
			}
			if tc.cases != nil && !slices.Equal(f.Cases, tc.cases) {
				t.Errorf("cases %v, want %v", f.Cases, tc.cases)
			}
		})
	}
	if checktest.HasObject(fs, "DaemonSet", "kube-system", "pinned-agent") {
		t.Error("a digest-pinned image is flagged")
	}
	if checktest.HasObject(fs, "Pod", "monitoring", "node-exporter-b") {
		t.Error("a healthy pod is named as crash-looping")
	}

	// The rate-limited pull: one finding for docker.io naming pod and node.
	var rate *finding.Finding
	for i := range fs {
		if strings.Contains(fs[i].Title, "rate limit") {
			rate = &fs[i]
		}
	}
	if rate == nil {
		t.Fatal("no finding for the rate-limited pull")
	}
	if rate.Severity != finding.High || !strings.HasPrefix(rate.Title, "docker.io") {
		t.Errorf("rate-limit finding: %v %q", rate.Severity, rate.Title)
	}
	if !checktest.HasObject([]finding.Finding{*rate}, "Pod", "shop", "frontend-6f7d-q2") || !checktest.HasObject([]finding.Finding{*rate}, "Node", "", "node-d") {
		t.Errorf("rate-limit finding objects %v", rate.Objects)
	}
	if !checktest.EvidenceHas(*rate, "toomanyrequests") {
		t.Errorf("rate-limit evidence does not quote the registry: %q", rate.Evidence)
	}
	if len(fs) != 7 {
		t.Errorf("got %d findings, want 7", len(fs))
	}
}

func TestImagePullAlwaysSilent(t *testing.T) {
	fs, _, ok := checktest.Run(t, imagePullAlwaysCheck(), checktest.Load(t, "image-pull-always/healthy.yaml"))
	if !ok {
		t.Fatal("not evaluated")
	}
	if len(fs) != 0 {
		t.Errorf("findings on pinned images and harmless events: %+v", fs)
	}
}

func TestImagePullAlwaysMatchesOwnersWithoutUIDs(t *testing.T) {
	fs, _, ok := checktest.Run(t, imagePullAlwaysCheck(), checktest.Load(t, "image-pull-always/no-uids.yaml"))
	if !ok {
		t.Fatal("not evaluated")
	}
	a, okA := checktest.FindingAbout(fs, "DaemonSet", "monitoring", "agent-a")
	b, okB := checktest.FindingAbout(fs, "DaemonSet", "monitoring", "agent-b")
	if !okA || !okB {
		t.Fatalf("want findings about both DaemonSets, got %d findings", len(fs))
	}
	// Without UIDs, the owner reference's kind and name pick the owner.
	if !checktest.HasObject([]finding.Finding{a}, "Pod", "monitoring", "agent-a-x") || !checktest.EvidenceHas(a, "restartCount=9") {
		t.Errorf("agent-a does not name its crash-looping pod; objects %v", a.Objects)
	}
	if checktest.HasObject([]finding.Finding{b}, "Pod", "monitoring", "agent-a-x") {
		t.Errorf("agent-b claims agent-a's pod; objects %v", b.Objects)
	}
}

// TestImagePullAlwaysTemplates: issue 12, false finding 17. Placeholders
// are not images; a DaemonSet without status is sized from the Nodes.
func TestImagePullAlwaysTemplates(t *testing.T) {
	c := imagePullAlwaysCheck()
	ctx := &check.Context{Snapshot: checktest.Load(t, "image-pull-always/templates.yaml")}
	fs, err := c.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := checktest.FindingAbout(fs, "DaemonSet", "kube-system", "calico-node"); ok {
		t.Errorf("template placeholders judged as images: %s: %q", f.Title, f.Evidence)
	}
	n, ok := ctx.Notes()[pullRuleDaemonSets]
	if !ok || n.Skipped || !strings.Contains(n.Reason, "${CNI_IMAGE} is an unresolved template placeholder") {
		t.Errorf("the DaemonSet rule does not say what it could not judge: %+v", ctx.Notes())
	}
	f, ok := checktest.FindingAbout(fs, "DaemonSet", "logging", "log-agent")
	if !ok {
		t.Fatalf("no finding about the :latest agent: %+v", fs)
	}
	if strings.Contains(f.Title+f.Message, "unknown number") {
		t.Errorf("nodes in the input, yet the reach is unknown: %s", f.Message)
	}
	if !strings.Contains(f.Title, "an estimated 2 nodes") {
		t.Errorf("title %q does not give the estimate", f.Title)
	}
	if !checktest.EvidenceHas(f, "has no status; estimated from the Nodes in the input: 2 of 4") {
		t.Errorf("evidence does not say the scale is an estimate: %q", f.Evidence)
	}
	if len(fs) != 1 {
		t.Errorf("got %d findings, want 1: %+v", len(fs), fs)
	}
}

// A DaemonSet on no node pulls nothing, and <image_url> is not an image:
// neither is a finding (issue 23).
func TestImagePullAlwaysZeroNodesAndPlaceholders(t *testing.T) {
	ctx := &check.Context{Snapshot: checktest.Load(t, "image-pull-always/zero-nodes.yaml")}
	fs, err := imagePullAlwaysCheck().Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"gpu-agent", "arm-agent", "example-driver"} {
		for _, f := range fs {
			if f.Objects[0].Name == name {
				t.Errorf("%s reported: %s %q", name, f.Title, f.Evidence)
			}
		}
	}
	if _, ok := checktest.FindingAbout(fs, "DaemonSet", "logging", "log-agent"); !ok || len(fs) != 1 {
		t.Errorf("want only the log agent on 2 nodes reported, got %+v", fs)
	}
	if n := ctx.Notes()[pullRuleDaemonSets]; !strings.Contains(n.Reason, "<image_url> is an unresolved template placeholder") {
		t.Errorf("the placeholder is not named as unjudged: %+v", ctx.Notes())
	}
}
