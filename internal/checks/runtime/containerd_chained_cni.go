package runtime

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const caseContainerdChainedCNI = "containerd-chained-cni-regression"

// containerdChainedCNICheck looks for the three things that together broke
// chained CNI attachments after a containerd 1.7 patch upgrade: nodes on an
// affected containerd, the Multus thick plugin executing delegates through a
// chroot into the host, and attachments whose chain has a later plugin
// consume interfaces an earlier one created (SR-IOV then bond).
func containerdChainedCNICheck() check.Check {
	return check.Check{
		ID:       "containerd-chained-cni",
		Title:    "Chained CNI attachments on a containerd release with an open chained-CNI regression",
		Severity: finding.High,
		Description: "Finds nodes on containerd 1.7.29 or later in the 1.7 line where a Multus thick-plugin DaemonSet runs " +
			"in chroot mode, in a cluster with NetworkAttachmentDefinitions whose plugin chain creates interfaces and then " +
			"consumes them (sriov then bond). On those releases the later plugin was reported not to find the interfaces " +
			"(\"Link not found\"), failing every sandbox that uses the attachment; no fixed release is known. When the " +
			"NetworkAttachmentDefinitions are not all in the input (or could not be read), the first two conditions are " +
			"reported at medium, saying the chained attachment could not be checked, and the check is partial.",
		Reads: []check.Input{
			{Resource: snapshot.Nodes},
			{Resource: snapshot.DaemonSets},
			check.Optional(snapshot.NetworkAttachmentDefinitions),
		},
		Rules: []check.Rule{{ID: ruleChainedCNI, Summary: "no chained CNI attachment through Multus in chroot mode on an affected containerd",
			Needs: []snapshot.Resource{snapshot.Nodes, snapshot.DaemonSets, snapshot.NetworkAttachmentDefinitions}}},
		Cases: check.Detects(caseContainerdChainedCNI),
		Run:   runContainerdChainedCNI,
	}
}

// ruleChainedCNI is containerd-chained-cni's one rule.
const ruleChainedCNI = "chained-cni-regression"

// containerdFacts is data/containerd-regressions.yaml.
type containerdFacts struct {
	Regressions []runtimeRegression `json:"regressions"`
	Chains      struct {
		Creators  []string `json:"creators"`
		Consumers []string `json:"consumers"`
	} `json:"chains"`
	// Sources back the chain and Multus facts (each regression has its own).
	Sources []string `json:"sources"`
	Multus  struct {
		ImageRepositorySuffixes []string `json:"imageRepositorySuffixes"`
		ThickTagMarker          string   `json:"thickTagMarker"`
		DaemonSetNamePrefixes   []string `json:"daemonSetNamePrefixes"`
	} `json:"multus"`
}

// runtimeRegression is one open regression of a container runtime line.
type runtimeRegression struct {
	ID           string   `json:"id"`
	Case         string   `json:"case"`
	Runtime      string   `json:"runtime"`
	Line         string   `json:"line"`
	AffectedFrom string   `json:"affectedFrom"`
	FixedIn      string   `json:"fixedIn"`
	Sources      []string `json:"sources"`
	Note         string   `json:"note,omitempty"`

	from, fixed check.KubeVersion
	hasFix      bool
}

//go:embed data/containerd-regressions.yaml
var containerdRegressionsYAML []byte

// loadContainerdFacts parses the embedded file once; read-only after that.
var loadContainerdFacts = sync.OnceValues(func() (*containerdFacts, error) {
	return parseContainerdFacts(containerdRegressionsYAML)
})

func parseContainerdFacts(data []byte) (*containerdFacts, error) {
	var f containerdFacts
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, fmt.Errorf("parsing containerd-regressions.yaml: %w", err)
	}
	if len(f.Regressions) == 0 || len(f.Chains.Creators) == 0 || len(f.Chains.Consumers) == 0 {
		return nil, fmt.Errorf("containerd-regressions.yaml: regressions, chains.creators and chains.consumers are required")
	}
	if len(f.Multus.ImageRepositorySuffixes) == 0 || f.Multus.ThickTagMarker == "" {
		return nil, fmt.Errorf("containerd-regressions.yaml: multus image patterns are required")
	}
	for i := range f.Regressions {
		r := &f.Regressions[i]
		if r.ID == "" || r.Case == "" || r.Runtime != "containerd" || len(r.Sources) == 0 {
			return nil, fmt.Errorf("containerd-regressions.yaml: regression %d needs id, case, runtime containerd and sources", i+1)
		}
		var ok bool
		if r.from, ok = check.ParseKubeVersion(r.AffectedFrom); !ok || r.from.MinorString() != r.Line {
			return nil, fmt.Errorf("containerd-regressions.yaml: %s: affectedFrom %q is not a release of line %q", r.ID, r.AffectedFrom, r.Line)
		}
		if r.FixedIn != "" {
			if r.fixed, ok = check.ParseKubeVersion(r.FixedIn); !ok || r.fixed.MinorString() != r.Line || r.fixed.Patch <= r.from.Patch {
				return nil, fmt.Errorf("containerd-regressions.yaml: %s: fixedIn %q must be a later release of line %q", r.ID, r.FixedIn, r.Line)
			}
			r.hasFix = true
		}
	}
	return &f, nil
}

// affects reports whether a node's containerRuntimeVersion
// ("containerd://1.7.31", "containerd://1.7.29-1+azure") is in the range.
func (r *runtimeRegression) affects(runtimeVersion string) bool {
	v, ok := strings.CutPrefix(runtimeVersion, r.Runtime+"://")
	if !ok {
		return false
	}
	// Same major.Minor.Patch shape as Kubernetes versions; packaging
	// suffixes (-1, +azure) are dropped.
	kv, ok := check.ParseKubeVersion(v)
	if !ok || kv.MinorString() != r.Line || kv.Patch < r.from.Patch {
		return false
	}
	return !r.hasFix || kv.Patch < r.fixed.Patch
}

// rangeText describes the affected range for messages.
func (r *runtimeRegression) rangeText() string {
	if r.hasFix {
		return fmt.Sprintf("%s %s up to before %s", r.Runtime, r.AffectedFrom, r.FixedIn)
	}
	return fmt.Sprintf("%s %s and later in the %s line; no fixed release known", r.Runtime, r.AffectedFrom, r.Line)
}

// multusChroot returns evidence that a DaemonSet is the Multus thick plugin
// executing delegates through a chroot into the host, or nil.
func (f *containerdFacts) multusChroot(ds *appsv1.DaemonSet) []string {
	spec := &ds.Spec.Template.Spec
	name := ds.Namespace + "/" + ds.Name
	var thick []string
	for _, prefix := range f.Multus.DaemonSetNamePrefixes {
		if strings.HasPrefix(ds.Name, prefix) {
			thick = append(thick, fmt.Sprintf("DaemonSet %s is named like the Multus daemon (%s*)", name, prefix))
		}
	}
	all := append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...)
	for i, c := range all {
		repo := check.ImageRepository(c.Image)
		tag := strings.ToLower(c.Image[min(len(repo), len(c.Image)):])
		for _, suffix := range f.Multus.ImageRepositorySuffixes {
			if strings.HasSuffix(repo, suffix) && strings.Contains(tag, f.Multus.ThickTagMarker) {
				thick = append(thick, fmt.Sprintf("DaemonSet %s spec.template.spec.%s.image=%s (Multus thick plugin)",
					name, containerField(spec, i), c.Image))
			}
		}
	}
	if len(thick) == 0 {
		return nil
	}
	var chroot []string
	rootVols := map[string]int{}
	for i, v := range spec.Volumes {
		if v.HostPath != nil && strings.TrimRight(v.HostPath.Path, "/") == "" {
			rootVols[v.Name] = i
		}
	}
	for ci, c := range all {
		field := containerField(spec, ci)
		for mi, m := range c.VolumeMounts {
			if vi, ok := rootVols[m.Name]; ok && m.SubPath == "" {
				chroot = append(chroot, fmt.Sprintf("DaemonSet %s spec.template.spec.volumes[%d].hostPath.path=/ is mounted at %s.volumeMounts[%d].mountPath=%s (the host root Multus chroots into)",
					name, vi, field, mi, m.MountPath))
			}
		}
		for ai, a := range append(append([]string{}, c.Command...), c.Args...) {
			if strings.Contains(a, "chrootDir") || strings.Contains(a, "chroot-dir") {
				chroot = append(chroot, fmt.Sprintf("DaemonSet %s %s command/args[%d] sets chrootDir: %s", name, field, ai, quoteArg(a)))
			}
		}
	}
	if len(chroot) == 0 {
		return nil
	}
	return append(thick, chroot...)
}

func containerField(spec *corev1.PodSpec, i int) string {
	if i < len(spec.InitContainers) {
		return fmt.Sprintf("initContainers[%d]", i)
	}
	return fmt.Sprintf("containers[%d]", i-len(spec.InitContainers))
}

func quoteArg(a string) string {
	const max = 120
	if len(a) > max {
		a = a[:max] + "…"
	}
	return fmt.Sprintf("%q", a)
}

// chainedNAD returns evidence that an attachment's plugin chain has an
// interface creator followed by a consumer, or "".
func (f *containerdFacts) chainedNAD(nad *unstructured.Unstructured) string {
	config, _, _ := unstructured.NestedString(nad.Object, "spec", "config")
	if config == "" {
		return ""
	}
	var conf struct {
		Plugins []struct {
			Type string `json:"type"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal([]byte(config), &conf); err != nil {
		return "" // a config Multus cannot parse either attaches nothing
	}
	isCreator := map[string]bool{}
	for _, t := range f.Chains.Creators {
		isCreator[t] = true
	}
	isConsumer := map[string]bool{}
	for _, t := range f.Chains.Consumers {
		isConsumer[t] = true
	}
	creator := -1
	for i, p := range conf.Plugins {
		if creator < 0 && isCreator[p.Type] {
			creator = i
		}
		if creator >= 0 && i > creator && isConsumer[p.Type] {
			return fmt.Sprintf("NetworkAttachmentDefinition %s/%s spec.config plugins[%d].type=%s then plugins[%d].type=%s",
				nad.GetNamespace(), nad.GetName(), creator, conf.Plugins[creator].Type, i, p.Type)
		}
	}
	return ""
}

func runContainerdChainedCNI(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadContainerdFacts()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	if len(s.Nodes) == 0 {
		return nil, check.NotEvaluated("the snapshot holds no nodes")
	}
	var out []finding.Finding
	for ri := range facts.Regressions {
		reg := &facts.Regressions[ri]
		fs, err := containerdRegressionFindings(ctx, facts, reg)
		if err != nil {
			return nil, err
		}
		out = append(out, fs...)
	}
	return out, nil
}

func containerdRegressionFindings(ctx *check.Context, facts *containerdFacts, reg *runtimeRegression) ([]finding.Finding, error) {
	s := ctx.Snapshot
	affected := map[string]bool{}
	for i := range s.Nodes {
		if reg.affects(s.Nodes[i].Status.NodeInfo.ContainerRuntimeVersion) {
			affected[s.Nodes[i].Name] = true
		}
	}
	if len(affected) == 0 {
		return nil, nil
	}
	type multusDS struct {
		ds       *appsv1.DaemonSet
		evidence []string
		nodes    []*corev1.Node
	}
	var daemons []multusDS
	for i := range s.DaemonSets {
		ds := &s.DaemonSets[i]
		ev := facts.multusChroot(ds)
		if ev == nil {
			continue
		}
		var nodes []*corev1.Node
		for _, n := range targetNodes(ds, s.Nodes) {
			if affected[n.Name] {
				nodes = append(nodes, n)
			}
		}
		if len(nodes) > 0 {
			daemons = append(daemons, multusDS{ds: ds, evidence: ev, nodes: nodes})
		}
	}
	if len(daemons) == 0 {
		return nil, nil
	}
	nads := s.CustomObjects(snapshot.NetworkAttachmentDefinitions)
	var chained []*unstructured.Unstructured
	var nadEvidence []string
	for i := range nads {
		if ev := facts.chainedNAD(&nads[i]); ev != "" {
			chained = append(chained, &nads[i])
			nadEvidence = append(nadEvidence, ev)
		}
	}
	var out []finding.Finding
	switch {
	case len(chained) > 0:
		for _, d := range daemons {
			out = append(out, containerdFinding(reg, d.ds, d.evidence, d.nodes, chained, nadEvidence))
		}
	case !ctx.Complete(snapshot.NetworkAttachmentDefinitions):
		// Open world: the attachments that would complete the gap may
		// exist outside the input. Report the two conditions the present
		// objects prove, lower, and say what could not be checked.
		cov := s.Status(snapshot.NetworkAttachmentDefinitions)
		what := fmt.Sprintf("NetworkAttachmentDefinitions could not be read (%s)", cov.Status)
		if len(nads) > 0 {
			what = fmt.Sprintf("none of the %d NetworkAttachmentDefinitions in the input chains plugins, but they are not known to be all there are", len(nads))
		} else if cov.Status == snapshot.StatusRead || cov.Status == snapshot.StatusNotInInput || cov.Status == snapshot.StatusNotRead {
			what = "NetworkAttachmentDefinitions are not in the input"
		} else if cov.Message != "" {
			what = fmt.Sprintf("NetworkAttachmentDefinitions could not be read (%s: %s)", cov.Status, cov.Message)
		}
		ctx.Incomplete(ruleChainedCNI, "nodes on %s run the Multus thick plugin in chroot mode, but whether an attachment chains plugins "+
			"could not be checked: %s", reg.rangeText(), what)
		for _, d := range daemons {
			out = append(out, containerdUncheckedFinding(reg, d.ds, d.evidence, d.nodes, what))
		}
	}
	return out, nil
}

// containerdUncheckedFinding reports Multus in chroot mode on affected
// nodes when the attachments could not all be looked at.
func containerdUncheckedFinding(reg *runtimeRegression, ds *appsv1.DaemonSet, dsEvidence []string, nodes []*corev1.Node, what string) finding.Finding {
	dsName := ds.Namespace + "/" + ds.Name
	f := finding.Finding{
		Check:    "containerd-chained-cni",
		Severity: finding.Medium,
		Cases:    []string{reg.Case},
		Objects:  []finding.ObjectRef{{APIVersion: "apps/v1", Kind: "DaemonSet", Namespace: ds.Namespace, Name: ds.Name}},
	}
	refs, more := check.NodeRefs(nodes)
	f.Objects = append(f.Objects, refs...)
	f.Evidence = append(f.Evidence, dsEvidence...)
	f.AddEvidence(runtimeItems(nodes)...)
	f.Evidence = append(f.Evidence, fmt.Sprintf("affected range: %s (%s)", reg.rangeText(), strings.Join(reg.Sources, ", ")))
	f.Evidence = append(f.Evidence, "chained attachment not checked: "+what)
	f.Title = fmt.Sprintf("Multus %s runs in chroot mode on %d nodes with containerd %s; chained attachments could not be checked",
		dsName, len(nodes), reg.AffectedFrom+"+")
	f.Message = fmt.Sprintf("%d nodes run containerd %s (affected: %s), and the Multus thick plugin %s runs on them, executing CNI "+
		"delegates through a chroot into the host: two of the three conditions of the reported chained-CNI regression. The third, "+
		"a NetworkAttachmentDefinition whose plugin chain creates interfaces and then consumes them (sriov then bond), could not be "+
		"checked: %s. If such an attachment exists, pods using it fail sandbox creation with \"Link not found\" on these nodes%s.",
		len(nodes), runtimeVersions(nodes), reg.rangeText(), dsName, what, check.MoreText(more))
	f.Remediation = "List the attachments (kubectl get network-attachment-definitions -A -o yaml) and look for a plugin chain " +
		"such as sriov then bond, or audit with them in the input. If one exists, keep the nodes that run it on a containerd " +
		"release before 1.7.29 (1.7.24 is reported working) and track containerd issue #13545 for a fix."
	return f
}

// runtimeItems quotes the nodes' runtime versions, grouped by version.
func runtimeItems(nodes []*corev1.Node) []finding.EvidenceItem {
	return check.NodeValues(nodes, func(n *corev1.Node) []finding.Field {
		return []finding.Field{finding.Value("status.nodeInfo.containerRuntimeVersion", n.Status.NodeInfo.ContainerRuntimeVersion)}
	})
}

// runtimeVersions lists the nodes' distinct containerd versions.
func runtimeVersions(nodes []*corev1.Node) string {
	versions := map[string]bool{}
	for _, n := range nodes {
		versions[strings.TrimPrefix(n.Status.NodeInfo.ContainerRuntimeVersion, "containerd://")] = true
	}
	return strings.Join(slices.Sorted(maps.Keys(versions)), ", ")
}

func containerdFinding(reg *runtimeRegression, ds *appsv1.DaemonSet, dsEvidence []string, nodes []*corev1.Node,
	nads []*unstructured.Unstructured, nadEvidence []string) finding.Finding {
	dsName := ds.Namespace + "/" + ds.Name
	f := finding.Finding{
		Check:    "containerd-chained-cni",
		Severity: finding.High,
		Cases:    []string{reg.Case},
		Objects:  []finding.ObjectRef{{APIVersion: "apps/v1", Kind: "DaemonSet", Namespace: ds.Namespace, Name: ds.Name}},
	}
	var nadNames []string
	for i, n := range nads {
		if i == check.MaxListedObjects {
			break
		}
		f.Objects = append(f.Objects, finding.ObjectRef{APIVersion: snapshot.NetworkAttachmentDefinitions.APIVersion(),
			Kind: snapshot.NetworkAttachmentDefinitions.Kind, Namespace: n.GetNamespace(), Name: n.GetName()})
		if i < 5 {
			nadNames = append(nadNames, n.GetNamespace()+"/"+n.GetName())
		}
	}
	if len(nads) > len(nadNames) {
		nadNames = append(nadNames, fmt.Sprintf("and %d more", len(nads)-len(nadNames)))
	}
	refs, more := check.NodeRefs(nodes)
	f.Objects = append(f.Objects, refs...)
	f.Evidence = append(f.Evidence, dsEvidence...)
	f.Evidence = append(f.Evidence, firstN(nadEvidence, check.MaxEvidence)...)
	versions := map[string]int{}
	for _, n := range nodes {
		versions[strings.TrimPrefix(n.Status.NodeInfo.ContainerRuntimeVersion, "containerd://")]++
	}
	f.AddEvidence(runtimeItems(nodes)...)
	f.Evidence = append(f.Evidence, fmt.Sprintf("affected range: %s (%s)", reg.rangeText(), strings.Join(reg.Sources, ", ")))
	nodeWord := "nodes"
	if len(nodes) == 1 {
		nodeWord = "node"
	}
	f.Title = fmt.Sprintf("Multus %s runs chained CNI attachments on %d %s with containerd %s", dsName, len(nodes), nodeWord, reg.AffectedFrom+"+")
	nadWord, verb := "NetworkAttachmentDefinitions", "chain"
	if len(nads) == 1 {
		nadWord, verb = "NetworkAttachmentDefinition", "chains"
	}
	f.Message = fmt.Sprintf("%s containerd %s (affected: %s). The Multus thick plugin %s runs on them and executes "+
		"CNI delegates through a chroot into the host, and %d %s (%s) %s a plugin that creates interfaces with a later one that "+
		"consumes them. In this combination, after an upgrade to containerd 1.7.29 or later the later plugin was reported "+
		"unable to find the interfaces the earlier one had moved into the pod's network namespace (bond: \"Link not found\"), "+
		"failing sandbox creation for pods that use the attachment; changing CNI plugin versions did not help%s.",
		check.NodesRun(len(nodes), ""), strings.Join(slices.Sorted(maps.Keys(versions)), ", "), reg.rangeText(), dsName, len(nads), nadWord,
		strings.Join(nadNames, ", "), verb, check.MoreText(more))
	f.Remediation = "Keep nodes that run these attachments on a containerd release before 1.7.29 (1.7.24 is reported working), " +
		"or test the chained attachment on the target release before rolling it out; track containerd issue #13545 for a fix " +
		"rather than assuming a later 1.7 patch has one. If the runtime must move, take these nodes out of the rollout with a " +
		"separate node pool."
	return f
}
