package dns

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// The fixtures: 40 nodes of 8 cores. gap.json: CoreDNS with 2 replicas, no
// autoscaler, a 50Mi limit, autopath on and OOM-killed pods; node-local-dns
// on Calico with an ingress-restricting policy and an OOM-killed cache pod.
// clean.json: the same with a DNS autoscaler, 512Mi, no autopath, the
// policy egress-only and healthy caches.

func TestRegistered(t *testing.T) { checktest.Registered(t, Checks()) }

func run(t *testing.T, c check.Check, s *snapshot.Snapshot) ([]finding.Finding, *check.Context) {
	t.Helper()
	fs, ctx, ok := checktest.Run(t, c, s)
	if !ok {
		t.Fatalf("%s not evaluated", c.ID)
	}
	return fs, ctx
}

func titles(fs []finding.Finding) map[string]finding.Finding {
	out := map[string]finding.Finding{}
	for _, f := range fs {
		out[f.Title] = f
	}
	return out
}

func findTitle(t *testing.T, fs []finding.Finding, part string, sev finding.Severity) finding.Finding {
	t.Helper()
	for _, f := range fs {
		if strings.Contains(f.Title, part) {
			if f.Severity != sev {
				t.Errorf("%q: severity %v, want %v", f.Title, f.Severity, sev)
			}
			return f
		}
	}
	t.Fatalf("no finding with %q; have %v", part, titles(fs))
	return finding.Finding{}
}

func TestCapacityGap(t *testing.T) {
	fs, ctx := run(t, corednsCapacityCheck(), checktest.Complete(checktest.Load(t, "gap.json")))
	mem := findTitle(t, fs, "memory limit 50Mi", finding.High)
	if !strings.Contains(strings.Join(mem.Evidence, " "), "/ 250 + 56") {
		t.Errorf("autopath is on: the estimate should use /250 + 56: %v", mem.Evidence)
	}
	rep := findTitle(t, fs, "2 replicas for 40 schedulable nodes", finding.Medium)
	if !strings.Contains(rep.Message, "would run 3") {
		t.Errorf("40 nodes / 16 = 3 replicas: %s", rep.Message)
	}
	if !slices.Contains(rep.Cases, caseRebelMouse) || slices.Contains(mem.Cases, caseRebelMouse) {
		t.Errorf("the RebelMouse case explains the replica count only: replicas %v, memory %v", rep.Cases, mem.Cases)
	}
	findTitle(t, fs, "OOM-killed (2 pods)", finding.High)
	if len(fs) != 3 {
		t.Errorf("%d findings, want 3", len(fs))
	}
	if n := ctx.Notes(); len(n) != 0 {
		t.Errorf("notes %v", n)
	}
}

func TestCapacityClean(t *testing.T) {
	fs, ctx := run(t, corednsCapacityCheck(), checktest.Complete(checktest.Load(t, "clean.json")))
	for _, f := range fs {
		t.Errorf("unexpected: %s", f.Title)
	}
	if n := ctx.Notes(); len(n) != 0 {
		t.Errorf("notes %v", n)
	}
}

// Zalando's 100Mi limit against the guide at the size where it stops
// being enough: with autopath, (pods + services)/250 + 56 MB passes
// 100Mi (104.9 MB) above 12,225 objects.
func TestCapacityMemoryThreshold(t *testing.T) {
	for _, tt := range []struct {
		services int
		want     bool
	}{{12000, false}, {12500, true}} {
		s := checktest.Load(t, "gap.json")
		for i := range s.Deployments {
			if s.Deployments[i].Name == "coredns" {
				r := &s.Deployments[i].Spec.Template.Spec.Containers[0].Resources
				r.Limits = maps.Clone(r.Limits) // loaded workloads share equal resource lists
				r.Limits[corev1.ResourceMemory] = resource.MustParse("100Mi")
			}
		}
		for i := range tt.services {
			s.Services = append(s.Services, corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("s%d", i), Namespace: "x"}})
		}
		checktest.Complete(s)
		fs, _ := run(t, corednsCapacityCheck(), s)
		got := false
		for _, f := range fs {
			got = got || strings.Contains(f.Title, "memory limit 100Mi")
		}
		if got != tt.want {
			t.Errorf("%d services: memory finding %v, want %v", tt.services, got, tt.want)
		}
	}
}

// From files an autoscaler may exist outside the input: no replica
// finding, a note instead.
func TestCapacityFiles(t *testing.T) {
	fs, ctx := run(t, corednsCapacityCheck(), checktest.Load(t, "gap.json"))
	for _, f := range fs {
		if strings.Contains(f.Title, "replicas for") {
			t.Errorf("files: %s", f.Title)
		}
	}
	if _, ok := ctx.Notes()[ruleReplicas]; !ok {
		t.Errorf("want a note on %s, got %v", ruleReplicas, ctx.Notes())
	}
}

func TestNodelocalGap(t *testing.T) {
	fs, ctx := run(t, nodelocalDNSHazardsCheck(), checktest.Complete(checktest.Load(t, "gap.json")))
	pol := findTitle(t, fs, "Calico and 1 NetworkPolicy", finding.Medium)
	if !checktest.HasObject([]finding.Finding{pol}, "NetworkPolicy", "shop", "db-ingress") || checktest.HasObject([]finding.Finding{pol}, "NetworkPolicy", "web", "allow-all-in") {
		t.Errorf("want db-ingress and not the allow-all policy: %v", pol.Objects)
	}
	crash := findTitle(t, fs, "OOM-killed (1)", finding.High)
	if !checktest.HasObject([]finding.Finding{crash}, "Pod", "kube-system", "node-local-dns-1") {
		t.Errorf("want the OOM-killed pod named: %v", crash.Objects)
	}
	if len(fs) != 2 {
		t.Errorf("%d findings, want 2", len(fs))
	}
	if n := ctx.Notes(); len(n) != 0 {
		t.Errorf("notes %v", n)
	}
}

func TestNodelocalClean(t *testing.T) {
	fs, ctx := run(t, nodelocalDNSHazardsCheck(), checktest.Complete(checktest.Load(t, "clean.json")))
	for _, f := range fs {
		t.Errorf("unexpected: %s", f.Title)
	}
	if n := ctx.Notes(); len(n) != 0 {
		t.Errorf("notes %v", n)
	}
}

// Known absence is an answer: with every DaemonSet and Deployment read, a
// cluster without NodeLocal DNSCache or CoreDNS has none of their hazards
// (pass), not an unknown.
func TestKnownAbsentPasses(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "clean.json"))
	s.DaemonSets = nil
	var kept = s.Deployments[:0]
	for _, d := range s.Deployments {
		if d.Name != "coredns" {
			kept = append(kept, d)
		}
	}
	s.Deployments = kept
	for _, c := range Checks() {
		fs, ctx := run(t, c, s)
		if len(fs) != 0 || len(ctx.Notes()) != 0 {
			t.Errorf("%s: findings %v, notes %v; want a clean pass", c.ID, fs, ctx.Notes())
		}
	}
	// From files the same absence is unknown.
	files := checktest.Load(t, "clean.json")
	files.DaemonSets = nil
	if _, _, ok := checktest.Run(t, nodelocalDNSHazardsCheck(), files); ok {
		t.Error("nodelocal-dns-hazards evaluated files without any DaemonSet")
	}
}
