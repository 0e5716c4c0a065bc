package availability

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const defaultStorageClassAnnotation = "storageclass.kubernetes.io/is-default-class"

// karpenterController is one Karpenter controller container of a
// Deployment.
type karpenterController struct {
	d         *appsv1.Deployment
	container string
	image     string
	tag       string
}

// oldKarpenterControllers returns the Karpenter controllers on a release
// below fixed; unreadable names those whose tag gives no version.
func oldKarpenterControllers(s *snapshot.Snapshot, facts *karpenterFacts, fixed check.KubeVersion) (old []karpenterController, unreadable []string) {
	for i := range s.Deployments {
		d := &s.Deployments[i]
		for _, c := range d.Spec.Template.Spec.Containers {
			repo, tag, _ := check.ImageParts(c.Image)
			if !isKarpenterController(facts, repo) {
				continue
			}
			v, ok := check.ParseKubeVersion(tag)
			if !ok {
				unreadable = append(unreadable, "Deployment "+d.Namespace+"/"+d.Name)
				continue
			}
			if v.Less(fixed) {
				old = append(old, karpenterController{d: d, container: c.Name, image: c.Image, tag: tag})
			}
		}
	}
	return old, unreadable
}

// ebsTemplate is a volumeClaimTemplate of a StatefulSet that asks for a
// single-node EBS volume.
type ebsTemplate struct {
	index      int
	name       string
	modeIndex  int
	mode       corev1.PersistentVolumeAccessMode
	class      *storagev1.StorageClass
	classUnset bool
}

// karpenterDetachStallFindings reports StatefulSets with ReadWriteOnce EBS
// volumes running on Karpenter nodes while the controller is on a release
// that deletes nodes without waiting for their VolumeAttachments.
func karpenterDetachStallFindings(ctx *check.Context, facts *karpenterFacts) []finding.Finding {
	s := ctx.Snapshot
	fixed, _ := check.ParseKubeVersion(facts.DetachStall.FixedIn)
	old, unreadable := oldKarpenterControllers(s, facts, fixed)
	if len(unreadable) > 0 {
		ctx.Incomplete(ruleKarpenterDetach, "the Karpenter controller image of %s has no version tag to judge", check.ListText(unreadable, 5))
	}
	if len(old) == 0 {
		return nil
	}
	classes := map[string]*storagev1.StorageClass{}
	var defaults []*storagev1.StorageClass
	for i := range s.StorageClasses {
		sc := &s.StorageClasses[i]
		classes[sc.Name] = sc
		if sc.Annotations[defaultStorageClassAnnotation] == "true" {
			defaults = append(defaults, sc)
		}
	}
	classesComplete := ctx.Complete(snapshot.StorageClasses)
	ix := s.Index()
	var out []finding.Finding
	var unknown []string
	for i := range s.StatefulSets {
		sts := &s.StatefulSets[i]
		templates, classUnknown := ebsTemplates(sts, classes, defaults, facts.DetachStall.Provisioners)
		if classUnknown && !classesComplete {
			unknown = append(unknown, "StatefulSet "+sts.Namespace+"/"+sts.Name)
		}
		if len(templates) == 0 {
			continue
		}
		var nodes []*corev1.Node
		pods := 0
		missing := false
		for _, p := range ix.PodsControlledBy(snapshot.IDOf("StatefulSet", &sts.ObjectMeta)) {
			if p.Spec.NodeName == "" || p.DeletionTimestamp != nil {
				continue
			}
			n := ix.Node(p.Spec.NodeName)
			if n == nil {
				missing = true
				continue
			}
			if n.Labels[karpenterPoolLabel] == "" {
				continue
			}
			pods++
			if !slices.Contains(nodes, n) {
				nodes = append(nodes, n)
			}
		}
		if missing {
			unknown = append(unknown, "StatefulSet "+sts.Namespace+"/"+sts.Name)
		}
		if pods == 0 {
			continue
		}
		out = append(out, karpenterDetachStallFinding(facts, old[0], sts, templates, pods, nodes))
	}
	if len(unknown) > 0 {
		ctx.Incomplete(ruleKarpenterDetach, "the StorageClasses or nodes of %s are not all in the input", check.ListText(unknown, 5))
	}
	return out
}

// ebsTemplates returns the volumeClaimTemplates of sts that ask for a
// single-node access mode on a StorageClass of one of provisioners;
// unknown is true when a template's class is not in classes.
func ebsTemplates(sts *appsv1.StatefulSet, classes map[string]*storagev1.StorageClass, defaults []*storagev1.StorageClass,
	provisioners []string) (out []ebsTemplate, unknown bool) {
	for i, t := range sts.Spec.VolumeClaimTemplates {
		modeIndex := -1
		for j, m := range t.Spec.AccessModes {
			if m == corev1.ReadWriteOnce || m == corev1.ReadWriteOncePod {
				modeIndex = j
				break
			}
		}
		if modeIndex < 0 {
			continue
		}
		et := ebsTemplate{index: i, name: t.Name, modeIndex: modeIndex, mode: t.Spec.AccessModes[modeIndex]}
		switch {
		case t.Spec.StorageClassName == nil:
			et.classUnset = true
			if len(defaults) != 1 {
				unknown = unknown || len(defaults) == 0
				continue
			}
			et.class = defaults[0]
		case *t.Spec.StorageClassName == "":
			continue // no class: a pre-bound or static volume
		default:
			et.class = classes[*t.Spec.StorageClassName]
			if et.class == nil {
				unknown = true
				continue
			}
		}
		if slices.Contains(provisioners, et.class.Provisioner) {
			out = append(out, et)
		}
	}
	return out, unknown
}

// karpenterListedStallNodes is how many Karpenter nodes a finding names.
const karpenterListedStallNodes = 5

func karpenterDetachStallFinding(facts *karpenterFacts, c karpenterController, sts *appsv1.StatefulSet, templates []ebsTemplate,
	pods int, nodes []*corev1.Node) finding.Finding {
	ctrlRef := check.Ref("apps/v1", "Deployment", &c.d.ObjectMeta)
	stsRef := check.Ref("apps/v1", "StatefulSet", &sts.ObjectMeta)
	names := make([]string, len(templates))
	for i, t := range templates {
		names[i] = fmt.Sprintf("%s (%s, StorageClass %s, provisioner %s)", t.name, t.mode, t.class.Name, t.class.Provisioner)
	}
	nodeNames := make([]string, 0, len(nodes))
	for _, n := range nodes {
		if len(nodeNames) == karpenterListedStallNodes {
			break
		}
		nodeNames = append(nodeNames, n.Name)
	}
	f := finding.Finding{
		Check:    karpenterID,
		Severity: finding.Medium,
		Title: fmt.Sprintf("StatefulSet %s/%s keeps ReadWriteOnce EBS volumes on Karpenter %s nodes, a release that deletes nodes before their volumes detach",
			sts.Namespace, sts.Name, c.tag),
		Message: fmt.Sprintf("Deployment %s/%s runs the Karpenter controller at %s, below %s. Before %s Karpenter deleted a node without "+
			"waiting for its VolumeAttachments, and when a node goes before its EBS volumes are unmounted the attach/detach controller "+
			"holds them for the gone node until its six-minute force detach. StatefulSet %s/%s claims %s and runs %s on nodes "+
			"labelled %s, so each consolidation, drift replacement or interruption of one of those nodes may leave the moved pod on "+
			"Multi-Attach error for about six minutes, an outage of that replica (or shard) while it waits.",
			c.d.Namespace, c.d.Name, c.tag, facts.DetachStall.FixedIn, facts.DetachStall.FixedIn, sts.Namespace, sts.Name,
			strings.Join(names, "; "), check.Plural(pods, "pod", "pods"), karpenterPoolLabel),
		Objects: []finding.ObjectRef{ctrlRef, stsRef},
		Remediation: "Upgrade Karpenter to 1.0.0 or later (it waits for VolumeAttachments before deleting a node), keep the NodePool's " +
			"terminationGracePeriod long enough for pods to stop and volumes to unmount, and let the EBS CSI node DaemonSet tolerate " +
			"Karpenter's disruption taint so it outlives the workloads it unmounts; until then, a karpenter.sh/do-not-disrupt " +
			"annotation keeps Karpenter from moving a pod that cannot afford the wait.",
		Cases: []string{caseKarpenterDetach},
		Evidence: []string{
			fmt.Sprintf("%s, on nodes %s", check.Plural(pods, "running pod", "running pods"), strings.Join(nodeNames, ", ")),
			"fixed in " + facts.DetachStall.FixedIn + ": " + strings.Join(facts.DetachStall.Sources, " "),
		},
	}
	seen := map[string]bool{}
	for _, t := range templates {
		if !seen[t.class.Name] {
			seen[t.class.Name] = true
			f.Objects = append(f.Objects, check.Ref("storage.k8s.io/v1", "StorageClass", &t.class.ObjectMeta))
		}
	}
	f.AddEvidence(finding.Quote(ctrlRef, finding.Value(check.ContainerField("Deployment", "", c.container, "image"), c.image)))
	var fields []finding.Field
	for _, t := range templates {
		base := "spec.volumeClaimTemplates[" + strconv.Itoa(t.index) + "]"
		fields = append(fields, finding.Value(base+".spec.accessModes["+strconv.Itoa(t.modeIndex)+"]", string(t.mode)))
		if t.classUnset {
			fields = append(fields, finding.Absent(base+".spec.storageClassName"))
		} else {
			fields = append(fields, finding.Value(base+".spec.storageClassName", t.class.Name))
		}
	}
	f.AddEvidence(finding.Quote(stsRef, fields...))
	for _, t := range templates {
		if !seen[t.class.Name] {
			continue
		}
		seen[t.class.Name] = false
		cf := []finding.Field{finding.Value("provisioner", t.class.Provisioner)}
		if t.classUnset {
			cf = append(cf, finding.Entry("metadata.annotations["+defaultStorageClassAnnotation+"]", "true"))
		}
		f.AddEvidence(finding.Quote(check.Ref("storage.k8s.io/v1", "StorageClass", &t.class.ObjectMeta), cf...))
	}
	var onNodes finding.Grouper
	for _, n := range nodes {
		if !slices.Contains(nodeNames, n.Name) {
			continue
		}
		onNodes.Add(check.NodeRef(n.Name), finding.Entry("metadata.labels["+karpenterPoolLabel+"]", n.Labels[karpenterPoolLabel]))
	}
	f.AddEvidence(onNodes.Items()...)
	return f
}
