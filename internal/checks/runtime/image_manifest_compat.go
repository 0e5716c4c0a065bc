package runtime

import (
	_ "embed"
	"fmt"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	caseSchema1         = "containerd-2-schema1-images-fail-to-pull-2024"
	manifestCompatID    = "image-manifest-compat"
	ruleSchema1         = "schema1-manifest"
	inspectImagesAdvice = "run `kubegap audit --inspect-images` (it reads each image's manifest from its registry)"
)

//go:embed data/image-manifest-compat.yaml
var manifestCompatData []byte

type manifestCompatFacts struct {
	Schema1MediaTypes []struct {
		MediaType string   `json:"mediaType"`
		Sources   []string `json:"sources"`
	} `json:"schema1MediaTypes"`
	ContainerdRefuses []containerdRefusal `json:"containerdRefuses"`

	schema1 map[string]bool
	refuses containerdRefusal
	from    check.KubeVersion
}

type containerdRefusal struct {
	From         string   `json:"from"`
	RemovedIn    string   `json:"removedIn"`
	DeprecatedIn string   `json:"deprecatedIn"`
	Sources      []string `json:"sources"`
}

var loadManifestCompat = sync.OnceValues(func() (*manifestCompatFacts, error) {
	var f manifestCompatFacts
	if err := yaml.UnmarshalStrict(manifestCompatData, &f); err != nil {
		return nil, fmt.Errorf("data/image-manifest-compat.yaml: %w", err)
	}
	f.schema1 = map[string]bool{}
	for _, m := range f.Schema1MediaTypes {
		f.schema1[m.MediaType] = true
	}
	if len(f.ContainerdRefuses) != 1 {
		return nil, fmt.Errorf("data/image-manifest-compat.yaml: containerdRefuses needs exactly one row")
	}
	f.refuses = f.ContainerdRefuses[0]
	v, ok := check.ParseKubeVersion(f.refuses.From)
	if !ok {
		return nil, fmt.Errorf("data/image-manifest-compat.yaml: bad containerdRefuses.from %q", f.refuses.From)
	}
	f.from = v
	return &f, nil
})

// imageManifestCompatCheck finds images stored as Docker schema 1, which
// containerd 2.0 and later refuse to pull, from the manifests that
// --inspect-images reads.
func imageManifestCompatCheck() check.Check {
	return check.Check{
		ID:       manifestCompatID,
		Title:    "Images in Docker schema 1 format, which containerd 2.0 and later do not pull",
		Severity: finding.High,
		Description: "With --inspect-images, reads the manifest media type of every image that pods and Deployment, " +
			"StatefulSet, DaemonSet and CronJob templates use (init and ephemeral containers included). A Docker image " +
			"manifest v2, schema 1 (application/vnd.docker.distribution.manifest.v1+prettyjws or +json) is high when a node " +
			"reports containerd 2.0 or later in status.nodeInfo.containerRuntimeVersion (containerd turned such pulls off in " +
			"2.0 and removed them in 2.1; a pod landing there stays in ImagePullBackOff) and medium otherwise: it blocks " +
			"moving the nodes to containerd 2. Without --inspect-images, or for images whose registry could not be read, " +
			"the rule is partial: nothing in the Kubernetes API records an image's manifest format.",
		Reads: check.Needs(append([]snapshot.Resource{snapshot.Nodes}, imageResources...)...),
		Rules: []check.Rule{
			{ID: ruleSchema1, Summary: "no image the cluster runs is stored as Docker schema 1",
				Needs: append([]snapshot.Resource{snapshot.Nodes}, imageResources...)},
		},
		Cases: check.Prevents(caseSchema1),
		Run:   runImageManifestCompat,
	}
}

// schema1Image is one schema 1 image and what uses it.
type schema1Image struct {
	image, mediaType string
	users            []finding.ObjectRef
	more             int
	fields           finding.Grouper // the users' image fields, by path
}

func runImageManifestCompat(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadManifestCompat()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	// Without manifests the users are not needed, only whether there are
	// any: listing them walked every pod (its workload and every
	// container) for an answer that did not read them.
	if !hasImageUsers(s) {
		return nil, check.NotEvaluated("the input holds no pods or workload templates")
	}
	if ctx.Images == nil {
		ctx.NotRequested(ruleSchema1, "image manifests were not read; %s", inspectImagesAdvice)
		return nil, nil
	}
	users := imageUsers(s)
	found, unknown := schema1Users(ctx.Images, users, facts)
	if len(unknown) > 0 {
		sort.Strings(unknown)
		ctx.Incomplete(ruleSchema1, "the manifest of %s could not be read: %s", check.Plural(len(unknown), "image", "images"),
			check.ListText(unknown, 5))
	}
	if len(found) == 0 {
		return nil, nil
	}
	refusing, unreported := containerd2Nodes(s.Nodes, facts.from)
	if unreported > 0 && len(refusing) == 0 {
		ctx.Incomplete(ruleSchema1, "%s report no container runtime version", check.Plural(unreported, "node", "nodes"))
	}
	var out []finding.Finding
	for _, im := range found {
		out = append(out, schema1Finding(im, refusing, facts))
	}
	return out, nil
}

// schema1Users groups the users of each schema 1 image, and lists the
// images whose manifest is unknown.
func schema1Users(images map[string]check.ImageFacts, users []imageUser, facts *manifestCompatFacts) ([]*schema1Image, []string) {
	byImage := map[string]*schema1Image{}
	var order []*schema1Image
	unknown := map[string]bool{}
	for _, u := range users {
		seen := map[string]bool{}
		for k, img := range u.images {
			if img == "" || check.IsTemplated(img) {
				continue
			}
			if seen[img] {
				if im := byImage[img]; im != nil {
					im.fields.Add(u.ref, finding.Value(u.path(k), img))
				}
				continue
			}
			seen[img] = true
			f, ok := images[img]
			if !ok || f.Err != "" || f.MediaType == "" {
				unknown[img] = true
				continue
			}
			if !facts.schema1[f.MediaType] {
				continue
			}
			im := byImage[img]
			if im == nil {
				im = &schema1Image{image: img, mediaType: f.MediaType}
				byImage[img] = im
				order = append(order, im)
			}
			if len(im.users) < check.MaxListedObjects {
				im.users = append(im.users, u.ref)
			} else {
				im.more++
			}
			im.fields.Add(u.ref, finding.Value(u.path(k), img))
		}
	}
	sort.Slice(order, func(i, j int) bool { return order[i].image < order[j].image })
	var list []string
	for img := range unknown {
		list = append(list, img)
	}
	return order, list
}

// containerd2Nodes lists the nodes whose containerd refuses schema 1.
func containerd2Nodes(nodes []corev1.Node, from check.KubeVersion) (refusing []*corev1.Node, unreported int) {
	for i := range nodes {
		n := &nodes[i]
		rt, ok := runtimeOf(n)
		if !ok || (rt.Name == "containerd" && !rt.Parsed) {
			unreported++
			continue
		}
		if rt.Name == "containerd" && !rt.Version.Less(from) {
			refusing = append(refusing, n)
		}
	}
	return refusing, unreported
}

func schema1Finding(im *schema1Image, refusing []*corev1.Node, facts *manifestCompatFacts) finding.Finding {
	cr := facts.refuses
	objs := append([]finding.ObjectRef(nil), im.users...)
	ev := []string{
		fmt.Sprintf("--inspect-images: %s has manifest media type %s (Docker image manifest v2, schema 1)", im.image, im.mediaType),
		fmt.Sprintf("containerd deprecated schema 1 pulls in %s, turned them off in %s and removed them in %s (%s)",
			cr.DeprecatedIn, cr.From, cr.RemovedIn, strings.Join(cr.Sources, ", ")),
	}
	f := finding.Finding{
		Check:    manifestCompatID,
		Rule:     ruleSchema1,
		Severity: finding.Medium,
		Title:    fmt.Sprintf("Image %s is Docker schema 1: nodes moved to containerd %s will not pull it", im.image, cr.From),
		Message: fmt.Sprintf("%s is stored as a Docker schema 1 manifest. No node runs containerd %s or later yet, so it still "+
			"pulls; once nodes move to containerd %s (a node image or Kubernetes upgrade can bring it), pods using it that "+
			"land there stay in ImagePullBackOff.", im.image, cr.From, cr.From),
		Remediation: "Re-push the image as schema 2 or OCI (for example `crane copy` or `skopeo copy`, or a rebuild), or move " +
			"to a newer tag of the image published in a current format, before nodes run containerd 2.",
		Cases: []string{caseSchema1},
	}
	if len(refusing) > 0 {
		refs, _ := check.NodeRefs(refusing)
		objs = append(objs, refs...)
		ev = append(ev, fmt.Sprintf("%s containerd %s or later", check.Plural(len(refusing), "node runs", "nodes run"), cr.From))
		f.Severity = finding.High
		f.Title = fmt.Sprintf("Image %s is Docker schema 1, which the containerd %s+ nodes refuse to pull", im.image, cr.From)
		f.Message = fmt.Sprintf("%s is stored as a Docker schema 1 manifest, and %s containerd %s or later, which does not "+
			"pull that format: a pod using it that is scheduled there, or restarted there without the image cached, stays "+
			"in ImagePullBackOff.", im.image, check.Plural(len(refusing), "node runs", "nodes run"), cr.From)
	}
	f.Objects = objs
	f.Evidence = ev
	// The image as each user's container names it; the media type comes
	// from the registry, not from an object, and stays text.
	f.AddEvidence(im.fields.Items()...)
	f.AddEvidence(check.NodeValues(refusing, nodeField("status.nodeInfo.containerRuntimeVersion",
		func(n *corev1.Node) string { return n.Status.NodeInfo.ContainerRuntimeVersion }))...)
	return f
}
func refNames(refs []finding.ObjectRef) string {
	names := make([]string, 0, len(refs))
	for _, r := range refs {
		names = append(names, r.Kind+" "+r.Namespace+"/"+r.Name)
	}
	return check.ListText(names, 5)
}

func moreUsers(more int) string {
	if more == 0 {
		return ""
	}
	return fmt.Sprintf(" (and %d more)", more)
}
