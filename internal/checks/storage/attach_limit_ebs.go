package storage

import (
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

//go:embed data/attach-limit-ebs-nitro.yaml
var ebsNitroYAML []byte

// ebsNitroFacts is data/attach-limit-ebs-nitro.yaml.
type ebsNitroFacts struct {
	Drivers []struct {
		ImageName       string   `json:"imageName"`
		FixedIn         string   `json:"fixedIn"`
		AttachLimitFlag string   `json:"attachLimitFlag"`
		Sources         []string `json:"sources"`
	} `json:"drivers"`
	Families []struct {
		Names       []string `json:"names"`
		SharedLimit int      `json:"sharedLimit"`
		Sources     []string `json:"sources"`
	} `json:"families"`
	InstanceStores []struct {
		StoreFamilies []string       `json:"storeFamilies"`
		Volumes       map[string]int `json:"volumes"`
		Sources       []string       `json:"sources"`
	} `json:"instanceStores"`

	fixedIn     check.KubeVersion
	limit       map[string]int // family -> shared attachment limit
	storeFamily map[string]bool
	stores      map[string]int // instance type -> NVMe instance stores
	evidence    []string
}

var loadEBSNitro = check.Facts("EBS Nitro attach-limit facts", ebsNitroYAML, func(f *ebsNitroFacts) error {
	if len(f.Drivers) != 1 || f.Drivers[0].ImageName == "" || f.Drivers[0].AttachLimitFlag == "" {
		return errors.New("EBS Nitro facts: one driver row with imageName and attachLimitFlag is required")
	}
	var ok bool
	if f.fixedIn, ok = check.ParseKubeVersion(f.Drivers[0].FixedIn); !ok {
		return errors.New("EBS Nitro facts: fixedIn is not a version")
	}
	f.limit = map[string]int{}
	for _, r := range f.Families {
		if r.SharedLimit <= 0 {
			return errors.New("EBS Nitro facts: a family row without sharedLimit")
		}
		for _, n := range r.Names {
			f.limit[n] = r.SharedLimit
		}
		f.evidence = append(f.evidence, fmt.Sprintf("shared attachment limit %d on %s (%s)", r.SharedLimit, strings.Join(r.Names, ", "), strings.Join(r.Sources, " ")))
	}
	f.storeFamily, f.stores = map[string]bool{}, map[string]int{}
	for _, r := range f.InstanceStores {
		for _, n := range r.StoreFamilies {
			if _, ok := f.limit[n]; !ok {
				return fmt.Errorf("EBS Nitro facts: store family %s is not a listed family", n)
			}
			f.storeFamily[n] = true
		}
		for t, v := range r.Volumes {
			fam, _, _ := strings.Cut(t, ".")
			if !f.storeFamily[fam] || v <= 0 {
				return fmt.Errorf("EBS Nitro facts: instance-store row %s outside storeFamilies", t)
			}
			f.stores[t] = v
		}
	}
	d := f.Drivers[0]
	f.evidence = append([]string{fmt.Sprintf("%s before %s computes its CSINode count from the instance type alone; %s overrides it (%s)",
		d.ImageName, d.FixedIn, d.AttachLimitFlag, strings.Join(d.Sources, " "))}, f.evidence...)
	return nil
})

const (
	ruleEBSSharedSlots = "ebs-limit-ignores-shared-slots"
	ebsNitroCase       = "ebs-csi-attach-limit-overstated-nitro-eni-slots-2022-2023"
	ebsDriverName      = "ebs.csi.aws.com"
	instanceTypeLabel  = "node.kubernetes.io/instance-type"
	instanceTypeBeta   = "beta.kubernetes.io/instance-type"
)

// ebsDriverSet is an EBS CSI node plugin container of a DaemonSet.
type ebsDriverSet struct {
	ds        *appsv1.DaemonSet
	container string
	image     string
	version   check.KubeVersion
}

// oldEBSDrivers finds the DaemonSets running the EBS CSI driver: those of a
// release before the fix that do not set the attach-limit flag, and whether
// any other (fixed, overridden or unknown) runs beside them.
func oldEBSDrivers(ctx *check.Context, f *ebsNitroFacts) (old []ebsDriverSet, others int) {
	d := f.Drivers[0]
	for i := range ctx.Snapshot.DaemonSets {
		ds := &ctx.Snapshot.DaemonSets[i]
		for _, c := range ds.Spec.Template.Spec.Containers {
			if check.ImageName(c.Image) != d.ImageName {
				continue
			}
			if slices.ContainsFunc(slices.Concat(c.Command, c.Args), func(a string) bool {
				name, _, _ := strings.Cut(a, "=")
				return name == d.AttachLimitFlag
			}) {
				others++ // the operator set the count
				continue
			}
			_, tag, _ := check.ImageParts(c.Image)
			v, ok := check.ParseKubeVersion(tag)
			switch {
			case !ok:
				ctx.Incomplete(ruleEBSSharedSlots, "the release of %s's %s is unknown (image %s)", check.Ref("apps/v1", "DaemonSet", ds), c.Name, c.Image)
				others++
			case v.Less(f.fixedIn):
				old = append(old, ebsDriverSet{ds, c.Name, c.Image, v})
			default:
				others++
			}
		}
	}
	return old, others
}

type ebsSlotNode struct {
	node, instanceType, label string
	count, limit, stores      int
}

// free is how many slots remain for EBS volumes, the root volume among
// them, once the one network interface every instance has is counted.
func (n ebsSlotNode) free() int { return n.limit - 1 - n.stores }

func ebsSharedSlotFindings(ctx *check.Context) []finding.Finding {
	f, err := loadEBSNitro()
	if err != nil {
		ctx.Incomplete(ruleEBSSharedSlots, "%v", err)
		return nil
	}
	s := ctx.Snapshot
	old, others := oldEBSDrivers(ctx, f)
	if len(old) == 0 {
		if !ctx.Complete(snapshot.DaemonSets) {
			ctx.Incomplete(ruleEBSSharedSlots, "DaemonSets were not read whole, so the EBS CSI driver's release is unknown")
		}
		return nil
	}
	if others > 0 {
		ctx.Incomplete(ruleEBSSharedSlots, "the EBS CSI driver runs at more than one release or setting, and which node runs which is not judged")
		return nil
	}
	csiNodes := make(map[string]*storagev1.CSINode, len(s.CSINodes))
	for i := range s.CSINodes {
		csiNodes[s.CSINodes[i].Name] = &s.CSINodes[i]
	}
	var hit []ebsSlotNode
	unlisted := 0
	for i := range s.Nodes {
		n := &s.Nodes[i]
		cn := csiNodes[n.Name]
		if cn == nil {
			continue
		}
		count := -1
		for _, d := range cn.Spec.Drivers {
			if d.Name == ebsDriverName && d.Allocatable != nil && d.Allocatable.Count != nil {
				count = int(*d.Allocatable.Count)
			}
		}
		if count <= 0 {
			continue
		}
		label := instanceTypeLabel
		it := n.Labels[label]
		if it == "" {
			label = instanceTypeBeta
			it = n.Labels[label]
		}
		fam, _, _ := strings.Cut(it, ".")
		limit, listed := f.limit[fam]
		stores, known := f.stores[it]
		if !listed || strings.Contains(it, "metal") || (f.storeFamily[fam] && !known) {
			unlisted++
			continue
		}
		hit = append(hit, ebsSlotNode{n.Name, it, label, count, limit, stores})
	}
	if unlisted > 0 {
		ctx.Incomplete(ruleEBSSharedSlots, "%s with the EBS CSI driver are of instance types the table does not list, and were not judged",
			check.Plural(unlisted, "node", "nodes"))
	}
	sort.Slice(hit, func(i, j int) bool { return hit[i].node < hit[j].node })
	var over, room []ebsSlotNode
	for _, n := range hit {
		if n.count > n.free() {
			over = append(over, n)
		} else {
			room = append(room, n)
		}
	}
	drv := old[0]
	var out []finding.Finding
	for _, g := range []struct {
		nodes []ebsSlotNode
		sev   finding.Severity
		title string
		msg   string
	}{
		{over, finding.Medium, "advertise more EBS volume slots than their instance type has",
			"On these Nitro instance types EBS volumes share one pool of attachment slots with network interfaces and NVMe " +
				"instance-store volumes. The EBS CSI driver's release here computes the node's CSINode count from the instance " +
				"type alone, and the count exceeds the slots left even with only the one network interface every instance has: " +
				"the scheduler places volume pods the node cannot attach, and they wait on FailedAttachVolume and FailedMount."},
		{room, finding.Low, "advertise EBS volume slots that network interfaces can take",
			"On these Nitro instance types EBS volumes share one pool of attachment slots with network interfaces and NVMe " +
				"instance-store volumes. The EBS CSI driver's release here computes the node's CSINode count from the instance " +
				"type alone, so every network interface the CNI attaches beyond the headroom shown (and the root volume, if it " +
				"is EBS) makes the count too high, and volume pods scheduled within it can hang attaching."},
	} {
		if len(g.nodes) == 0 {
			continue
		}
		objs := []finding.ObjectRef{check.Ref("apps/v1", "DaemonSet", drv.ds)}
		items := []finding.EvidenceItem{finding.Quote(objs[0],
			finding.Value(check.ContainerField("DaemonSet", "", drv.container, "image"), drv.image))}
		var ev []string
		for _, n := range g.nodes {
			if len(objs) <= check.MaxListedObjects {
				objs = append(objs, check.NodeRef(n.node))
			}
			if len(ev) < check.MaxEvidence {
				ev = append(ev, fmt.Sprintf("Node %s (%s): CSINode offers %d EBS volumes; %d shared slots - 1 network interface - %d NVMe instance stores = %d for EBS volumes, root included",
					n.node, n.instanceType, n.count, n.limit, n.stores, n.free()))
				items = append(items,
					finding.Quote(check.NodeRef(n.node), finding.Value("metadata.labels["+n.label+"]", n.instanceType)),
					finding.Quote(finding.ObjectRef{APIVersion: "storage.k8s.io/v1", Kind: "CSINode", Name: n.node},
						finding.Value("spec.drivers[name="+ebsDriverName+"].allocatable.count", n.count)))
			}
		}
		fd := finding.Finding{
			Check: attachLimitID, Rule: ruleEBSSharedSlots, Severity: g.sev,
			Title: fmt.Sprintf("%s on EBS CSI driver %s %s%s", check.Plural(len(g.nodes), "Nitro node", "Nitro nodes"), drv.version,
				g.title, check.MoreText(len(g.nodes)+1-len(objs))),
			Message: g.msg,
			Objects: objs,
			Evidence: append(append([]string{fmt.Sprintf("DaemonSet %s/%s runs %s, release %s, without %s", drv.ds.Namespace, drv.ds.Name,
				drv.image, drv.version, f.Drivers[0].AttachLimitFlag)}, ev...), f.evidence...),
			Remediation: fmt.Sprintf("Upgrade the EBS CSI driver to %s or later, which subtracts the attached network interfaces, block "+
				"devices and NVMe instance stores; until then set %s on the node plugin to a count that leaves room for the "+
				"network interfaces the node can carry.", f.Drivers[0].FixedIn, f.Drivers[0].AttachLimitFlag),
			Cases: []string{ebsNitroCase},
		}
		fd.AddEvidence(items...)
		out = append(out, fd)
	}
	return out
}
