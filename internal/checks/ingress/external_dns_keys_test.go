package ingress

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/check/checktest"
)

// TestMissingPolicyKeysJoinedOnce: missingPolicy and imageIsOneOf, which
// use the annotation keys joined once in the facts, answer as the old
// per-object joins did for every Ingress, Service and Deployment image of
// the fixtures and for hand-made annotation sets under both prefixes.
func TestMissingPolicyKeysJoinedOnce(t *testing.T) {
	f, err := loadExternalDNSFacts()
	if err != nil {
		t.Fatal(err)
	}
	var anns []map[string]string
	var images []string
	for _, file := range []string{"external-dns-routing/gap.yaml", "external-dns-routing/healthy.yaml"} {
		s := checktest.Load(t, file)
		for i := range s.Ingresses {
			anns = append(anns, s.Ingresses[i].Annotations)
		}
		for i := range s.Services {
			anns = append(anns, s.Services[i].Annotations)
		}
		for i := range s.Deployments {
			for _, c := range s.Deployments[i].Spec.Template.Spec.Containers {
				images = append(images, c.Image)
			}
		}
	}
	for _, p := range f.Prefixes {
		anns = append(anns, nil, map[string]string{p + f.SetIdentifier: "a"},
			map[string]string{p + f.SetIdentifier: "b", p + f.RoutingPolicies[len(f.RoutingPolicies)-1]: "10"},
			map[string]string{f.Prefixes[0] + f.SetIdentifier: "c", f.Prefixes[len(f.Prefixes)-1] + f.RoutingPolicies[0]: "1"})
	}
	missing := 0
	for _, ann := range anns {
		gk, gv := missingPolicy(f, ann)
		wk, wv := oldMissingPolicy(f, ann)
		if gk != wk || gv != wv {
			t.Errorf("annotations %v: %q=%q, want %q=%q", ann, gk, gv, wk, wv)
		}
		if wk != "" {
			missing++
		}
	}
	if missing == 0 {
		t.Fatal("no annotation set lacks a policy: the comparison does not reach the finding")
	}
	images = append(images, "external-dns", "x/external-dns", "xexternal-dns", "registry.k8s.io/external-dns/external-dns:v0.14.0", "")
	for _, im := range images {
		repo, _, _ := check.ImageParts(im)
		if got, want := imageIsOneOf(repo, f.Images), oldImageIsOneOf(repo, f.Images); got != want {
			t.Errorf("image %q: %v, want %v", im, got, want)
		}
	}
}

func oldMissingPolicy(f *externalDNSFacts, ann map[string]string) (key, value string) {
	for _, p := range f.Prefixes {
		id, ok := ann[p+f.SetIdentifier]
		if !ok {
			continue
		}
		policy := false
		for _, r := range f.RoutingPolicies {
			if _, ok := ann[p+r]; ok {
				policy = true
				break
			}
		}
		if !policy {
			return p + f.SetIdentifier, id
		}
	}
	return "", ""
}

func oldImageIsOneOf(repo string, images []string) bool {
	for _, im := range images {
		if repo == im || strings.HasSuffix(repo, "/"+im) {
			return true
		}
	}
	return false
}
