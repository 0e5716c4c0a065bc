package images

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubegap/kubegap/internal/check"
)

func TestInspectForAudit(t *testing.T) {
	fx := fixtures(t)
	reg := newRegistry(t)
	azure := pushImage(t, reg, "cni/azure-cni:v2", azureLikeImage(t, fx))
	static := pushImage(t, reg, "static:1", image(t, "amd64", layer(t, file("app", fx.goStatic))))
	missing := reg.host + "/nope:1"
	opts := testOptions(t)
	refs := []ImageRef{{Reference: azure, Platform: "linux/amd64"}, {Reference: static}, {Reference: missing}, {Reference: azure}}

	first := InspectForAudit(context.Background(), refs, opts)
	if len(first) != 3 {
		t.Fatalf("got %d results, want 3 (duplicates folded): %v", len(first), first)
	}
	a := first[azure]
	wantMax := fx.cDynamicNeed
	if CompareVersions(fx.goCgoNeed, wantMax) > 0 {
		wantMax = fx.goCgoNeed
	}
	if a.Err != "" || a.MaxGlibc != wantMax || !strings.HasPrefix(a.Digest, "sha256:") {
		t.Errorf("azure facts = %+v, want MaxGlibc %s and a digest", a, wantMax)
	}
	wantExe := "/dropgz!azure-vnet: GLIBC_" + fx.cDynamicNeed
	if !slices.Contains(a.Executables, wantExe) {
		t.Errorf("azure executables = %v, want %q", a.Executables, wantExe)
	}
	if s := first[static]; s.Err != "" || s.MaxGlibc != "" || len(s.Executables) != 0 {
		t.Errorf("static facts = %+v, want no glibc need", s)
	}
	if m := first[missing]; m.Err == "" || strings.Contains(m.Err, "\n") {
		t.Errorf("missing image facts = %+v, want a one-line Err", m)
	}
	cached, _ := filepath.Glob(filepath.Join(opts.CacheDir, "sha256-*.json"))
	if len(cached) != 2 {
		t.Errorf("cache holds %v, want two entries (failures are not cached)", cached)
	}

	before := reg.blobGets()
	second := InspectForAudit(context.Background(), refs, opts)
	if got := reg.blobGets() - before; got != 0 {
		t.Errorf("second audit fetched %d blobs, want 0 (cached by digest)", got)
	}
	for k, v := range first {
		w := second[k]
		if v.MaxGlibc != w.MaxGlibc || v.Digest != w.Digest || !slices.Equal(v.Executables, w.Executables) {
			t.Errorf("%s: cached facts %+v differ from fresh %+v", k, w, v)
		}
	}

	// Different limits must not reuse a report shaped by other limits.
	before = reg.blobGets()
	opts.MaxFileBytes = 1 << 30
	InspectForAudit(context.Background(), refs[:1], opts)
	if reg.blobGets() == before {
		t.Error("changed limits reused the cache")
	}
}

func TestInspectForAuditCorruptCache(t *testing.T) {
	fx := fixtures(t)
	reg := newRegistry(t)
	ref := pushImage(t, reg, "static:1", image(t, "amd64", layer(t, file("app", fx.cDynamic))))
	opts := testOptions(t)
	InspectForAudit(context.Background(), []ImageRef{{Reference: ref}}, opts)
	files, _ := filepath.Glob(filepath.Join(opts.CacheDir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("cache files %v, want 1", files)
	}
	if err := os.WriteFile(files[0], []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	got := InspectForAudit(context.Background(), []ImageRef{{Reference: ref}}, opts)
	if f := got[ref]; f.Err != "" || f.MaxGlibc != fx.cDynamicNeed {
		t.Errorf("facts after corrupt cache = %+v, want a fresh inspection", f)
	}
}

func TestInspectForAuditCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	got := InspectForAudit(ctx, []ImageRef{{Reference: "127.0.0.1:1/x:1"}, {Reference: "127.0.0.1:1/y:1"}}, Options{CacheDir: "-"})
	if len(got) != 2 || got["127.0.0.1:1/x:1"].Err == "" {
		t.Errorf("got %+v, want two entries with Err", got)
	}
	if time.Since(start) > 5*time.Second {
		t.Error("a cancelled audit kept working")
	}
}

func TestMergeFacts(t *testing.T) {
	a := check.ImageFacts{Image: "x", Digest: "sha256:a", MaxGlibc: "2.17", Executables: []string{"/a: GLIBC_2.17"}}
	b := check.ImageFacts{Image: "x", Digest: "sha256:b", MaxGlibc: "2.34", Executables: []string{"/a: GLIBC_2.34"}}
	m := mergeFacts(a, b, "linux/arm64")
	if m.MaxGlibc != "2.34" || len(m.Executables) != 2 || m.Digest != "sha256:a,sha256:b" {
		t.Errorf("merged = %+v", m)
	}
	m = mergeFacts(b, check.ImageFacts{Err: "boom"}, "linux/arm64")
	if m.MaxGlibc != "2.34" || m.Err != "linux/arm64: boom" {
		t.Errorf("merged with error = %+v", m)
	}
}

// TestFactsCountOnlyHostCandidates: a base image's own programs run inside
// the container and do not make an installer host-incompatible; embedded
// payloads and programs outside the OS directories do.
func TestFactsCountOnlyHostCandidates(t *testing.T) {
	glibc := func(v string) Binary { return Binary{Linkage: LinkGlibc, MinGlibc: v} }
	static := Binary{Linkage: LinkStatic}
	r := &Report{Reference: "example/installer:1", ShippedGlibc: "2.36", Executables: []Executable{
		{Path: "/usr/bin/bash", Binary: glibc("2.34")},
		{Path: "/usr/lib/systemd/systemd", Binary: glibc("2.36")},
		{Path: "/opt/cni/bin/plugin", Binary: static},
	}}
	if f := r.Facts(); f.MaxGlibc != "" || len(f.Executables) != 0 || f.ShippedGlibc != "2.36" {
		t.Errorf("base-image programs counted: %+v", f)
	}
	r.Executables = append(r.Executables,
		Executable{Path: "/usr/bin/dropgz", Binary: static, Payloads: []Payload{{Name: "azure-vnet", Binary: &Binary{Linkage: LinkGlibc, MinGlibc: "2.34"}}}},
		Executable{Path: "/usr/local/bin/installer-helper", Binary: glibc("2.17")},
	)
	f := r.Facts()
	if f.MaxGlibc != "2.34" {
		t.Errorf("MaxGlibc = %q, want 2.34 from the embedded payload", f.MaxGlibc)
	}
	if len(f.Executables) != 2 || !strings.Contains(strings.Join(f.Executables, ";"), "/usr/bin/dropgz!azure-vnet: GLIBC_2.34") {
		t.Errorf("Executables = %v", f.Executables)
	}
}
