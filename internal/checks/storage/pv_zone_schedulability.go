package storage

import (
	_ "embed"
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

//go:embed data/pv-zone-schedulability.yaml
var zonalYAML []byte

type zonalFacts struct {
	ZonalProvisioners []struct {
		Names             []string `json:"names"`
		RegionalParameter *struct {
			Key   string `json:"key"`
			Value string `json:"value"`
		} `json:"regionalParameter"`
		ZoneRedundantSkuSuffix string   `json:"zoneRedundantSkuSuffix"`
		Sources                []string `json:"sources"`
	} `json:"zonalProvisioners"`
	BindingModes []struct {
		What    string   `json:"what"`
		Sources []string `json:"sources"`
	} `json:"bindingModes"`
}

var loadZonal = check.Facts[zonalFacts]("zonal provisioner facts", zonalYAML)

// zonal reports whether a StorageClass provisions single-zone volumes.
func (f *zonalFacts) zonal(sc *storagev1.StorageClass) bool {
	for _, z := range f.ZonalProvisioners {
		found := false
		for _, n := range z.Names {
			found = found || n == sc.Provisioner
		}
		if !found {
			continue
		}
		if r := z.RegionalParameter; r != nil && sc.Parameters[r.Key] == r.Value {
			return false
		}
		if z.ZoneRedundantSkuSuffix != "" {
			for k, v := range sc.Parameters {
				if strings.EqualFold(k, "skuname") && strings.HasSuffix(strings.ToUpper(v), z.ZoneRedundantSkuSuffix) {
					return false
				}
			}
		}
		return true
	}
	return false
}

// Rules of pv-zone-schedulability.
const (
	ruleNoNode    = "volume-without-node"
	ruleImmediate = "immediate-zonal-class"
	ruleNodeLocal = "node-local-capacity"

	zoneCase     = "ebs-volume-zone-no-schedulable-node-2019-2021"
	capacityCase = "cluster-autoscaler-node-local-csistoragecapacity-blocks-scaleup-2026"
)

// zoneLabels are the node labels that name a zone.
var zoneLabels = []string{"topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone"}

func pvZoneSchedulabilityCheck() check.Check {
	return check.Check{
		ID:       "pv-zone-schedulability",
		Title:    "Volumes no schedulable node can attach",
		Severity: finding.High,
		Description: "Bound PersistentVolumes whose required node affinity (the zone of an EBS, PD or Azure disk; the " +
			"node of a local volume) no Ready, schedulable Node satisfies: high, since the pods that use them stay " +
			"Pending with a volume node affinity conflict; medium when a Karpenter NodePool could create a node " +
			"there, or when exactly one node is left. The consuming pods' own selectors and tolerations are not " +
			"read (kubegap keeps no pod volumes), so a node counted here may still not fit them. Medium: zonal " +
			"StorageClasses (EBS, PD, Azure Disk, from a sourced table; regional and zone-redundant parameters " +
			"excepted) with volumeBindingMode Immediate and no allowedTopologies in a cluster whose nodes span " +
			"zones: the zone is chosen before the pod is placed. Medium: CSIStorageCapacity objects scoped to " +
			"one node (kubernetes.io/hostname) while cluster-autoscaler runs: the autoscaler cannot tell that a " +
			"new node would have capacity, so such pods may never trigger a scale-up. Cluster-autoscaler node " +
			"groups that scale from zero are not visible.",
		Reads: []check.Input{{Resource: snapshot.PersistentVolumes}, {Resource: snapshot.Nodes}, {Resource: snapshot.StorageClasses},
			{Resource: snapshot.CSIStorageCapacities}, {Resource: snapshot.Deployments}, check.Optional(snapshot.KarpenterNodePools)},
		Rules: []check.Rule{
			{ID: ruleNoNode, Summary: "Bound volumes whose node affinity no Ready, schedulable node satisfies",
				Needs: []snapshot.Resource{snapshot.PersistentVolumes, snapshot.Nodes}},
			{ID: ruleImmediate, Summary: "Zonal StorageClasses binding immediately in a multi-zone cluster",
				Needs: []snapshot.Resource{snapshot.StorageClasses, snapshot.Nodes}},
			{ID: ruleNodeLocal, Summary: "Node-local CSIStorageCapacity with cluster-autoscaler",
				Needs: []snapshot.Resource{snapshot.CSIStorageCapacities, snapshot.Deployments}},
		},
		Cases: check.Prevents(zoneCase, capacityCase),
		Run:   runPVZone,
	}
}

func runPVZone(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadZonal()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	if len(s.PersistentVolumes)+len(s.StorageClasses)+len(s.CSIStorageCapacities) == 0 && !ctx.Present(snapshot.PersistentVolumes) &&
		!ctx.Present(snapshot.StorageClasses) && !ctx.Present(snapshot.CSIStorageCapacities) {
		return nil, check.NotEvaluated("the input has no PersistentVolumes, StorageClasses or CSIStorageCapacities")
	}
	var usable []*corev1.Node
	zones := map[string]bool{}
	// zoneLabel is, by node position, which of zoneLabels named the
	// node's zone (-1: none); the nodes are quoted by it only when a
	// finding needs them, not a field path and a group entry per node.
	zoneLabel := make([]int8, len(s.Nodes))
	for i := range s.Nodes {
		n := &s.Nodes[i]
		zoneLabel[i] = -1
		for li, l := range zoneLabels {
			if z := n.Labels[l]; z != "" {
				zones[z] = true
				zoneLabel[i] = int8(li)
				break
			}
		}
		if check.NodeReady(n) == corev1.ConditionTrue && !n.Spec.Unschedulable {
			usable = append(usable, n)
		}
	}
	zoneItems := func() []finding.EvidenceItem {
		var zoneOf finding.Grouper // nodes by the zone label they carry
		for i := range s.Nodes {
			if li := zoneLabel[i]; li >= 0 {
				n, l := &s.Nodes[i], zoneLabels[li]
				zoneOf.Add(check.NodeRef(n.Name), finding.Value("metadata.labels["+l+"]", n.Labels[l]))
			}
		}
		return zoneOf.Items()
	}
	var out []finding.Finding
	out = append(out, volumeFindings(ctx, s, usable)...)
	out = append(out, immediateFindings(ctx, facts, s, zones, zoneItems)...)
	out = append(out, nodeLocalCapacityFindings(ctx, s)...)
	return out, nil
}

// volumeFindings judges bound volumes. Volumes with the same node affinity
// are judged once: at 10,000 volumes in three zones that is three passes
// over the nodes, not 10,000.
func volumeFindings(ctx *check.Context, s *snapshot.Snapshot, usable []*corev1.Node) []finding.Finding {
	type verdict struct {
		matching  int
		karpenter string
		zones     []string
	}
	pools := karpenterZones(s)
	cache := map[string]*verdict{}
	var key []byte // each volume's selectorKey, in one reused buffer
	var none, one []*corev1.PersistentVolume
	for i := range s.PersistentVolumes {
		pv := &s.PersistentVolumes[i]
		if pv.Spec.ClaimRef == nil || pv.Status.Phase == corev1.VolumeReleased || pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
			continue
		}
		key = selectorKey(key[:0], pv.Spec.NodeAffinity.Required)
		v := cache[string(key)] // looked up without a string per volume
		if v == nil {
			v = &verdict{zones: affinityZones(pv.Spec.NodeAffinity.Required)}
			for _, n := range usable {
				if matchesSelector(pv.Spec.NodeAffinity.Required, n) {
					v.matching++
					if v.matching > 1 {
						break
					}
				}
			}
			v.karpenter = pools.covering(v.zones)
			cache[string(key)] = v
		}
		switch v.matching {
		case 0:
			none = append(none, pv)
		case 1:
			one = append(one, pv)
		}
	}
	if !ctx.Complete(snapshot.Nodes) {
		if len(none)+len(one) > 0 {
			ctx.Incomplete(ruleNoNode, "the input does not hold every Node: volumes without a matching node in it may have one")
		}
		return nil
	}
	var out []finding.Finding
	for _, group := range []struct {
		pvs []*corev1.PersistentVolume
		sev finding.Severity
		how string
	}{{none, finding.High, "no Ready, schedulable node"}, {one, finding.Medium, "only one Ready, schedulable node"}} {
		if len(group.pvs) == 0 {
			continue
		}
		sev := group.sev
		var objs []finding.ObjectRef
		var ev []string
		var items []finding.EvidenceItem
		for _, pv := range group.pvs {
			key = selectorKey(key[:0], pv.Spec.NodeAffinity.Required)
			v := cache[string(key)]
			if v.karpenter != "" && group.sev == finding.High {
				sev = finding.Medium
			}
			if len(objs) < check.MaxListedObjects {
				objs = append(objs, check.Ref("v1", "PersistentVolume", pv))
			}
			if len(ev) < check.MaxEvidence {
				line := fmt.Sprintf("PersistentVolume %s, bound to %s/%s, needs a node with %s",
					pv.Name, pv.Spec.ClaimRef.Namespace, pv.Spec.ClaimRef.Name, describeSelector(pv.Spec.NodeAffinity.Required))
				if v.karpenter != "" {
					line += "; Karpenter NodePool " + v.karpenter + " could create one there"
				}
				ev = append(ev, line)
				items = append(items, finding.Quote(check.Ref("v1", "PersistentVolume", pv),
					finding.Value("spec.claimRef.namespace", pv.Spec.ClaimRef.Namespace),
					finding.Value("spec.claimRef.name", pv.Spec.ClaimRef.Name),
					finding.Value("spec.nodeAffinity.required", finding.JSONText(pv.Spec.NodeAffinity.Required))))
			}
		}
		if sev != group.sev {
			// Mixed: keep high when any volume has no NodePool either.
			for _, pv := range group.pvs {
				key = selectorKey(key[:0], pv.Spec.NodeAffinity.Required)
				if cache[string(key)].karpenter == "" {
					sev = group.sev
				}
			}
		}
		ev = append(ev, fmt.Sprintf("%d of %d Nodes are Ready and schedulable", len(usable), len(s.Nodes)))
		f := finding.Finding{
			Check: "pv-zone-schedulability", Severity: sev,
			Title: fmt.Sprintf("%s can be attached on %s", check.Plural(len(group.pvs), "bound volume", "bound volumes"), group.how),
			Message: "A volume can only be used from nodes its node affinity allows (for a zonal disk, its zone). When " +
				"none of those nodes is Ready and schedulable, pods using it stay Pending with a volume node affinity " +
				"conflict; with one left, the next drain or failure there does it. Cluster-autoscaler node groups that " +
				"scale from zero in that zone are not visible to this check.",
			Objects:     objs,
			Evidence:    ev,
			Remediation: "Keep schedulable capacity in every zone that holds volumes (a node group per zone, or a NodePool allowing the zone), or move the data to a volume in a zone with nodes.",
			Cases:       []string{zoneCase},
		}
		// The volumes, then every node's Ready status and cordon, grouped:
		// what the count of Ready, schedulable nodes is made of.
		f.AddEvidence(items...)
		f.AddEvidence(check.NodeValues(nodePtrs(s.Nodes), readyAndCordon)...)
		out = append(out, f)
	}
	return out
}

func nodePtrs(nodes []corev1.Node) []*corev1.Node {
	out := make([]*corev1.Node, len(nodes))
	for i := range nodes {
		out[i] = &nodes[i]
	}
	return out
}

// readyAndCordon quotes a node's Ready condition (absent when it has none)
// and spec.unschedulable when it is set.
func readyAndCordon(n *corev1.Node) []finding.Field {
	const ready = "status.conditions[type=Ready].status"
	fs := []finding.Field{finding.Absent(ready)}
	if st := check.NodeReady(n); st != "" {
		fs[0] = finding.Value(ready, string(st))
	}
	if n.Spec.Unschedulable {
		fs = append(fs, finding.Value("spec.unschedulable", true))
	}
	return fs
}

func immediateFindings(ctx *check.Context, facts *zonalFacts, s *snapshot.Snapshot, zones map[string]bool, zoneItems func() []finding.EvidenceItem) []finding.Finding {
	if len(zones) < 2 {
		if !ctx.Complete(snapshot.Nodes) {
			ctx.Incomplete(ruleImmediate, "the Nodes in the input span %d zones; other Nodes may span more", len(zones))
		}
		return nil
	}
	var objs []finding.ObjectRef
	var ev []string
	var items []finding.EvidenceItem
	for i := range s.StorageClasses {
		sc := &s.StorageClasses[i]
		immediate := sc.VolumeBindingMode == nil || *sc.VolumeBindingMode == storagev1.VolumeBindingImmediate
		if !immediate || len(sc.AllowedTopologies) > 0 || !facts.zonal(sc) {
			continue
		}
		objs = append(objs, check.Ref("storage.k8s.io/v1", "StorageClass", sc))
		mode := "Immediate"
		if sc.VolumeBindingMode == nil {
			mode = "unset (Immediate)"
		}
		ev = append(ev, fmt.Sprintf("StorageClass %s: provisioner %s, volumeBindingMode %s, no allowedTopologies", sc.Name, sc.Provisioner, mode))
		modeField := finding.Absent("volumeBindingMode")
		if sc.VolumeBindingMode != nil {
			modeField = finding.Value("volumeBindingMode", string(*sc.VolumeBindingMode))
		}
		items = append(items, finding.Quote(objs[len(objs)-1], finding.Value("provisioner", sc.Provisioner), modeField,
			finding.Absent("allowedTopologies")))
	}
	if len(objs) == 0 {
		return nil
	}
	zl := make([]string, 0, len(zones))
	for z := range zones {
		zl = append(zl, z)
	}
	sort.Strings(zl)
	ev = append(ev, "Nodes span zones "+check.ListText(zl, 10), facts.BindingModes[0].What+"; sources: "+strings.Join(facts.BindingModes[0].Sources, " "))
	f := finding.Finding{
		Check: "pv-zone-schedulability", Severity: finding.Medium,
		Title: fmt.Sprintf("%s provision zonal volumes before their pods are placed", check.Plural(len(objs), "StorageClass", "StorageClasses")),
		Message: "With Immediate binding a zonal volume's zone is picked when the claim is created, without regard to where " +
			"its pod can run; in a multi-zone cluster the pod may then fit no node in that zone and stay Pending.",
		Objects:     objs,
		Evidence:    ev,
		Remediation: "Use volumeBindingMode WaitForFirstConsumer for zonal StorageClasses (or restrict them with allowedTopologies).",
		Cases:       []string{zoneCase},
	}
	f.AddEvidence(items...)
	f.AddEvidence(zoneItems()...)
	return []finding.Finding{f}
}

func nodeLocalCapacityFindings(ctx *check.Context, s *snapshot.Snapshot) []finding.Finding {
	// The cluster-autoscaler's container image, quoted.
	var autoscaler *finding.EvidenceItem
	for i := range s.Deployments {
		d := &s.Deployments[i]
		for j := range d.Spec.Template.Spec.Containers {
			c := &d.Spec.Template.Spec.Containers[j] // by index: not a copy of every container
			if check.ImageName(c.Image) == "cluster-autoscaler" {
				it := finding.Quote(check.Ref("apps/v1", "Deployment", d),
					finding.Value(check.ContainerField("Deployment", "", c.Name, "image"), c.Image))
				autoscaler = &it
			}
		}
	}
	byDriver := map[string][]*storagev1.CSIStorageCapacity{}
	for i := range s.CSIStorageCapacities {
		c := &s.CSIStorageCapacities[i]
		if c.NodeTopology != nil && c.NodeTopology.MatchLabels["kubernetes.io/hostname"] != "" {
			byDriver[c.StorageClassName] = append(byDriver[c.StorageClassName], c)
		}
	}
	if len(byDriver) == 0 {
		return nil
	}
	if autoscaler == nil {
		if !ctx.Complete(snapshot.Deployments) {
			ctx.Incomplete(ruleNodeLocal, "node-local capacity objects exist and the input does not hold every Deployment: cluster-autoscaler may run")
		}
		return nil
	}
	classes := make([]string, 0, len(byDriver))
	for c := range byDriver {
		classes = append(classes, c)
	}
	sort.Strings(classes)
	var objs []finding.ObjectRef
	var ev []string
	scoped := 0
	// Each capacity object's class and node: the node differs from object
	// to object, so each is its own item.
	var items []finding.EvidenceItem
	for _, cls := range classes {
		caps := byDriver[cls]
		scoped += len(caps)
		for _, c := range caps {
			ref := check.Ref("storage.k8s.io/v1", "CSIStorageCapacity", c)
			if len(objs) < check.MaxListedObjects {
				objs = append(objs, ref)
			}
			if len(items) < check.MaxEvidence {
				items = append(items, finding.Quote(ref, finding.Value("storageClassName", c.StorageClassName),
					finding.Value("nodeTopology.matchLabels[kubernetes.io/hostname]", c.NodeTopology.MatchLabels["kubernetes.io/hostname"])))
			}
		}
		ev = append(ev, fmt.Sprintf("StorageClass %s: %d CSIStorageCapacity objects scoped to one node each (kubernetes.io/hostname)", cls, len(caps)))
	}
	f := finding.Finding{
		Check: "pv-zone-schedulability", Severity: finding.Medium,
		Title: "Node-local storage capacity with cluster-autoscaler: pods with such volumes may never scale up",
		Message: "Capacity published per node says nothing about a node that does not exist yet, so cluster-autoscaler's " +
			"simulation finds no storage on a new node and does not add one for pods waiting on these StorageClasses.",
		Objects:     objs,
		Remediation: "Publish capacity for node-group topologies the autoscaler can template, or keep enough existing nodes with free local capacity; check the driver's and autoscaler's guidance.",
		Cases:       []string{capacityCase},
	}
	f.AddEvidence(*autoscaler)
	f.Evidence = append(f.Evidence, ev...)
	f.AddEvidence(items...)
	if scoped > len(items) {
		f.Evidence = append(f.Evidence, "further node-scoped capacity objects are counted above, not quoted")
	}
	return []finding.Finding{f}
}

// selectorKey appends to b an encoding of sel that two selectors share
// only when their terms, keys, operators and values are the same, in the
// same order (each string length-prefixed): the key volumeFindings groups
// volumes by, where a JSON encoding cost an allocation per volume.
func selectorKey(b []byte, sel *corev1.NodeSelector) []byte {
	num := func(n int) { // every number ends in ';', so none runs into what follows
		b = strconv.AppendInt(b, int64(n), 10)
		b = append(b, ';')
	}
	str := func(v string) {
		num(len(v))
		b = append(b, v...)
	}
	reqs := func(tag byte, rs []corev1.NodeSelectorRequirement) {
		b = append(b, tag)
		num(len(rs))
		for i := range rs {
			r := &rs[i]
			str(r.Key)
			str(string(r.Operator))
			num(len(r.Values))
			for _, v := range r.Values {
				str(v)
			}
		}
	}
	num(len(sel.NodeSelectorTerms))
	for i := range sel.NodeSelectorTerms {
		reqs('e', sel.NodeSelectorTerms[i].MatchExpressions)
		reqs('f', sel.NodeSelectorTerms[i].MatchFields)
	}
	return b
}

// matchesSelector reports whether a node satisfies a required node
// selector: any term whose expressions and fields all match.
func matchesSelector(sel *corev1.NodeSelector, n *corev1.Node) bool {
	for _, t := range sel.NodeSelectorTerms {
		if len(t.MatchExpressions)+len(t.MatchFields) == 0 {
			continue // an empty term matches nothing
		}
		ok := true
		for _, r := range t.MatchExpressions {
			v, has := n.Labels[r.Key]
			ok = ok && requirementMatches(r, v, has)
		}
		for _, r := range t.MatchFields {
			ok = ok && r.Key == "metadata.name" && requirementMatches(r, n.Name, true)
		}
		if ok {
			return true
		}
	}
	return false
}

func requirementMatches(r corev1.NodeSelectorRequirement, v string, has bool) bool {
	in := func() bool {
		for _, x := range r.Values {
			if x == v {
				return true
			}
		}
		return false
	}
	switch r.Operator {
	case corev1.NodeSelectorOpIn:
		return has && in()
	case corev1.NodeSelectorOpNotIn:
		return !has || !in()
	case corev1.NodeSelectorOpExists:
		return has
	case corev1.NodeSelectorOpDoesNotExist:
		return !has
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if !has || len(r.Values) != 1 {
			return false
		}
		a, err1 := strconv.ParseInt(v, 10, 64)
		b, err2 := strconv.ParseInt(r.Values[0], 10, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		return r.Operator == corev1.NodeSelectorOpGt && a > b || r.Operator == corev1.NodeSelectorOpLt && a < b
	}
	return false
}

func describeSelector(sel *corev1.NodeSelector) string {
	var terms []string
	for _, t := range sel.NodeSelectorTerms {
		var parts []string
		for _, r := range t.MatchExpressions {
			parts = append(parts, fmt.Sprintf("%s %s %s", r.Key, r.Operator, strings.Join(r.Values, ",")))
		}
		for _, r := range t.MatchFields {
			parts = append(parts, fmt.Sprintf("%s %s %s", r.Key, r.Operator, strings.Join(r.Values, ",")))
		}
		terms = append(terms, strings.Join(parts, " and "))
	}
	return strings.Join(terms, " or ")
}

// affinityZones are the zones a selector's In requirements on zone keys name.
func affinityZones(sel *corev1.NodeSelector) []string {
	var out []string
	for _, t := range sel.NodeSelectorTerms {
		for _, r := range t.MatchExpressions {
			if strings.Contains(r.Key, "zone") && r.Operator == corev1.NodeSelectorOpIn {
				out = append(out, r.Values...)
			}
		}
	}
	return out
}

// nodePools are Karpenter NodePools and the zones they may create nodes in
// (nil: any zone).
type nodePools []struct {
	name  string
	zones map[string]bool
}

func karpenterZones(s *snapshot.Snapshot) nodePools {
	var out nodePools
	for _, np := range s.CustomObjects(snapshot.KarpenterNodePools) {
		reqs, _, _ := unstructuredSlice(np.Object, "spec", "template", "spec", "requirements")
		var zones map[string]bool
		for _, r := range reqs {
			m, ok := r.(map[string]any)
			if !ok || m["key"] != "topology.kubernetes.io/zone" || m["operator"] != "In" {
				continue
			}
			zones = map[string]bool{}
			vals, _ := m["values"].([]any)
			for _, v := range vals {
				if z, ok := v.(string); ok {
					zones[z] = true
				}
			}
		}
		out = append(out, struct {
			name  string
			zones map[string]bool
		}{np.GetName(), zones})
	}
	return out
}

// covering names a NodePool that may create a node in one of zones.
func (ps nodePools) covering(zones []string) string {
	if len(zones) == 0 {
		return ""
	}
	for _, p := range ps {
		if p.zones == nil {
			return p.name
		}
		for _, z := range zones {
			if p.zones[z] {
				return p.name
			}
		}
	}
	return ""
}

func unstructuredSlice(obj map[string]any, fields ...string) ([]any, bool, error) {
	return unstructured.NestedSlice(obj, fields...)
}
