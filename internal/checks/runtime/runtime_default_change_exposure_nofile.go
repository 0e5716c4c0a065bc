package runtime

// runtime-default-change-exposure: the open-files rule (images relying on a
// high default nofile limit on nodes whose runtime lowered it).

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// noFileFinding reports the pods of Envoy-based images on nodes of an
// image whose runtime unit lowered the open-file soft limit. That they
// rely on the limit is an inference: nothing in the API shows a process's
// limit or whether it raises its own.
func noFileFinding(ctx *check.Context, c *defaultChange, images []*reliantImage, nodes []nodeMatch) (finding.Finding, bool) {
	if len(nodes) == 0 {
		return finding.Finding{}, false
	}
	s := ctx.Snapshot
	onNode := map[string]nodeMatch{}
	for _, nm := range nodes {
		onNode[nm.node.Name] = nm
	}
	var pods finding.Grouper
	var objs []finding.ObjectRef
	usedNodes := map[string]bool{}
	var rowsUsed []*changedNode
	var imagesUsed []*reliantImage
	count := 0
	kinds := [2]string{check.InitContainers, check.Containers}
	// The image row each container position had in the pod before: the
	// pods of a template come one after another with the same images, so
	// most containers are a string comparison, not a parse.
	var last [2][4]struct {
		image string
		row   *reliantImage
		set   bool
	}
	for i := range s.Pods {
		p := &s.Pods[i]
		for l, cs := range [2][]snapshot.Container{p.Spec.InitContainers, p.Spec.Containers} {
			for j := range cs {
				ct := &cs[j] // by index: not a copy of every container
				// The image first: few pods run one, and the node lookup
				// is the costlier test at 100,000 pods.
				var im *reliantImage
				if j < len(last[l]) {
					m := &last[l][j]
					if !m.set || m.image != ct.Image {
						m.image, m.row, m.set = ct.Image, imageRow(images, ct.Image), true
					}
					im = m.row
				} else {
					im = imageRow(images, ct.Image)
				}
				if im == nil {
					continue
				}
				kind := kinds[l]
				nm, ok := onNode[p.Spec.NodeName]
				if !ok {
					continue
				}
				count++
				ref := finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name}
				if len(objs) < check.MaxListedObjects {
					objs = append(objs, ref)
				}
				pods.Add(ref, finding.Value("spec."+kind+"[name="+ct.Name+"].image", ct.Image),
					finding.Value("spec.nodeName", p.Spec.NodeName))
				usedNodes[nm.node.Name] = true
				for _, r := range nm.rows {
					if !slices.Contains(rowsUsed, r) {
						rowsUsed = append(rowsUsed, r)
					}
				}
				if !slices.Contains(imagesUsed, im) {
					imagesUsed = append(imagesUsed, im)
				}
			}
		}
	}
	if !ctx.Complete(snapshot.Pods) && count == 0 {
		ctx.Incomplete(ruleNoFile, "nodes of a listed image are in the input, but not all pods are")
	}
	if count == 0 {
		return finding.Finding{}, false
	}
	f := finding.Finding{Check: defaultChangeID, Rule: ruleNoFile, Severity: finding.Low, Cases: []string{c.Case}, Objects: objs}
	f.AddEvidence(pods.Items()...)
	names := make([]string, 0, len(usedNodes))
	for n := range usedNodes {
		names = append(names, n)
	}
	sort.Strings(names)
	var nodeG finding.Grouper
	for _, name := range names {
		nm := onNode[name]
		for _, r := range nm.rows {
			nodeG.Add(check.NodeRef(name), nodeFields(nm.node, r)...)
		}
	}
	f.AddEvidence(nodeG.Items()...)
	f.Title = fmt.Sprintf("%s of Envoy-based images run on %s of a node image whose runtime unit once lowered the open-file limit",
		check.Plural(count, "container", "containers"), check.Plural(len(names), "node", "nodes"))
	f.Message = strings.TrimSpace(c.Note) + " That these containers rely on a high inherited soft limit is kubegap's " +
		"inference from the software they run: no field shows the limit a process gets, or whether it raises its own."
	for _, im := range imagesUsed {
		f.Message += " " + strings.TrimSpace(im.Note)
	}
	f.Evidence = append(f.Evidence, "change "+c.ID+"; sources: "+strings.Join(c.Sources, ", "))
	for _, r := range rowsUsed {
		f.Evidence = append(f.Evidence, "node row "+r.ID+"; sources: "+strings.Join(r.Sources, ", "))
	}
	for _, im := range imagesUsed {
		f.Evidence = append(f.Evidence, "image row "+im.ID+"; sources: "+strings.Join(im.Sources, ", "))
	}
	f.Remediation = "Make the need explicit instead of inheriting it: have the software raise its own soft limit at start " +
		"(what containerd's pull request 8924 expects of software that needs more), or set the limit in the node image's " +
		"runtime unit yourself, and canary each new node image release with these workloads before rolling it out."
	return f, true
}
