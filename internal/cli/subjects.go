package cli

import (
	"strings"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/report/text"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// findingSubjects names what each finding is about, for the text report's
// index: the node pool when every object is a Node of one pool (by the
// pool labels of AKS, EKS, GKE and Karpenter, check.NodePool), else the
// finding's first object. A finding about nodes of several pools, or of
// nodes whose pool no label names, is about no one subject.
func findingSubjects(snap *snapshot.Snapshot) func(finding.Finding) string {
	pools := map[string]string{}
	if snap != nil {
		for i := range snap.Nodes {
			pools[snap.Nodes[i].Name] = check.NodePool(&snap.Nodes[i])
		}
	}
	return func(f finding.Finding) string {
		pool, nodes := "", 0
		for _, o := range f.Objects {
			if o.Kind != "Node" {
				return text.FirstObject(f)
			}
			p := pools[o.Name]
			if p == "" || (pool != "" && p != pool) {
				pool = "-"
			} else if pool == "" {
				pool = p
			}
			nodes++
		}
		switch {
		case nodes == 1 && pool == "-":
			return text.FirstObject(f)
		case pool == "-" || pool == "":
			return ""
		}
		label, value, _ := strings.Cut(pool, "=")
		return "node pool " + value + " (" + label + ")"
	}
}
