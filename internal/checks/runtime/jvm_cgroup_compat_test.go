package runtime

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

// jvmImages is what --inspect-images reads from the fixtures' images (the
// CLI test reads such facts from a real registry).
func jvmImages() map[string]check.ImageFacts {
	rt := func(v, date string) []check.JavaRuntime {
		return []check.JavaRuntime{{Home: "/opt/java/openjdk", Version: v, Date: date, VM: "Hotspot"}}
	}
	return map[string]check.ImageFacts{
		"registry.example.com/shop/orders:3.2":  {LayersRead: true, MediaType: ociType, Java: rt("11.0.14", "2022-01-18")},
		"registry.example.com/shop/billing:1.0": {LayersRead: true, MediaType: ociType, Java: rt("21.0.9", "2025-10-21")},
		"registry.example.com/shop/orders:3.3":  {LayersRead: true, MediaType: ociType, Java: rt("17.0.15", "2025-04-15")},
		"registry.example.com/shop/billing:1.1": {LayersRead: true, MediaType: ociType, Java: rt("25.0.1", "2025-10-21")},
	}
}

func byRule(fs []finding.Finding, rule string) []finding.Finding {
	var out []finding.Finding
	for _, f := range fs {
		if f.Rule == rule {
			out = append(out, f)
		}
	}
	return out
}

func TestJVMCgroupCompatGap(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "jvm-cgroup-compat/gap.yaml"))
	fs, _, ok := checktest.RunImages(t, jvmCgroupCompatCheck(), s, jvmImages())
	if !ok || len(fs) != 2 {
		t.Fatalf("evaluated %v, findings %+v, want two", ok, fs)
	}
	v2 := byRule(fs, ruleJVMCgroupV2)
	if len(v2) != 1 || v2[0].Severity != finding.High || v2[0].Cases[0] != caseCgroupV2JRE {
		t.Fatalf("cgroup-v2 findings %+v, want one high citing %s", v2, caseCgroupV2JRE)
	}
	if !checktest.HasObject(v2, "Deployment", "shop", "orders") || !checktest.HasObject(v2, "Node", "", "ub2204") ||
		checktest.HasObject(v2, "Node", "", "ub2004") {
		t.Errorf("cgroup-v2 finding names %+v, want Deployment shop/orders and node ub2204 only", v2[0].Objects)
	}
	k := byRule(fs, ruleJVMKernel612)
	if len(k) != 1 || k[0].Severity != finding.Medium || k[0].Cases[0] != caseKernel612JVM {
		t.Fatalf("kernel findings %+v, want one medium citing %s", k, caseKernel612JVM)
	}
	if !checktest.HasObject(k, "Pod", "shop", "billing") || !checktest.HasObject(k, "Node", "", "ub2404") {
		t.Errorf("kernel finding names %+v", k[0].Objects)
	}
	if ev := strings.Join(k[0].Evidence, "\n"); !strings.Contains(ev, "corretto-21/issues/143") {
		t.Errorf("kernel evidence does not cite the report of 21.0.9: %s", ev)
	}
	// The corpus has no Java image facts: the nodes' quoted OS images and
	// kernels are resolved here.
	if n := checktest.EvidenceTrue(t, fs, "jvm-cgroup-compat/gap.yaml"); n < 2 {
		t.Errorf("%d evidence items, want the nodes of both findings quoted", n)
	}
}

func TestJVMCgroupCompatClean(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "jvm-cgroup-compat/clean.yaml"))
	checktest.QuietImages(t, jvmCgroupCompatCheck(), s, jvmImages())
}

// Unknowns are partial, never a pass: no inspection, an image not read, a
// node OS whose cgroup default is not tabled, a 21.x build after the fix
// whose backport status kubegap does not know.
func TestJVMCgroupCompatPartial(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "jvm-cgroup-compat/gap.yaml"))
	_, ctx, _ := checktest.RunImages(t, jvmCgroupCompatCheck(), s, nil)
	for _, r := range []string{ruleJVMCgroupV2, ruleJVMKernel612} {
		if !strings.Contains(ctx.Notes()[r].Reason, "--inspect-images") {
			t.Errorf("%s note %+v, want --inspect-images named", r, ctx.Notes()[r])
		}
	}

	imgs := jvmImages()
	imgs["registry.example.com/shop/billing:1.0"] = check.ImageFacts{Err: "UNAUTHORIZED"}
	imgs["registry.example.com/shop/orders:3.2"] = check.ImageFacts{LayersRead: true,
		Java: []check.JavaRuntime{{Home: "/opt/java/openjdk", Version: "11.0.14"}}}
	s = checktest.Complete(checktest.Load(t, "jvm-cgroup-compat/gap.yaml"))
	s.Nodes[1].Status.NodeInfo.OSImage = "Some Unknown Linux 1.0" // ub2204
	fs, ctx, _ := checktest.RunImages(t, jvmCgroupCompatCheck(), s, imgs)
	if len(fs) != 0 {
		t.Errorf("findings %+v, want none", fs)
	}
	if n := ctx.Notes()[ruleJVMCgroupV2]; !strings.Contains(n.Reason, "cgroup version of node ub2204") {
		t.Errorf("cgroup-v2 note %+v, want the unknown node named", n)
	}
	if n := ctx.Notes()[ruleJVMKernel612]; !strings.Contains(n.Reason, "billing:1.0 was not read") {
		t.Errorf("kernel note %+v, want the unread image named", n)
	}

	imgs = jvmImages()
	imgs["registry.example.com/shop/billing:1.1"] = check.ImageFacts{LayersRead: true,
		Java: []check.JavaRuntime{{Home: "/usr/lib/jvm/java-21", Version: "21.0.10", Date: "2026-01-20"}}}
	s = checktest.Complete(checktest.Load(t, "jvm-cgroup-compat/clean.yaml"))
	fs, ctx, _ = checktest.RunImages(t, jvmCgroupCompatCheck(), s, imgs)
	if n := ctx.Notes()[ruleJVMKernel612]; len(fs) != 0 || !strings.Contains(n.Reason, "21.0.10") {
		t.Errorf("findings %+v, kernel note %+v, want none and 21.0.10 named as unknown", fs, n)
	}
}

func TestParseJava(t *testing.T) {
	for in, want := range map[string][]int{"1.8.0_372": {8, 372}, "11.0.14.1": {11, 0, 14, 1}, "17": {17}, "21.0.9+10-LTS": {21, 0, 9}} {
		v, ok := parseJava(in)
		if !ok || v.line != want[0] && !(in == "1.8.0_372" && v.line == 8) || len(v.parts) != len(want) {
			t.Errorf("parseJava(%q) = %+v, %v; want parts %v", in, v, ok, want)
		}
	}
	a, _ := parseJava("1.8.0_362")
	b, _ := parseJava("1.8.0_372")
	c, _ := parseJava("11.0.16")
	d, _ := parseJava("11.0.15.1")
	if !a.less(b) || b.less(a) || !d.less(c) {
		t.Error("ordering is wrong")
	}
	if _, ok := parseJava("abc"); ok {
		t.Error("parsed garbage")
	}
}

func TestJVMTables(t *testing.T) {
	f, err := loadJVMFacts()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		vm, v string
		lacks bool
	}{
		{"hotspot", "1.8.0_292", true}, {"hotspot", "1.8.0_372", false}, {"hotspot", "11.0.15", true},
		{"hotspot", "11.0.16", false}, {"hotspot", "13.0.2", true}, {"hotspot", "17.0.1", false},
		{"openj9", "11.0.19", true}, {"openj9", "11.0.20", false}, {"openj9", "21.0.1", false},
	} {
		v, _ := parseJava(c.v)
		if lacks, known, _ := f.lacksCgroupV2(c.vm, v); !known || lacks != c.lacks {
			t.Errorf("%s %s: lacks %v known %v, want lacks %v", c.vm, c.v, lacks, known, c.lacks)
		}
	}
	for _, c := range []struct {
		v, date, impl string
		want          kernelVerdict
	}{
		{"21.0.9", "2025-10-21", "", kernelAffected}, {"17.0.10", "2024-01-16", "", kernelAffected},
		{"25.0.1", "2025-10-21", "", kernelFixed}, {"21.0.10", "2026-01-20", "Eclipse Adoptium", kernelUnknown},
		{"21.0.10", "2026-01-20", "Amazon.com Inc.", kernelFixed}, {"21.0.9", "2025-10-21", "Amazon.com Inc.", kernelAffected},
		{"17.0.17", "", "", kernelUnknown}, {"1.8.0_482", "2026-01-20", "", kernelAffected},
	} {
		v, _ := parseJava(c.v)
		if got, _ := f.kernelBug(v, c.date, c.impl); got != c.want {
			t.Errorf("%s (%s, %s): verdict %d, want %d", c.v, c.date, c.impl, got, c.want)
		}
	}
}
