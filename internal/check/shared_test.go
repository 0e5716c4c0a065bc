package check

import (
	"strconv"
	"strings"
	"testing"
)

// The readings these helpers had before they were rewritten to scan in
// place: the rewrites must agree with them on every input.

func isTemplatedBySearch(image string) bool {
	return strings.Contains(image, "${") || strings.Contains(image, "{{") || strings.Contains(image, "$(") ||
		strings.ContainsAny(image, "<>")
}

func imageRegistryByParts(image string) string {
	repo, _, _ := ImageParts(image)
	first, _, found := strings.Cut(repo, "/")
	if found && (strings.ContainsAny(first, ".:") || first == "localhost") {
		return first
	}
	return "docker.io"
}

func parseKubeVersionBySplit(s string) (KubeVersion, bool) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "v")
	if i := strings.IndexAny(t, "-+"); i >= 0 {
		t = t[:i]
	}
	parts := strings.Split(t, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return KubeVersion{}, false
	}
	var v [3]int
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return KubeVersion{}, false
		}
		v[i] = n
	}
	return KubeVersion{v[0], v[1], v[2]}, true
}

var imageRefs = []string{
	"", "nginx", "nginx:1.27", "library/nginx:1.27", "docker.io/library/nginx", "quay.io/acme/app:1.0",
	"registry.k8s.io/pause:3.9", "localhost/app", "localhost:5000/app:1", "my-registry:5000/team/app:v2@sha256:abc",
	"gcr.io/x/y@sha256:0123", "app@sha256:0123", "a/b/c/d:e", "host.example/only", "host.example", ":", "/", "//", "@",
	"${IMAGE}", "$IMAGE", "$(REGISTRY)/app", "{{ .Values.image }}", "{ x }", "{", "}", "<image_url>", "repo>", "x$",
	"$", "${", "{{", "$(", "quay.io/a/b:1{", "quay.io/$(x):1", "ghcr.io/a/{{b}}", "a$b{c", "tag$:{1",
}

func TestIsTemplatedAsBySearch(t *testing.T) {
	for _, im := range imageRefs {
		if got, want := IsTemplated(im), isTemplatedBySearch(im); got != want {
			t.Errorf("IsTemplated(%q) = %v, want %v", im, got, want)
		}
	}
	for im, want := range map[string]bool{"${IMAGE}": true, "$(REGISTRY)/app": true, "{{ .Values.image }}": true,
		"<image_url>": true, "quay.io/acme/app:1.0": false, "$IMAGE": false, "{ x }": false, "x$": false} {
		if got := IsTemplated(im); got != want {
			t.Errorf("IsTemplated(%q) = %v, want %v", im, got, want)
		}
	}
}

func TestImageRegistryAsByParts(t *testing.T) {
	for _, im := range imageRefs {
		if got, want := ImageRegistry(im), imageRegistryByParts(im); got != want {
			t.Errorf("ImageRegistry(%q) = %q, want %q", im, got, want)
		}
	}
	for im, want := range map[string]string{"nginx:1.27": "docker.io", "quay.io/acme/app:1.0": "quay.io",
		"localhost/app": "localhost", "my-registry:5000/team/app:v2@sha256:abc": "my-registry:5000",
		"library/nginx": "docker.io", "app@sha256:0123": "docker.io"} {
		if got := ImageRegistry(im); got != want {
			t.Errorf("ImageRegistry(%q) = %q, want %q", im, got, want)
		}
	}
}

func TestParseKubeVersionAsBySplit(t *testing.T) {
	for _, s := range []string{"", "v", "1", "v1", "1.", ".1", "1.35", "v1.35", " v1.35.4 ", "1.35.4", "1.35.4.1",
		"v1.33.5-eks-1234", "v1.31.3+k3s1", "v1.30.2-gke.1014001", "1..2", "1.2.", "a.b", "1.b", "1.2.c", "v1.2-3.4",
		"1.-2", "1.+2", "01.02.03", "v1.99999999999999999999", "1 .2", "1.2.3-", "-1.2", "vv1.2", "1.2.3.", "..."} {
		gv, gok := ParseKubeVersion(s)
		wv, wok := parseKubeVersionBySplit(s)
		if gv != wv || gok != wok {
			t.Errorf("ParseKubeVersion(%q) = %v, %v; want %v, %v", s, gv, gok, wv, wok)
		}
	}
	if v, ok := ParseKubeVersion("v1.33.5-eks-1234"); !ok || v != (KubeVersion{1, 33, 5}) {
		t.Errorf("v1.33.5-eks-1234 read as %v, %v", v, ok)
	}
	if _, ok := ParseKubeVersion("1.2.3.4"); ok {
		t.Error("four parts read as a version")
	}
}
