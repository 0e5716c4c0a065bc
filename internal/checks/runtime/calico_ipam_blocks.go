package runtime

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	calicoIPAMID        = "calico-ipam-blocks"
	ruleStrandedBlocks  = "stranded-block-affinities"
	rulePoolBlocksTaken = "pool-blocks-claimed"
	calicoIPAMCase      = "calico-ipam-blocks-leaked-pool-exhausted-2019-2021"
	// defaultIPv4BlockSize is an IPPool's blockSize when unset: 26 for IPv4
	// pools (Calico's IPPool reference,
	// https://docs.tigera.io/calico/latest/reference/resources/ippool).
	defaultIPv4BlockSize = 26
)

// Policy, not fact: where the check speaks. The 2019 pool failed with
// 32,671 of its 32,768 blocks held for departed hosts; these sit well
// below that.
const (
	claimedWarnPercent  = 75
	claimedHighPercent  = 90
	strandedHighPercent = 10
)

func calicoIPAMBlocksCheck() check.Check {
	return check.Check{
		ID:       calicoIPAMID,
		Title:    "Calico IPAM blocks held for deleted nodes, or an IP pool with few free blocks left",
		Severity: finding.High,
		Description: "Reads Calico's BlockAffinities (crd.projectcalico.org, Kubernetes datastore mode) and IPPools. A " +
			"block stays affine to the node that claimed it until kube-controllers releases a deleted node's IPAM state; " +
			"affinities whose spec.node names no current Node are stranded (medium; high when they hold 10 percent of " +
			"the enabled IPv4 pools' blocks or more). The affinities whose spec.cidr lies in an enabled IPv4 pool are " +
			"also counted against those pools' capacity in " +
			"blocks (2^(blockSize - prefix length), blockSize 26 when unset): medium from 75 percent claimed, high " +
			"from 90, since a new node that finds no free block cannot give its pods addresses. Address counts do not " +
			"show this: a pool can run out of blocks with few addresses in use. In etcd datastore mode the IPAM state " +
			"is not in the Kubernetes API and the check has nothing to read.",
		Reads: []check.Input{check.Optional(snapshot.CalicoBlockAffinities), check.Optional(snapshot.CalicoIPPools),
			check.Optional(snapshot.Nodes)},
		Rules: []check.Rule{
			{ID: ruleStrandedBlocks, Summary: "no Calico block affinity belongs to a node that no longer exists",
				Needs: []snapshot.Resource{snapshot.CalicoBlockAffinities, snapshot.Nodes}},
			{ID: rulePoolBlocksTaken, Summary: "Calico's enabled IPv4 pools keep free blocks for new nodes",
				Needs: []snapshot.Resource{snapshot.CalicoBlockAffinities, snapshot.CalicoIPPools}},
		},
		Cases: check.Cite(check.Prevents(calicoIPAMCase)),
		Run:   runCalicoIPAMBlocks,
	}
}

// poolCapacity is an enabled IPv4 IPPool and the blocks it holds.
type poolCapacity struct {
	ref    finding.ObjectRef
	fields []finding.Field
	prefix netip.Prefix
	blocks int
}

// holds reports whether block lies within the pool: an affinity for a
// block of a disabled or removed pool does not take one of this pool's.
func (p poolCapacity) holds(block netip.Prefix) bool {
	return block.IsValid() && block.Bits() >= p.prefix.Bits() && p.prefix.Contains(block.Addr())
}

// blockAffinity is one BlockAffinity's node and CIDR.
type blockAffinity struct {
	name, node, cidr string
	prefix           netip.Prefix
}

func runCalicoIPAMBlocks(ctx *check.Context) ([]finding.Finding, error) {
	s := ctx.Snapshot
	objs := s.CustomObjects(snapshot.CalicoBlockAffinities)
	if len(objs) == 0 {
		// Calico absent, or in etcd datastore mode: nothing to judge. A
		// resource that was not read leaves the rules unknown through
		// their Needs.
		return nil, nil
	}
	var affs []blockAffinity
	for _, o := range objs {
		spec := func(k string) string { v, _, _ := unstructured.NestedString(o.Object, "spec", k); return v }
		// Affinities being deleted, and ones not held for a host (newer
		// Calico types them), do not strand a block for a node.
		if spec("deleted") == "true" || (spec("type") != "" && spec("type") != "host") {
			continue
		}
		a := blockAffinity{name: o.GetName(), node: spec("node"), cidr: spec("cidr")}
		a.prefix, _ = netip.ParsePrefix(a.cidr)
		affs = append(affs, a)
	}
	capacity, pools := ipv4BlockCapacity(s)
	var out []finding.Finding
	if f, ok := strandedAffinities(ctx, affs, capacity); ok {
		out = append(out, f)
	}
	if f, ok := claimedBlocks(ctx, affs, capacity, pools); ok {
		out = append(out, f)
	}
	return out, nil
}

// ipv4BlockCapacity is the number of blocks the enabled IPv4 IPPools hold,
// and the pools counted.
func ipv4BlockCapacity(s *snapshot.Snapshot) (int, []poolCapacity) {
	total := 0
	var pools []poolCapacity
	for _, p := range s.CustomObjects(snapshot.CalicoIPPools) {
		disabled, _, _ := unstructured.NestedBool(p.Object, "spec", "disabled")
		cidr, _, _ := unstructured.NestedString(p.Object, "spec", "cidr")
		prefix, err := netip.ParsePrefix(cidr)
		if disabled || err != nil || !prefix.Addr().Is4() {
			continue
		}
		size := int64(defaultIPv4BlockSize)
		sizeField := finding.Absent("spec.blockSize")
		if bs, found, _ := unstructured.NestedInt64(p.Object, "spec", "blockSize"); found {
			size, sizeField = bs, finding.Value("spec.blockSize", bs)
		}
		if int(size) < prefix.Bits() || size > 32 {
			continue
		}
		blocks := 1 << (int(size) - prefix.Bits())
		total += blocks
		pools = append(pools, poolCapacity{
			ref:    finding.ObjectRef{APIVersion: "crd.projectcalico.org/v1", Kind: "IPPool", Name: p.GetName()},
			fields: []finding.Field{finding.Value("spec.cidr", cidr), sizeField},
			prefix: prefix.Masked(),
			blocks: blocks,
		})
	}
	return total, pools
}

func strandedAffinities(ctx *check.Context, affs []blockAffinity, capacity int) (finding.Finding, bool) {
	s := ctx.Snapshot
	if len(s.Nodes) == 0 || !ctx.Complete(snapshot.Nodes) {
		ctx.Incomplete(ruleStrandedBlocks, "the Node list was not read whole, so which affinities belong to deleted nodes is unknown")
		return finding.Finding{}, false
	}
	live := map[string]bool{}
	for i := range s.Nodes {
		live[s.Nodes[i].Name] = true
	}
	byNode := map[string][]blockAffinity{}
	n := 0
	for _, a := range affs {
		if a.node != "" && !live[a.node] {
			byNode[a.node] = append(byNode[a.node], a)
			n++
		}
	}
	if n == 0 {
		return finding.Finding{}, false
	}
	nodes := make([]string, 0, len(byNode))
	for node := range byNode {
		nodes = append(nodes, node)
	}
	sort.Strings(nodes)
	f := finding.Finding{Check: calicoIPAMID, Rule: ruleStrandedBlocks, Severity: finding.Medium, Cases: []string{calicoIPAMCase}}
	var g finding.Grouper
	for _, node := range nodes {
		for _, a := range byNode[node] {
			if len(f.Objects) == check.MaxListedObjects {
				break
			}
			ref := finding.ObjectRef{APIVersion: "crd.projectcalico.org/v1", Kind: "BlockAffinity", Name: a.name}
			f.Objects = append(f.Objects, ref)
			g.Add(ref, finding.Value("spec.node", a.node))
		}
	}
	f.AddEvidence(g.Items()...)
	f.Evidence = append(f.Evidence, fmt.Sprintf("%d BlockAffinities name %d nodes absent from the %d in the Node list (the first %d listed)",
		n, len(nodes), len(s.Nodes), len(f.Objects)))
	share := ""
	if capacity > 0 {
		share = fmt.Sprintf(", %d%% of the %d blocks the enabled IPv4 pools hold", n*100/capacity, capacity)
		if n*100 >= strandedHighPercent*capacity {
			f.Severity = finding.High
		}
	}
	f.Title = fmt.Sprintf("%s of Calico IPAM are held for %s no longer in the cluster",
		check.Plural(n, "block", "blocks"), check.Plural(len(nodes), "node", "nodes"))
	f.Message = fmt.Sprintf("%s name a node the Node list does not hold (%s%s). Calico's kube-controllers release a deleted "+
		"node's blocks; when that fails (a release error, tunnel addresses left behind, or no kube-controllers in "+
		"Kubernetes datastore mode) every scale-down strands blocks, and once the pool has no unclaimed block a new node "+
		"cannot give its pods addresses: calico-node crash-loops or pods fail with \"pools are likely exhausted\". A "+
		"cluster that scaled down several times a day reached 32,671 stranded blocks of 32,768.",
		check.Plural(n, "BlockAffinity", "BlockAffinities"), nodeList(nodes, 5), share)
	f.Remediation = "Check that calico-kube-controllers runs and that its logs show deleted nodes' IPAM state being " +
		"released; then release the stranded state (calicoctl ipam check, and calicoctl ipam release as its report " +
		"says), drain nodes before deleting them, and keep Calico on a release without the known cleanup bugs."
	return f, true
}

func claimedBlocks(ctx *check.Context, affs []blockAffinity, capacity int, pools []poolCapacity) (finding.Finding, bool) {
	if !ctx.Complete(snapshot.CalicoIPPools) {
		ctx.Incomplete(rulePoolBlocksTaken, "Calico IPPools were not read whole, so the pools' block capacity is unknown")
		return finding.Finding{}, false
	}
	if capacity == 0 {
		return finding.Finding{}, false
	}
	claimed := 0
	for _, a := range affs {
		for _, p := range pools {
			if p.holds(a.prefix) {
				claimed++
				break
			}
		}
	}
	pct := claimed * 100 / capacity
	if pct < claimedWarnPercent {
		return finding.Finding{}, false
	}
	sev := finding.Medium
	if pct >= claimedHighPercent {
		sev = finding.High
	}
	f := finding.Finding{Check: calicoIPAMID, Rule: rulePoolBlocksTaken, Severity: sev, Cases: []string{calicoIPAMCase}}
	var g finding.Grouper
	for _, p := range pools {
		f.Objects = append(f.Objects, p.ref)
		g.Add(p.ref, p.fields...)
	}
	f.AddEvidence(g.Items()...)
	f.Title = fmt.Sprintf("%d of the %d blocks in Calico's enabled IPv4 pools are claimed (%d%%)", claimed, capacity, pct)
	f.Message = fmt.Sprintf("Calico hands each node whole blocks from its IP pools; %d BlockAffinities hold %d%% of the "+
		"%d blocks the enabled IPv4 pools have (medium from %d%%, high from %d%%). A node that finds no unclaimed block "+
		"cannot allocate addresses for its pods, however few addresses are in use.", claimed, pct, capacity,
		claimedWarnPercent, claimedHighPercent)
	f.Evidence = append(f.Evidence, fmt.Sprintf("%d BlockAffinities with a spec.cidr inside those pools; capacity %d blocks from %s",
		claimed, capacity, check.Plural(len(pools), "enabled IPv4 IPPool", "enabled IPv4 IPPools")))
	f.Remediation = "Release blocks held for deleted nodes first (see the stranded-block-affinities rule); if the " +
		"blocks are genuinely in use, add an IP pool, or plan a larger pool or a smaller blockSize for new pools " +
		"(blockSize cannot be changed on an existing pool)."
	return f, true
}

// nodeList names the first n nodes and counts the rest.
func nodeList(nodes []string, n int) string {
	if len(nodes) <= n {
		return strings.Join(nodes, ", ")
	}
	return strings.Join(nodes[:n], ", ") + fmt.Sprintf(" and %d more", len(nodes)-n)
}
