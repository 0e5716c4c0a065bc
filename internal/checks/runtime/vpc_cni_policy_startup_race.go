package runtime

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	vpcCNIPolicyRaceID   = "vpc-cni-policy-startup-race"
	ruleVPCCNIPolicyRace = "policy-agent-before-startup-fix"
	caseVPCCNIPolicyRace = "vpc-cni-network-policy-agent-startup-race-drops-2023-2024"
	// vpcCNIAgentRepo is the node agent's image repository under any
	// registry (EKS pulls it from a regional ECR).
	vpcCNIAgentRepo = "amazon/aws-network-policy-agent"
	// vpcCNIAgentEnable is the agent's flag that turns enforcement on
	// (default false, per the agent's README).
	vpcCNIAgentEnable = "--enable-network-policy=true"
)

// vpcCNIAgentFixed is the first agent release whose tag contains pull
// request 361 ("Fix standard mode return packet drop at pod startup",
// merged 14 February 2025): v1.1.6 does not contain the merge commit,
// v1.2.0 (20 February 2025) does.
var vpcCNIAgentFixed = check.KubeVersion{Major: 1, Minor: 2, Patch: 0}

// vpcCNIPolicyStartupRaceCheck finds the Amazon VPC CNI's network policy
// agent enforcing NetworkPolicies on a release before the startup fix: a
// pod's connections opened before its policies are reconciled lose their
// replies, so applications that connect at startup hang or fail on every
// restart and scale-up.
func vpcCNIPolicyStartupRaceCheck() check.Check {
	return check.Check{
		ID:       vpcCNIPolicyRaceID,
		Title:    "Amazon VPC CNI policy agent that drops replies to a new pod's first connections",
		Severity: finding.Medium,
		Description: "Reads DaemonSets for a container running " + vpcCNIAgentRepo + " (the VPC CNI's node agent, in " +
			"kube-system/aws-node) with " + vpcCNIAgentEnable + ", and the NetworkPolicies it enforces. Agents before " +
			"v1.2.0, the first release with aws-network-policy-agent pull request 361, start tracking a new pod's flows " +
			"only once its policies are reconciled (one to two seconds, per the maintainers), so replies to " +
			"connections the pod opened before that are denied: users saw startup connections to RDS and STS fail " +
			"and applications hang in a read. Medium when such an agent enforces and at least one NetworkPolicy " +
			"exists, naming the agent and the policies. Cannot see: the enforcing mode (an environment variable, whose " +
			"value kubegap never reads; the race is in the default standard mode), and whether the VPC CNI side of the " +
			"fix is installed.",
		Reads: check.Needs(snapshot.DaemonSets, snapshot.NetworkPolicies),
		Rules: []check.Rule{
			{ID: ruleVPCCNIPolicyRace, Summary: "no VPC CNI policy agent older than the startup fix enforces NetworkPolicies",
				Needs: []snapshot.Resource{snapshot.DaemonSets, snapshot.NetworkPolicies}},
		},
		Cases: check.Prevents(caseVPCCNIPolicyRace),
		Run:   runVPCCNIPolicyStartupRace,
	}
}

func runVPCCNIPolicyStartupRace(ctx *check.Context) ([]finding.Finding, error) {
	s := ctx.Snapshot
	var out []finding.Finding
	for i := range s.DaemonSets {
		ds := &s.DaemonSets[i]
		for _, c := range ds.Spec.Template.Spec.Containers {
			repo, tag, _ := check.ImageParts(c.Image)
			if !strings.HasSuffix(repo, vpcCNIAgentRepo) || !slices.Contains(c.Args, vpcCNIAgentEnable) {
				continue
			}
			v, ok := check.ParseKubeVersion(tag)
			if !ok || !v.Less(vpcCNIAgentFixed) {
				continue // a release with the fix, or a tag that names no version
			}
			f, found := vpcCNIPolicyRaceFinding(ctx, check.Ref("apps/v1", "DaemonSet", ds), c.Name, c.Image, tag, c.Args)
			if found {
				out = append(out, f)
			}
		}
	}
	return out, nil
}

func vpcCNIPolicyRaceFinding(ctx *check.Context, agent finding.ObjectRef, container, image, tag string, args []string) (finding.Finding, bool) {
	s := ctx.Snapshot
	var policies []finding.ObjectRef
	for i := range s.NetworkPolicies {
		p := &s.NetworkPolicies[i]
		policies = append(policies, check.Ref("networking.k8s.io/v1", "NetworkPolicy", p))
	}
	if len(policies) == 0 {
		if !ctx.Complete(snapshot.NetworkPolicies) {
			ctx.Incomplete(ruleVPCCNIPolicyRace, "not every NetworkPolicy was read: whether %s enforces any is unknown", agent)
		}
		return finding.Finding{}, false // nothing to enforce, nothing denied
	}
	n := len(policies)
	more := 0
	if n > check.MaxListedObjects {
		policies, more = policies[:check.MaxListedObjects], n-check.MaxListedObjects
	}
	f := finding.Finding{
		Check: vpcCNIPolicyRaceID, Rule: ruleVPCCNIPolicyRace, Severity: finding.Medium, Cases: []string{caseVPCCNIPolicyRace},
		Objects: append([]finding.ObjectRef{agent}, policies...),
		Title: fmt.Sprintf("%s enforces %s with network policy agent %s, before the fix for replies to a new pod's first connections",
			agent, check.Plural(n, "NetworkPolicy", "NetworkPolicies"), tag),
		Message: fmt.Sprintf("Container %s runs %s with %s. Agents before v1.2.0 attach a new pod's probes and start "+
			"tracking its flows only once its policies are reconciled, one to two seconds after start: a connection the pod "+
			"opens before that is never entered in the agent's table, and its replies are denied once enforcement begins. "+
			"Pods selected by these policies that connect at startup (a database, STS, an API) hang or fail on each restart "+
			"and scale-up, although the policies allow the traffic.%s", container, image, vpcCNIAgentEnable, moreText(more)),
		Remediation: "Upgrade the VPC CNI (the EKS vpc-cni add-on, or the aws-node manifest) to a release whose network policy " +
			"agent is v1.2.0 or later, which carries aws-network-policy-agent pull request 361. Until then, the maintainers' " +
			"mitigation is an init container that waits 2 to 5 seconds, so nothing leaves the pod before its policies apply.",
	}
	field := "spec.template.spec.containers[name=" + container + "]."
	f.AddEvidence(finding.Quote(agent, finding.Value(field+"image", image), finding.Value(field+"args", finding.JSONText(args))))
	return f, true
}

func moreText(more int) string {
	if more == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d more NetworkPolicies are not listed)", more)
}
